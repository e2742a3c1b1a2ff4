/**
 * edit-accuracy (issue 42): how well the edit planner cuts real speech, scored against word times
 * made independently of Whisper (a forced aligner's `NAME.words`: start<TAB>end<TAB>word).
 *
 * For each clip of ../shared/media/real with a .words file (and of every --dir given), the clip is
 * transcribed as the agent does it for an edited job (our transcriber: whisper.cpp base, DTW word
 * times, espeak-ng onset alignment; language en; the filler prompt appended to the vocabulary),
 * the words fitted to the source (fitWords), and planned as agent/src/edit-stage.ts plans them
 * (the voice evidence of the 16 kHz WAV, `planEvidence`) with `fillers: safe` and each silence pace.
 * Each plan is scored against the reference:
 *   (a) real words clipped: reference words that are no filler with more than 20 ms of their span
 *       inside a cut (count, total ms cut from them, each listed). A word at least 80% inside a
 *       `repeat` cut is counted apart, as removed by the repeat rule ("words words words words"
 *       keeps one), not as clipped: that is the rule's intent; the list shows which;
 *   (b) fillers removed: per reference filler (um, uh, er, erm, ah, hmm, mm and their variants)
 *       at least 30 ms long, the share of its span cut; how many are at least 80% cut (the aligner
 *       gives en_mfa_cold_corpus a 10 ms "uh" at 7.01, no sound of its own: left out);
 *   (c) pauses: the seconds cut against the reference gaps between words (lead-in and tail
 *       included), and the seconds cut from filler and word time.
 *
 *   npx tsx scripts/edit-accuracy.ts [--clips acoustic,cold] [--dir DIR]... [--fps 25] [--verbose] [--no-envelope]
 *
 * --verbose lists each plan's cuts and the recognized words; --no-envelope plans without the
 * audio's envelope (voiced regions only: the planner before the envelope, for a before/after).
 *
 * Transcriptions are cached in $TMPDIR/captionfarm-edit-accuracy, keyed by the WAV's hash, the
 * model's size and the prompt, so reruns while tuning the planner take seconds (--fresh ignores
 * the cache).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fitWords, type SilencePace, type Word } from '@captionfarm/contracts';
import type { EditPlan } from '@captionfarm/contracts';
import { type EditWord, fillerPrompt, planEdit, voiceEnvelope, voicedRegions } from '../packages/edit/src/index.ts';
import { readWavSamples } from '../packages/edit/src/wav.ts';
import { createTranscriber, testModelPath } from '../packages/transcriber/src/index.ts';

const { values } = parseArgs({
  options: {
    clips: { type: 'string' },
    dir: { type: 'string', multiple: true },
    fps: { type: 'string', default: '25' },
    threads: { type: 'string', default: '2' },
    fresh: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    'no-envelope': { type: 'boolean', default: false },
  },
});
const fps = Number(values.fps);
const PACES: SilencePace[] = ['off', 'natural', 'fast', 'extra-fast'];
/** A reference word counts as clipped when more than this much of it is cut (the aligner is good to 20-30 ms). */
const CLIP_TOLERANCE = 0.02;
/** Reference fillers shorter than this are an aligner's artefact, not a sound. */
const MIN_FILLER = 0.03;
const FILLER = /^(u+m+|u+h+m*|e+r+m*|a+h+|h+m+|m+|h+m+m*)$/;
const LANGUAGE = 'en';

interface Clip {
  name: string;
  wav: string;
  reference: EditWord[];
}

function clipsIn(dir: string): Clip[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.words') && f.startsWith('en_') && existsSync(join(dir, f.replace(/\.words$/, '.wav'))))
    .sort()
    .map((f) => {
      const name = basename(f, '.words');
      const reference = readFileSync(join(dir, f), 'utf8')
        .trim()
        .split('\n')
        .map((line) => {
          const [start, end, text] = line.split('\t');
          return { text: text!.trim(), start: Number(start), end: Number(end) };
        });
      return { name, wav: join(dir, `${name}.wav`), reference };
    });
}

