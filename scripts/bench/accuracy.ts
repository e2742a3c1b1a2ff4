/**
 * Recognition accuracy benchmark: per clip, word error rate, word onset error against espeak-ng's
 * word events (median and p90), words stamped inside the inserted pauses, and recognition wall
 * time as a ratio of the audio duration (RTF), over several rounds: every figure is printed as the
 * median over the rounds with its spread (min-max), and the load average before and after.
 *
 * Clips: ../shared/media/en.wav plus the clips of packages/transcriber/test/clips.ts (English read
 * with and without three 2.5 s pauses, Spanish with a 6 s pause, German over music, French over
 * noise), made with espeak-ng and sox into a temp dir, each with its own espeak-ng voice variant,
 * rate and pitch.
 *
 *   npm run bench:accuracy -- [--model PATH] [--threads 2] [--runs 3] [--given-language] [--onsets tts|whisper] [--timing dtw|token] [--beam N] [--clip NAME]...
 *
 * Default: no language given (detected, as a user who sets none), 2 threads, 3 rounds, word
 * starts refined by TTS alignment (the transcriber's default; `--onsets whisper` for whisper's
 * times alone); `--timing dtw|token` for whisper's own starts (default: the transcriber's);
 * `--beam N` for the beam size (1: greedy; default: the transcriber's).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { testModelPath, createTranscriber, onsetErrorsMs, percentile, resolveWhisperBinDir, wordErrorRate } from '../../packages/transcriber/src/index.ts';
import { CLIPS, makeClip, sharedEnClip, wordsInSilence, type Clip } from '../../packages/transcriber/test/clips.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: testModelPath() },
    threads: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    'given-language': { type: 'boolean', default: false },
    onsets: { type: 'string', default: 'tts' },
    timing: { type: 'string' },
    beam: { type: 'string' },
    clip: { type: 'string', multiple: true },
    media: { type: 'string', default: new URL('../../../shared/media/', import.meta.url).pathname },
  },
});
const threads = Number(values.threads);
if (values.onsets !== 'tts' && values.onsets !== 'whisper') throw new Error('--onsets is tts or whisper');
const onsets = values.onsets;
if (values.timing !== undefined && values.timing !== 'dtw' && values.timing !== 'token') throw new Error('--timing is dtw or token');
const timing = values.timing;
const runs = Number(values.runs);
const beamSize = values.beam === undefined ? undefined : Number(values.beam);
if (beamSize !== undefined && !(Number.isInteger(beamSize) && beamSize >= 1)) throw new Error('--beam is a whole number >= 1');
const work = mkdtempSync(join(tmpdir(), 'bench-accuracy-'));
const wanted = (name: string) => !values.clip || values.clip.includes(name);
const clips: Clip[] = wanted('en.wav') ? [await sharedEnClip(values.media)] : [];
// One clip at a time, as before: each is a chain of espeak-ng, sox and ffmpeg runs.
for (const c of CLIPS.filter((c) => wanted(c.name))) clips.push(await makeClip(c, work));

const transcriber = createTranscriber({
  model: values.model,
  threads,
  binDir: resolveWhisperBinDir(),
  onsets,
  ...(timing ? { timing } : {}),
  ...(beamSize ? { beamSize } : {}),
});
await transcriber.warmUp();

interface Row {
  wer: number[];
  onsets: number[][];
  inSilence: number[];
  rtf: number[];
  language: string[];
}
/** Median over the rounds with the spread: "12.3 (11.0-14.1)". */
const range = (xs: number[], digits: number, scale = 1) => {
  const s = [...xs].sort((a, b) => a - b).map((x) => (x * scale).toFixed(digits));
  return `${(percentile(xs, 50) * scale).toFixed(digits)} (${s[0]}-${s.at(-1)})`;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(
  `model ${values.model}, ${threads} threads, ${runs} rounds, language ${values['given-language'] ? 'given' : 'detected'}, onsets ${onsets}, timing ${timing ?? 'default'}, beam ${beamSize ?? 'default'}, OMP_WAIT_POLICY=${process.env.OMP_WAIT_POLICY ?? '(unset)'}, load average ${load()}`,
);
console.log('Each figure: median over the rounds (min-max). RTF: recognition wall time / audio duration.');
console.log('| clip | audio s | WER % | onset median ms | onset p90 ms | words in silence | RTF (wall / audio) | language |');
console.log('|---|---|---|---|---|---|---|---|');
/** Every round's onset errors over all clips, pooled per round. */
const pooled: number[][] = Array.from({ length: runs }, () => []);
// Clip by clip, all rounds of one clip in a row, so that each row prints as soon as it is measured.
for (const clip of clips) {
  const r: Row = { wer: [], onsets: [], inSilence: [], rtf: [], language: [] };
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const result = await transcriber.transcribe({ audioPath: clip.path, ...(values['given-language'] ? { language: clip.language } : {}) });
    const seconds = (performance.now() - started) / 1000;
    r.rtf.push(seconds / clip.duration);
    r.wer.push(wordErrorRate(clip.text, result.words.map((w) => w.text).join(' ')));
    r.onsets.push(onsetErrorsMs(clip.onsets, result.words));
    pooled[run]!.push(...r.onsets.at(-1)!);
    r.inSilence.push(wordsInSilence(result.words, clip.silences));
    const probability = (result as { languageProbability?: number | null }).languageProbability;
    r.language.push(probability == null ? result.language : `${result.language} ${probability.toFixed(2)}`);
    if (run === 0) console.error(`${clip.name}: ${result.words.map((w) => w.text).join(' ')}`);
  }
  console.log(
    `| ${clip.name} | ${clip.duration.toFixed(1)} | ${range(r.wer, 1, 100)} | ${range(
      r.onsets.map((o) => percentile(o, 50)),
      0,
    )} | ${range(
      r.onsets.map((o) => percentile(o, 90)),
      0,
    )} | ${range(r.inSilence, 0)} | ${range(r.rtf, 3)} | ${[...new Set(r.language)].join(', ')} |`,
  );
}
await transcriber.close();
rmSync(work, { recursive: true, force: true });
console.log(
  `all clips pooled, per round: onset median ${range(
    pooled.map((o) => percentile(o, 50)),
    0,
  )} ms, p90 ${range(
    pooled.map((o) => percentile(o, 90)),
    0,
  )} ms over ${range(
    pooled.map((o) => o.length),
    0,
  )} words; load average ${load()}`,
);
