// planEdit: a job's edit options and its words -> the EditPlan the agent renders and reports.
import { type CutReason, EDIT_MAX_RANGES, type EditPlan, type LeasedJob, type ProfanityMode } from '@captionfarm/contracts';
import { autoCuts, type CutPiece, type EditWord, fillerReasons, PACES } from './cuts.ts';
import { type Evidence, evidenceOf } from './evidence.ts';
import { EditFailure } from './failure.ts';
import { maskWord, profanityMatcher } from './profanity.ts';
import { alignKeep, complement, type KeepEdge, mergeSpans, outputMapper, roundMs, type Span } from './ranges.ts';
import type { VoiceEnvelope } from './voiced.ts';
import { planZooms } from './zoom.ts';

export interface PlanEditInput {
  /** Source seconds, starts ascending, end > start (already fitted to the source). */
  words: readonly EditWord[];
  sourceSeconds: number;
  /** The source's average frame rate: keep-ranges are aligned to its frame grid (start floored, end ceiled to k/fps), so audio and video cuts agree. */
  fps: number;
  language: string | null;
  /** LeasedJob['edit']: null means no cut and no zoom (profanity may still apply). */
  edit: LeasedJob['edit'];
  profanity: ProfanityMode;
  /** The account's own words, added to the language's list. */
  profanityWords: readonly string[];
  /** Regions of the audio with voice energy (voicedRegions), source seconds; optional. */
  voiced?: readonly { start: number; end: number }[];
  /**
   * The audio's speech-band level (voiceEnvelope); optional. With it, the automatic cut trusts the
   * audio over recognized times: cut edges go to the quiet between sounds, a filler takes the
   * sound nearest its recognized time, a kept word keeps every sound until the next word's onset.
   */
  envelope?: VoiceEnvelope;
  /** Template keywords (emphasis) for zoom; optional. */
  keywords?: readonly string[];
}

export interface PlannedEdit {
  /** Validates against EditPlanSchema. */
  plan: EditPlan;
  /** Words to burn: masked text, words entirely cut dropped, times on the OUTPUT timeline (wordOnOutput from contracts). */
  words: EditWord[];
  /** Words to report for the transcript export: SOURCE times, masked text, every word (cut ones too). */
  sourceWords: EditWord[];
}

interface Decision {
  /** Keep-ranges before frame alignment, or null: the whole source, untouched. */
  keep: KeepEdge[] | null;
  pieces: CutPiece[];
  /** Per word: cut by the planner as a filler or repeat. */
  reasons: (CutReason | null)[];
}

/**
 * The edit of one job: keep-ranges (source seconds, frame-aligned), every cut with its reason and
 * the words it removed, the zooms and bleeps (output seconds), the words to burn on the output
 * timeline and the words to export on the source timeline, masked. Pure: the dashboard runs it to
 * preview a cut list. Throws EditFailure('edit-out-of-range') for a job's own range past the end
 * of the source, EditFailure('edit-left-nothing') when nothing (or no word) would be left.
 */
export function planEdit(input: PlanEditInput): PlannedEdit {
  const { sourceSeconds, fps } = input;
  if (!(fps > 0) || !Number.isFinite(fps)) throw new RangeError(`planEdit: fps must be a positive number (got ${fps})`);
  if (!(sourceSeconds >= 0) || !Number.isFinite(sourceSeconds)) throw new RangeError(`planEdit: sourceSeconds must be >= 0 (got ${sourceSeconds})`);
  const profane = input.profanity === 'off' ? () => false : profanityMatcher(input.language, input.profanityWords);
  const masked = input.words.map((w) => profane(w.text));
  // A bleeped word is timed by its own sound: the tone must cover what is heard, not whisper's span of it.
  const words = input.profanity === 'bleep' && input.envelope ? soundTimedWords(input.words, masked, evidenceOf(input.envelope)) : input.words;
  const texts = words.map((w, i) => (masked[i] ? maskWord(w.text) : w.text));
  const decision = decide({ ...input, words });
  const keep =
    decision.keep === null ? [{ start: 0, end: roundMs(sourceSeconds) }] : alignKeep(decision.keep, fps, sourceSeconds, { snap: Boolean(input.edit?.keep) });
  if (decision.keep !== null && keep.length === 0) throw new EditFailure('edit-left-nothing', 'the edit keeps no part of the source: keep at least one range');
  const onOutput = outputMapper(keep);
  const burned: { index: number; start: number; end: number }[] = [];
  words.forEach((w, index) => {
    if (decision.reasons[index] !== null) return;
    // No cut: every word where it was, as before issue 42 (even one past the end, or of no length).
    if (decision.keep === null) {
      burned.push({ index, start: w.start, end: w.end });
      return;
    }
    const out = onOutput(w.start, w.end);
    if (out && out.end - out.start >= Math.min(w.end - w.start, 1 / fps) - 1e-6) burned.push({ index, ...out });
  });
  if (decision.keep !== null && words.length > 0 && burned.length === 0) {
    const what = input.edit?.keep
      ? 'edit.keep keeps no word of the transcript: keep a range with speech'
      : 'the edit cuts every word of the transcript: turn fillers off';
    throw new EditFailure('edit-left-nothing', what);
  }
  const outputSeconds = roundMs(keep.reduce((sum, r) => sum + (r.end - r.start), 0));
  const kept = new Set(burned.map((b) => b.index));
  const cuts = decision.keep === null ? [] : finalCuts(keep, decision.pieces, roundMs(sourceSeconds), { words, texts, kept });
  const zooms =
    input.edit?.zoom === 'emphasis'
      ? planZooms(
          burned.map((b) => ({ text: words[b.index]!.text, start: b.start, end: b.end })),
          input.keywords ?? [],
          outputSeconds,
        )
      : [];
  const bleeps = input.profanity === 'bleep' ? bleepSpans(onOutput, words, masked) : [];
  return {
    plan: {
      sourceSeconds: roundMs(sourceSeconds),
      outputSeconds,
      keep,
      cuts,
      zooms,
      bleeps,
      ...(decision.keep === null ? {} : { removed: words.flatMap((_, i) => (kept.has(i) ? [] : [i])) }),
    },
    words: burned.map((b) => {
      if (decision.keep === null) return { text: texts[b.index]!, start: b.start, end: b.end };
      const start = roundMs(b.start);
      return { text: texts[b.index]!, start, end: Math.max(roundMs(b.end), start + 0.001) };
    }),
    sourceWords: words.map((w, i) => ({ text: texts[i]!, start: w.start, end: w.end })),
  };
}