const real = new URL('../../shared/media/real/', import.meta.url).pathname;
const wanted = values.clips?.split(',').map((c) => c.trim());
const clips = [real, ...(values.dir ?? [])].flatMap(clipsIn).filter((c) => !wanted || wanted.some((w) => c.name.includes(w)));
if (clips.length === 0) throw new Error('no clip with a .words file matched');

const cacheDir = join(tmpdir(), 'captionfarm-edit-accuracy');
mkdirSync(cacheDir, { recursive: true });
const model = testModelPath();
const prompt = fillerPrompt(LANGUAGE);
let transcriber: ReturnType<typeof createTranscriber> | null = null;

/** The clip's words as the agent gets them for an edited job with fillers (cached by the WAV's hash). */
async function recognized(clip: Clip, seconds: number): Promise<Word[]> {
  const key = createHash('sha256')
    .update(readFileSync(clip.wav))
    .update(`\0${statSync(model).size}\0${LANGUAGE}\0${prompt}`)
    .digest('hex')
    .slice(0, 24);
  const cached = join(cacheDir, `${clip.name}-${key}.json`);
  if (existsSync(cached) && !values.fresh) return JSON.parse(readFileSync(cached, 'utf8')) as Word[];
  transcriber ??= createTranscriber({ model, threads: Number(values.threads) });
  const started = performance.now();
  const r = await transcriber.transcribe({ audioPath: clip.wav, language: LANGUAGE, vocabulary: [prompt] });
  console.error(`${clip.name}: transcribed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const words = fitWords(r.words, seconds);
  writeFileSync(cached, JSON.stringify(words));
  return words;
}

const overlap = (spans: readonly { start: number; end: number }[], a: number, b: number) =>
  spans.reduce((s, r) => s + Math.max(0, Math.min(b, r.end) - Math.max(a, r.start)), 0);
const isFiller = (text: string) => FILLER.test(text.toLowerCase().replace(/[^a-z]/g, ''));

interface Score {
  clipped: { text: string; start: number; end: number; cutMs: number }[];
  /** Real words removed whole by a repeat cut. */
  repeats: { text: string; start: number }[];
  fillers: { text: string; start: number; share: number }[];
  /** Reference gap seconds, seconds cut in gaps, in fillers, in other words; source and output seconds. */
  gapSeconds: number;
  cutInGaps: number;
  cutInFillers: number;
  cutInWords: number;
  source: number;
  output: number;
}

function score(reference: readonly EditWord[], plan: EditPlan, source: number): Score {
  const { keep } = plan;
  const cutOf = (a: number, b: number) => b - a - overlap(keep, a, b);
  const repeatCuts = plan.cuts.filter((c) => c.reason === 'repeat');
  const clipped: Score['clipped'] = [];
  const repeats: Score['repeats'] = [];
  const fillers: Score['fillers'] = [];
  let cutInFillers = 0;
  let cutInWords = 0;
  for (const w of reference) {
    const cut = cutOf(w.start, w.end);
    if (isFiller(w.text)) {
      if (w.end - w.start < MIN_FILLER) continue;
      fillers.push({ text: w.text, start: w.start, share: w.end > w.start ? cut / (w.end - w.start) : 1 });
      cutInFillers += cut;
    } else {
      cutInWords += cut;
      if (overlap(repeatCuts, w.start, w.end) >= 0.8 * (w.end - w.start)) repeats.push({ text: w.text, start: w.start });
      else if (cut > CLIP_TOLERANCE + 1e-9) clipped.push({ ...w, cutMs: Math.round(cut * 1000) });
    }
  }
  const gaps = [
    { start: 0, end: reference[0]?.start ?? source },
    ...reference.slice(1).map((w, i) => ({ start: reference[i]!.end, end: w.start })),
    { start: reference.at(-1)?.end ?? source, end: source },
  ].filter((g) => g.end > g.start);
  const output = keep.reduce((s, r) => s + r.end - r.start, 0);
  return {
    clipped,
    repeats,
    fillers,
    gapSeconds: gaps.reduce((s, g) => s + g.end - g.start, 0),
    cutInGaps: gaps.reduce((s, g) => s + cutOf(g.start, g.end), 0),
    cutInFillers,
    cutInWords,
    source,
    output,
  };
}

const row = (label: string, pace: string, s: Score) => {
  const removed = s.fillers.filter((f) => f.share >= 0.8).length;
  const meanShare = s.fillers.length ? s.fillers.reduce((n, f) => n + f.share, 0) / s.fillers.length : 0;
  const clippedMs = s.clipped.reduce((n, c) => n + c.cutMs, 0);
  return `| ${label} | ${pace} | ${s.clipped.length} | ${clippedMs} | ${s.repeats.length} | ${removed}/${s.fillers.length} | ${(meanShare * 100).toFixed(0)} | ${s.cutInFillers.toFixed(2)} | ${s.cutInGaps.toFixed(2)} / ${s.gapSeconds.toFixed(2)} | ${s.cutInWords.toFixed(2)} | ${s.source.toFixed(2)} -> ${s.output.toFixed(2)} |`;
};

function pooled(scores: readonly Score[]): Score {
  const sum = (f: (s: Score) => number) => scores.reduce((n, s) => n + f(s), 0);
  return {
    clipped: scores.flatMap((s) => s.clipped),
    repeats: scores.flatMap((s) => s.repeats),
    fillers: scores.flatMap((s) => s.fillers),
    gapSeconds: sum((s) => s.gapSeconds),
    cutInGaps: sum((s) => s.cutInGaps),
    cutInFillers: sum((s) => s.cutInFillers),
    cutInWords: sum((s) => s.cutInWords),
    source: sum((s) => s.source),
    output: sum((s) => s.output),
  };
}

console.log(`edit-accuracy: model ${model}, language ${LANGUAGE}, fps ${fps}, fillers safe; ${clips.length} clip(s)`);
const header = [
  '| clip | silences | real words clipped | ms clipped | words cut as repeats | fillers >= 80% cut | mean filler % cut | filler s cut | pause s cut / ref pause s | word s cut | source -> output s |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];
const byPace = new Map<SilencePace, Score[]>(PACES.map((p) => [p, []]));
const details: string[] = [];
console.log(header.join('\n'));
for (const clip of clips) {
  const { samples, sampleRate } = await readWavSamples(clip.wav);
  const seconds = samples.length / sampleRate;
  const words = await recognized(clip, seconds);
  // As agent/src/edit-stage.ts gives them (--no-envelope: as it did before the envelope, for the figures before).
  const evidence = { voiced: voicedRegions(samples, sampleRate), ...(values['no-envelope'] ? {} : { envelope: voiceEnvelope(samples, sampleRate) }) };
  for (const pace of PACES) {
    const { plan } = planEdit({
      words: words.map(({ text, start, end }) => ({ text, start, end })),
      sourceSeconds: seconds,
      fps,
      language: LANGUAGE,
      edit: { silences: pace, fillers: 'safe', zoom: 'off', keep: null },
      profanity: 'off',
      profanityWords: [],
      ...evidence,
    });
    const s = score(clip.reference, plan, seconds);
    byPace.get(pace)!.push(s);
    console.log(row(clip.name, pace, s));
    const clipped = s.clipped.map((c) => `"${c.text}" ${c.start.toFixed(2)}-${c.end.toFixed(2)} (${c.cutMs} ms)`);
    const left = s.fillers.filter((f) => f.share < 0.8).map((f) => `"${f.text}" ${f.start.toFixed(2)} (${(f.share * 100).toFixed(0)}%)`);
    const repeated = s.repeats.map((r) => `"${r.text}" ${r.start.toFixed(2)}`);
    details.push(
      `${clip.name} ${pace}: clipped ${clipped.join(', ') || 'none'}; cut as repeats ${repeated.join(', ') || 'none'}; fillers under 80% cut: ${left.join(', ') || 'none'}`,
    );
    if (values.verbose) {
      for (const c of plan.cuts) details.push(`    ${c.start.toFixed(3)}-${c.end.toFixed(3)} ${c.reason} ${c.text ?? ''}`);
    }
  }
  if (values.verbose) details.push(`  ${clip.name} words: ${words.map((w) => `${w.text}@${w.start.toFixed(2)}-${w.end.toFixed(2)}`).join(' ')}`);
}
for (const pace of PACES) console.log(row('pooled', pace, pooled(byPace.get(pace)!)));
console.log(`\n${details.join('\n')}`);
await transcriber?.close();
