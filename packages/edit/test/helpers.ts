import { type EditPlan, EditPlanSchema, toOutputTime, wordOnOutput } from '@captionfarm/contracts';
import { expect } from 'vitest';
import { type EditWord, type PlanEditInput, type PlannedEdit, planEdit } from '../src/index.ts';

export const w = (text: string, start: number, end: number): EditWord => ({ text, start, end });

/** Words from "text@start-end" tokens: "So@1-1.3 um@1.5-1.8". */
export function words(spec: string): EditWord[] {
  return spec
    .trim()
    .split(/\s+/)
    .map((token) => {
      const m = /^(.+)@([\d.]+)-([\d.]+)$/.exec(token);
      if (!m) throw new Error(`bad token ${token}`);
      return w(m[1]!, Number(m[2]), Number(m[3]));
    });
}

type Options = Partial<Omit<PlanEditInput, 'edit'>> & { edit?: Partial<NonNullable<PlanEditInput['edit']>> | null };

/** planEdit with defaults (10 s source, a millisecond frame grid so the rules' numbers show exactly), checked by `checkPlanned`. */
export function plan(ws: readonly EditWord[], options: Options = {}): PlannedEdit {
  const { edit, ...rest } = options;
  const input: PlanEditInput = {
    words: ws,
    sourceSeconds: 10,
    fps: 1000,
    language: 'en',
    profanity: 'off',
    profanityWords: [],
    ...rest,
    edit: edit === null ? null : { silences: 'off', fillers: 'off', zoom: 'off', keep: null, ...edit },
  };
  const out = planEdit(input);
  checkPlanned(input, out);
  return out;
}

/**
 * What holds for every plan: it parses with EditPlanSchema; keep and cuts tile the source; the
 * output lasts the sum of the keep-ranges; every burned word is a source word inside a keep-range
 * (never clipped) at its wordOnOutput time; the source words are all the words at their times.
 */
function checkPlanned(input: PlanEditInput, out: PlannedEdit): void {
  const { plan: p } = out;
  expect(EditPlanSchema.parse(p)).toEqual(p);
  const sum = p.keep.reduce((s, r) => s + r.end - r.start, 0);
  expect(p.outputSeconds).toBeCloseTo(sum, 6);
  const tiles = [...p.keep, ...p.cuts].sort((a, b) => a.start - b.start);
  const holes = tiles.filter((t, i) => Math.abs(t.start - (tiles[i - 1]?.end ?? 0)) > 1e-6 || !(t.end > t.start));
  expect(holes, 'keep and cuts tile the source').toEqual([]);
  expect(tiles.at(-1)?.end ?? 0).toBeCloseTo(p.sourceSeconds, 6);
  // Every source word at its time; only a bleeped (masked) word may be retimed by its sound.
  const retimed = input.profanity === 'bleep' && input.envelope !== undefined;
  const words = retimed ? out.sourceWords.map((s, i) => ({ ...input.words[i]!, start: s.start, end: s.end })) : input.words;
  expect(out.sourceWords.map((s, i) => (retimed && s.text.includes('*') ? [input.words[i]!.start, input.words[i]!.end] : [s.start, s.end]))).toEqual(
    input.words.map((s) => [s.start, s.end]),
  );
  // Each burned word is the next source word whose start maps to its start; it must lie inside a
  // keep-range (unless the job gave its own ranges) at its wordOnOutput time.
  const problems: string[] = [];
  let from = 0;
  for (const bw of out.words) {
    let i = from;
    const same = (j: number) => {
      const o = onOutput(p.keep, words[j]!);
      return (
        out.sourceWords[j]!.text === bw.text &&
        o !== null &&
        Math.abs(o.start - bw.start) < 0.0011 &&
        Math.abs(Math.max(o.end, o.start + 0.001) - bw.end) < 0.0011
      );
    };
    while (i < words.length && !same(i)) i++;
    const src = words[i];
    if (!src) {
      problems.push(`burned word ${bw.text} at ${bw.start} has no source word`);
      break;
    }
    from = i + 1;
    // With the audio's envelope, a recognized span that runs into its neighbour's (whisper's do, by
    // 0.1-0.5 s) is judged by the audio, in each test, not by these times.
    const j = i;
    const overlapsNeighbour =
      input.envelope !== undefined && [words[j - 1], words[j + 1]].some((n) => n && n.start < src.end - 1e-6 && src.start < n.end - 1e-6);
    if (input.edit?.keep == null && !overlapsNeighbour && !p.keep.some((r) => r.start <= src.start + 1e-6 && src.end <= r.end + 1e-6)) {
      problems.push(`${src.text} ${src.start}-${src.end} is clipped`);
    }
    const mapped = onOutput(p.keep, src)!;
    if (Math.abs(bw.start - mapped.start) > 0.0005 || Math.abs(bw.end - mapped.end) > 0.0011)
      problems.push(`${bw.text} ${bw.start}-${bw.end} is not at ${mapped.start}-${mapped.end}`);
  }
  expect(problems).toEqual([]);
}

/** A word's output span: wordOnOutput, or for a word of no length its point (and a millisecond). */
function onOutput(keep: EditPlan['keep'], w: EditWord): { start: number; end: number } | null {
  if (w.end > w.start) return wordOnOutput(keep, w.start, w.end);
  const point = toOutputTime(keep, w.start);
  return point === null ? null : { start: point, end: point + 0.001 };
}

/** The output gap between two burned words (by text). */
export function outputGap(out: PlannedEdit, before: string, after: string): number {
  const a = out.words.find((x) => x.text === before)!;
  const b = out.words.find((x) => x.text === after)!;
  return Math.round((b.start - a.end) * 1000) / 1000;
}

/** A seeded PRNG (mulberry32): the property tests are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