/** What the options ask for: nothing, the job's own keep-ranges, or the automatic cut. */
function decide(input: PlanEditInput): Decision {
  const { edit, words, sourceSeconds, fps } = input;
  const none: Decision = { keep: null, pieces: [], reasons: words.map(() => null) };
  if (edit === null) return none;
  if (edit.keep) {
    const tooLate = edit.keep.find((r) => r.end > sourceSeconds + 1 / fps + 1e-6);
    if (tooLate) {
      throw new EditFailure(
        'edit-out-of-range',
        `edit.keep has a range ending at ${tooLate.end} s, past the end of the source (${roundMs(sourceSeconds)} s): fit the ranges to the source`,
      );
    }
    const keep = mergeSpans(edit.keep.map((r) => ({ start: Math.max(0, r.start), end: Math.min(sourceSeconds, r.end) })).filter((r) => r.end > r.start));
    const pieces = complement(keep, sourceSeconds).map((s): CutPiece => ({ ...s, reason: 'client' }));
    return { keep, pieces, reasons: none.reasons };
  }
  if (edit.silences === 'off' && edit.fillers === 'off') return none;
  const reasons = fillerReasons(words, input.language, edit.fillers);
  if (words.length > 0 && reasons.every((r) => r !== null)) {
    throw new EditFailure('edit-left-nothing', 'every word is a filler or a repeat: nothing would be left (turn fillers off)');
  }
  const { pieces, anchors } = autoCuts({
    words,
    reasons,
    voiced: input.voiced ?? [],
    sourceSeconds,
    pace: PACES[edit.silences],
    voicedGaps: edit.fillers !== 'off',
    evidence: input.envelope ? evidenceOf(input.envelope) : undefined,
  });
  return { keep: withEdges(complement(pieces, sourceSeconds), pieces, anchors), pieces, reasons };
}

/**
 * Each raw keep-range with what its alignment needs: the span of the kept words in it (never
 * clipped), and whether each edge meets something cut for what it is (a filler, a repeat, a
 * voiced blob): there the frame grid rounds inwards when the kept words allow, so that no frame of
 * the cut sound comes back. Edges on a silence round outwards (start floored, end ceiled).
 */
function withEdges(keep: readonly Span[], pieces: readonly CutPiece[], anchors: readonly Span[]): KeepEdge[] {
  const sound = (p: CutPiece | undefined) => p !== undefined && p.reason !== 'silence';
  let a = 0;
  let p = 0;
  return keep.map((r) => {
    while (p < pieces.length && pieces[p]!.end <= r.start + 1e-9) p++;
    const before = pieces[p - 1];
    const after = pieces[p];
    while (a < anchors.length && anchors[a]!.end <= r.start) a++;
    let hardStart = Number.POSITIVE_INFINITY;
    let hardEnd = Number.NEGATIVE_INFINITY;
    for (let i = a; i < anchors.length && anchors[i]!.start < r.end; i++) {
      hardStart = Math.min(hardStart, anchors[i]!.start);
      hardEnd = Math.max(hardEnd, anchors[i]!.end);
    }
    return { ...r, hardStart, hardEnd, inwardStart: sound(before), inwardEnd: sound(after) };
  });
}

interface CutText {
  words: readonly EditWord[];
  texts: readonly string[];
  /** Indices of the words burned (kept): the others are what the cuts removed. */
  kept: ReadonlySet<number>;
}

/**
 * The plan's cuts: the gaps between the aligned keep-ranges, split by the reasons of the raw
 * pieces they came from (ascending), adjacent pieces of one reason merged, each with the (masked)
 * words whose middle it removed (a cut word whose middle the alignment kept: the nearest cut). Past EDIT_MAX_RANGES + 1 pieces, each gap becomes one piece with
 * its first reason other than silence.
 */
function finalCuts(keep: readonly Span[], raw: readonly CutPiece[], source: number, text: CutText): EditPlan['cuts'] {
  const perGap: CutPiece[][] = [];
  let from = 0;
  for (const gap of complement(keep, source)) {
    while (from < raw.length && raw[from]!.end <= gap.start) from++;
    const parts: CutPiece[] = [];
    for (let j = from; j < raw.length && raw[j]!.start < gap.end; j++) {
      const p = raw[j]!;
      if (p.end > gap.start) parts.push({ start: Math.max(gap.start, p.start), end: Math.min(gap.end, p.end), reason: p.reason });
    }
    if (parts.length === 0) parts.push({ ...gap, reason: raw[Math.max(0, from - 1)]?.reason ?? 'silence' });
    perGap.push(tile(gap, parts));
  }
  const tooMany = perGap.reduce((n, g) => n + g.length, 0) > EDIT_MAX_RANGES + 1;
  const out = tooMany
    ? perGap.map((g) => ({ start: g[0]!.start, end: g.at(-1)!.end, reason: g.find((p) => p.reason !== 'silence')?.reason ?? 'silence' }))
    : perGap.flat();
  const removed: string[][] = out.map(() => []);
  text.words.forEach((w, i) => {
    if (text.kept.has(i)) return;
    const mid = (w.start + w.end) / 2;
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (out[m]!.end < mid - 1e-9) lo = m + 1;
      else hi = m;
    }
    // A word the planner cut whose middle frame alignment kept (a 10 ms "uh") goes to the nearest cut.
    const after = out[lo];
    const before = out[lo - 1];
    const at = after && (after.start <= mid + 1e-9 || !before || after.start - mid < mid - before.end) ? lo : lo - 1;
    removed[at]?.push(text.texts[i]!);
  });
  return out.map((c, i) => ({ start: c.start, end: c.end, reason: c.reason, text: removed[i]!.length ? removed[i]!.join(' ').slice(0, 2000) : null }));
}

/** A gap's pieces made contiguous from its start to its end (ms boundaries), slivers under 1 ms given to their neighbour, one reason per run. */
function tile(gap: Span, parts: CutPiece[]): CutPiece[] {
  parts.forEach((p, i) => {
    p.start = i === 0 ? gap.start : roundMs(parts[i - 1]!.end);
    p.end = i === parts.length - 1 ? gap.end : roundMs(p.end);
  });
  const out: CutPiece[] = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (last && (last.reason === p.reason || p.end - p.start < 0.001)) last.end = p.end;
    else if (p.end - p.start >= 0.001 || !last) out.push(p);
  }
  const first = out[0];
  const second = out[1];
  if (first && second && first.end - first.start < 0.001) {
    second.start = first.start;
    out.shift();
  }
  return out;
}

/**
 * The masked words timed by their sound: each sound of the audio belongs to the word whose
 * recognized span overlaps it most (recognized times are 100-200 ms off on real speech, a word's
 * end often early), and a masked word spans the sounds it owns, its start kept between its
 * neighbours' starts so the words stay in order. A masked word that owns no sound keeps its recognized times.
 */
function soundTimedWords(words: readonly EditWord[], masked: readonly boolean[], evidence: Evidence): EditWord[] {
  if (!masked.some(Boolean)) return [...words];
  const owned = words.map((): Span[] => []);
  for (const sound of evidence.sounds) {
    let best = -1;
    let bestOverlap = 0;
    words.forEach((w, i) => {
      const overlap = Math.min(w.end, sound.end) - Math.max(w.start, sound.start);
      if (overlap > bestOverlap) {
        best = i;
        bestOverlap = overlap;
      }
    });
    if (best >= 0) owned[best]!.push(sound);
  }
  return words.map((w, i) => {
    const sounds = owned[i]!;
    if (!masked[i] || sounds.length === 0) return w;
    const lo = words[i - 1]?.start ?? 0;
    const hi = words[i + 1]?.start ?? Number.POSITIVE_INFINITY;
    const start = Math.min(Math.max(sounds[0]!.start, lo), hi);
    const end = sounds.at(-1)!.end;
    return end > start ? { ...w, start: roundMs(start), end: roundMs(end) } : w;
  });
}

/** The masked words' audio on the output timeline, touching spans joined. */
function bleepSpans(onOutput: ReturnType<typeof outputMapper>, words: readonly EditWord[], masked: readonly boolean[]): EditPlan['bleeps'] {
  const spans: Span[] = [];
  words.forEach((w, i) => {
    if (!masked[i]) return;
    const out = onOutput(w.start, w.end);
    if (out) spans.push(out);
  });
  return mergeSpans(spans.map((s) => ({ start: roundMs(s.start), end: roundMs(s.end) })))
    .filter((s) => s.end > s.start)
    .map((s) => ({ start: s.start, end: s.end }));
}
