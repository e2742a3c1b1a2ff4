// The automatic cut: which words are fillers or repeats, and which stretches of the source go
// (silences shortened to the pace's kept length, fillers with the silence after them, short
// voiced sounds between words). Pure; the result is raw cut pieces in source seconds, before
// frame alignment.
import type { CutReason, FillerMode, SilencePace } from '@captionfarm/contracts';
import type { Evidence } from './evidence.ts';
import { discourseOf, hesitationsOf, isLegitDouble } from './fillers.ts';
import { mergeSpans, type Span } from './ranges.ts';
import { endsSentence, wordKey } from './words.ts';

export interface EditWord {
  text: string;
  start: number;
  end: number;
}

export interface CutPiece extends Span {
  reason: CutReason;
}

/** A pace: gaps longer than `threshold` are shortened to `kept` seconds (half after the word before, half before the word after). */
interface Pace {
  threshold: number;
  kept: number;
  silencesOn: boolean;
}

/**
 * The thresholds against real pauses: between the forced-aligned words of the two spontaneous
 * recordings in ../shared/media/real, the pauses over 50 ms last 0.06-0.34 s inside phrases and
 * 0.43-1.33 s between them (en_mfa_acoustic_corpus: 0.15 0.17 0.17 0.24 0.34 0.48 0.57 0.62 0.97
 * 1.16; en_mfa_cold_corpus: 14 under 0.35, then 0.43 0.69 0.77 0.89 1.33). `natural` shortens the
 * 4 hesitations over 0.8 s, `fast` the 10 pauses between phrases, `extra-fast` also 5 inside them.
 * With silences off, the silence after a cut filler is shortened to 0.08 s so that the cut leaves
 * no hole.
 */
export const PACES: Record<SilencePace, Pace> = {
  off: { threshold: Number.POSITIVE_INFINITY, kept: 0.08, silencesOn: false },
  natural: { threshold: 0.8, kept: 0.3, silencesOn: true },
  fast: { threshold: 0.4, kept: 0.15, silencesOn: true },
  'extra-fast': { threshold: 0.2, kept: 0.08, silencesOn: true },
};

/** Repeats count only when the second starts within this many seconds of the first's end. */
const REPEAT_WITHIN = 1;
/** A voiced blob between words is cut (reason voiced-gap) when it lasts 0.15-0.8 s and stays this far from every word. */
const BLOB_MIN = 0.15;
const BLOB_MAX = 0.8;
const BLOB_MARGIN = 0.05;
/** How far a kept word grows into a voiced region overlapping its edge (whisper's word times are 50-150 ms off). */
const MAX_EXTEND = 0.25;
/**
 * With the audio's evidence (evidence.ts): a recognized onset may be this late, so the quiet this
 * long before a kept word's start is never cut; a word lasts at least MIN_WORD, so a cut word's
 * sound is looked for after that; a voiced blob starting less than BLOB_AFTER_ONSET after a word's
 * start is taken for that word's sound; a filler's sound is looked for within FILLER_SEARCH of
 * its recognized time (whisper gives an "uh" no length, up to 0.5 s after it on real speech); a
 * kept word's sound is followed until the next word's onset, at most WORD_SOUND after its start.
 */
const ONSET_SLACK = 0.06;
const MIN_WORD = 0.12;
const BLOB_AFTER_ONSET = 0.4;
const FILLER_SEARCH = 0.5;
const WORD_SOUND = 1.2;
/** A kept word grows back through the sound its recognized onset lies in by at most this much (en_mfa_cold_corpus3: "alright" recognized 0.45 s late). */
const ONSET_LATE = 0.6;
/** A filler's sound and a sound this close after or before it are one "uuuh". */
const FILLER_JOIN = 0.05;
/** A voiced sound no word claims, at least this long, stays (a cough, a word whisper missed): silences are cut around it. */
const UNHEARD_SOUND = 0.05;
/** How far a cut edge forced into a sound looks for its quietest point. */
const EDGE_WINDOW = 0.12;
const EPS = 1e-9;

/** Per word: why `fillers` cuts it (filler or repeat), or null when it is kept. */
export function fillerReasons(words: readonly EditWord[], language: string | null, mode: FillerMode): (CutReason | null)[] {
  const reasons: (CutReason | null)[] = words.map(() => null);
  if (mode === 'off') return reasons;
  const keys = words.map((w) => wordKey(w.text));
  const hesitations = hesitationsOf(language);
  keys.forEach((k, i) => {
    if (hesitations.has(k)) reasons[i] = 'filler';
  });
  if (mode === 'aggressive') {
    for (const phrase of discourseOf(language)) {
      for (let i = 0; i + phrase.length <= keys.length; i++) {
        if (phrase.every((p, j) => keys[i + j] === p && reasons[i + j] === null)) for (let j = 0; j < phrase.length; j++) reasons[i + j] = 'filler';
      }
    }
  }
  markRepeats(words, keys, reasons, language);
  return reasons;
}

/**
 * Immediate repeats among the words still kept: "I I think" cuts the first "I", "I think I think"
 * the first pair; the second must start within REPEAT_WITHIN of the first's end, the first must
 * not end a sentence ("No. No way" stays), and grammatical doubles ("that that") stay.
 */
function markRepeats(words: readonly EditWord[], keys: readonly string[], reasons: (CutReason | null)[], language: string | null): void {
  const seq = keys.flatMap((k, i) => (reasons[i] === null && k !== '' ? [i] : []));
  const same = (a: number, b: number) => keys[a] === keys[b];
  const close = (endOf: number, startOf: number) => words[startOf]!.start - words[endOf]!.end <= REPEAT_WITHIN;
  const open = (i: number) => !endsSentence(words[i]!.text);
  let i = 0;
  while (i + 1 < seq.length) {
    const [a, b, c, d] = [seq[i]!, seq[i + 1]!, seq[i + 2], seq[i + 3]];
    if (c !== undefined && d !== undefined && same(a, c) && same(b, d) && !same(a, b) && close(b, c) && open(b)) {
      reasons[a] = 'repeat';
      reasons[b] = 'repeat';
      i += 2;
    } else if (same(a, b) && close(a, b) && open(a) && !isLegitDouble(keys[a]!, language)) {
      reasons[a] = 'repeat';
      i += 1;
    } else i += 1;
  }
}

interface AutoInput {
  words: readonly EditWord[];
  reasons: readonly (CutReason | null)[];
  voiced: readonly Span[];
  sourceSeconds: number;
  pace: Pace;
  /** Cut voiced blobs between words (fillers safe or aggressive). */
  voicedGaps: boolean;
  /** The audio's sounds and quiet (evidenceOf an envelope): cut edges go to the quiet, a filler takes its own sound. */
  evidence?: Evidence | undefined;
}

/**
 * The raw cut pieces of an automatic edit (silences and fillers), ascending, in source seconds,
 * and the anchors: the kept words grown into their voice, which no alignment may clip.
 */
export function autoCuts(input: AutoInput): { pieces: CutPiece[]; anchors: Span[] } {
  const { words, reasons, sourceSeconds, pace } = input;
  const kept = words.flatMap((w, i) => (reasons[i] === null ? [w] : []));
  if (kept.length === 0) return { pieces: [], anchors: [] };
  const voiced = mergeSpans(input.voiced);
  const items = cutItems(input, voiced);
  const { evidence } = input;
  const anchors = mergeSpans([
    ...words.flatMap((w, i) => (reasons[i] !== null ? [] : [evidence ? heardWord(words, i, evidence, items) : extendWord(w, voiced, items)])),
    ...(evidence ? unclaimed(evidence.voiced, items) : []),
  ]);
  const pieces: CutPiece[] = [];
  let next = 0;
  for (let g = 0; g <= anchors.length; g++) {
    const gs = g === 0 ? 0 : anchors[g - 1]!.end;
    const ge = g === anchors.length ? sourceSeconds : anchors[g]!.start;
    const inGap: CutPiece[] = [];
    while (next < items.length && items[next]!.start < ge - EPS) {
      if (items[next]!.start >= gs - EPS) inGap.push(items[next]!);
      next++;
    }
    pieces.push(...gapCuts({ gs, ge, hasPrev: g > 0, hasNext: g < anchors.length }, inGap, pace));
  }
  return { pieces, anchors };
}

/** What must go whatever the pace: the cut words (clipped off any kept word they overlap) and the voiced blobs between words. */
function cutItems(input: AutoInput, voiced: readonly Span[]): CutPiece[] {
  const { words, reasons } = input;
  const items: CutPiece[] = [];
  const nextKeptStart: number[] = [];
  for (let i = words.length - 1, start = Number.POSITIVE_INFINITY; i >= 0; i--) {
    nextKeptStart[i] = start;
    if (reasons[i] === null) start = words[i]!.start;
  }
  let keptEnd = Number.NEGATIVE_INFINITY;
  let keptStart = Number.NEGATIVE_INFINITY;
  words.forEach((w, i) => {
    const reason = reasons[i];
    if (reason === null || reason === undefined) {
      keptEnd = Math.max(keptEnd, w.end);
      keptStart = w.start;
      return;
    }
    if (input.evidence) {
      // After the kept word before: MIN_WORD after its start, and its recognized end (when that is before this word's start: ends run long).
      const from = Math.max(keptStart + MIN_WORD, Math.min(keptEnd, w.start - ONSET_SLACK));
      const heard = heardCut(words, i, reason, { from, floor: keptStart + BLOB_AFTER_ONSET, until: nextKeptStart[i]! - ONSET_SLACK }, input.evidence);
      if (heard) items.push({ ...heard, reason });
      return;
    }
    // A cut word grows into its own voiced sound (not one it shares with a kept word), as a kept word does.
    const atStart = voicedAround(voiced, w.start);
    const atEnd = voicedAround(voiced, w.end);
    const grownStart = atStart && atStart.start > keptEnd ? Math.max(atStart.start, w.start - MAX_EXTEND) : w.start;
    const grownEnd = atEnd && atEnd.end < nextKeptStart[i]! ? Math.min(atEnd.end, w.end + MAX_EXTEND) : w.end;
    const start = Math.max(grownStart, keptEnd);
    const end = Math.min(grownEnd, nextKeptStart[i]!);
    if (end > start + EPS) items.push({ start, end, reason });
  });
  if (input.voicedGaps) items.push(...voicedGapItems(words, voiced, input.evidence !== undefined));
  items.sort((a, b) => a.start - b.start);
  const merged: CutPiece[] = [];
  for (const it of items) {
    const last = merged.at(-1);
    if (last && it.start < last.end) last.end = Math.max(last.end, it.end);
    else merged.push({ ...it });
  }
  return merged;
}

/** Voiced blobs of BLOB_MIN..BLOB_MAX s lying wholly between two words, BLOB_MARGIN clear of both: an "um" whisper dropped. */
function voicedGapItems(words: readonly EditWord[], voiced: readonly Span[], heard: boolean): CutPiece[] {
  const out: CutPiece[] = [];
  const maxEnd: number[] = [];
  for (const [i, w] of words.entries()) maxEnd.push(Math.max(w.end, maxEnd[i - 1] ?? Number.NEGATIVE_INFINITY));
  for (const v of voiced) {
    const length = v.end - v.start;
    if (length < BLOB_MIN - EPS || length > BLOB_MAX + EPS) continue;
    const i = lastStartingBy(words, v.start);
    const after = words[i + 1];
    if (i < 0 || !after) continue;
    // With the audio's evidence, recognized ends are not trusted: a blob starting soon after a word's onset is that word's sound ("corpus" heard as "cor" then "pus").
    if (heard && (v.start < words[i]!.start + BLOB_AFTER_ONSET - EPS || v.end > after.start - ONSET_SLACK + EPS)) continue;
    if (v.start >= maxEnd[i]! + BLOB_MARGIN - EPS && v.end <= after.start - BLOB_MARGIN + EPS) out.push({ start: v.start, end: v.end, reason: 'voiced-gap' });
  }
  return out;
}

/** The index of the last element for which `before` holds (it holds for a prefix of the array), or -1. */
function lastWhere<T>(items: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(items[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** The index of the last word starting at or before t, or -1. */
function lastStartingBy(words: readonly EditWord[], t: number): number {
  return lastWhere(words, (w) => w.start <= t);
}

/** The voiced region (merged, ascending) strictly around t, if any. */
function voicedAround(voiced: readonly Span[], t: number): Span | undefined {
  const v = voiced[lastWhere(voiced, (r) => r.start < t)];
  return v && v.end > t ? v : undefined;
}

/** A kept word grown into the voiced regions overlapping its edges, at most MAX_EXTEND each way and never into a cut item (items ascending, disjoint). */
function extendWord(w: EditWord, voiced: readonly Span[], items: readonly CutPiece[]): Span {
  const before = items[lastWhere(items, (it) => it.end <= w.start + EPS)];
  const after = items[lastWhere(items, (it) => it.start < w.end - EPS) + 1];
  const atStart = voicedAround(voiced, w.start);
  const atEnd = voicedAround(voiced, w.end);
  return {
    start: atStart ? Math.max(atStart.start, w.start - MAX_EXTEND, before?.end ?? 0, 0) : w.start,
    end: atEnd ? Math.min(atEnd.end, w.end + MAX_EXTEND, after?.start ?? Number.POSITIVE_INFINITY) : w.end,
  };
}

/**
 * A cut word's span from the audio, within [from, until] (after the kept word before has had
 * MIN_WORD, ONSET_SLACK before the kept word after). A filler takes the sounds its recognized time
 * overlaps, else the nearest within FILLER_SEARCH; a repeat runs from the quiet before its onset to
 * the quiet before the next word's. An edge the bounds force into a sound goes to its quietest point.
 */
function heardCut(
  words: readonly EditWord[],
  i: number,
  reason: CutReason,
  bounds: { from: number; floor: number; until: number },
  evidence: Evidence,
): Span | null {
  const w = words[i]!;
  const { from, until } = bounds;
  // A sound of its own (quiet before it) may start before `from`, the kept word's recognized end
  // (ends run long), but not before `floor`: a sound starting within BLOB_AFTER_ONSET of the kept
  // word's onset is that word's ("cor-pus" with a long closure).
  const floor = Math.min(from, bounds.floor);
  if (until <= from + EPS) return null;
  const edge = (lo: number, hi: number, fallback: number) => evidence.quietest(Math.max(from, lo), Math.min(until, hi)) ?? fallback;
  if (reason === 'repeat') {
    const next = nextOnset(words, i) ?? w.end;
    // Onsets run late (the second "we" of "we we" 120 ms on espeak-ng): the quiet before it is looked for over twice the window.
    const start = evidence.quietest(Math.max(floor, w.start - 2 * EDGE_WINDOW), Math.min(until, w.start + 0.02)) ?? Math.max(from, w.start);
    // The next onset may be late by 0.2 s (the kept "words" after "words words word" on
    // en_mfa_acoustic_corpus): the quiet is looked for over twice the window; ending early only keeps more.
    const end = edge(next - 2 * EDGE_WINDOW, next, Math.min(until, Math.max(w.end, start)));
    return end > start + EPS ? { start, end } : null;
  }
  // A sound wholly after `floor` may be the filler's own (the kept word before it ended in the quiet before it).
  const lo = (s: Span) => (s.start >= floor - EPS ? floor : from);
  const near = evidence.voiced
    .filter((s) => s.end > lo(s) + EPS && s.start < until - EPS)
    .map((s) => ({ start: Math.max(lo(s), s.start), end: Math.min(until, s.end), cutStart: s.start < lo(s) - EPS, cutEnd: s.end > until + EPS }));
  const span = { start: w.start, end: Math.max(w.end, w.start) };
  // The filler's sounds: those its recognized span covers for the most part, or holds its start
  // (a recognized end that runs 20 ms into the next word's sound does not make that sound the filler's).
  const covered = (s: Span) => Math.min(s.end, span.end) - Math.max(s.start, span.start) >= 0.5 * (s.end - s.start) - EPS;
  let claimed = near.filter((s) => (s.end > span.start + EPS && s.start < span.end - EPS && covered(s)) || (s.start <= span.start && span.start <= s.end));
  if (claimed.length === 0) {
    const distance = (s: Span) => Math.max(0, s.start - span.end, span.start - s.end);
    const best = near.reduce<(typeof near)[number] | null>((b, s) => (distance(s) <= FILLER_SEARCH && (!b || distance(s) < distance(b)) ? s : b), null);
    claimed = best ? [best] : [];
  }
  // A filler's sound with a dip in it (a breath in a long "uuuh"): the neighbours FILLER_JOIN away go with it, within the bounds.
  let a = claimed[0] ? near.indexOf(claimed[0]) : -1;
  let b = claimed.length ? near.indexOf(claimed.at(-1)!) : -1;
  while (a > 0 && !near[a]!.cutStart && !near[a - 1]!.cutStart && near[a]!.start - near[a - 1]!.end < FILLER_JOIN) a--;
  while (b >= 0 && b + 1 < near.length && !near[b]!.cutEnd && !near[b + 1]!.cutEnd && near[b + 1]!.start - near[b]!.end < FILLER_JOIN) b++;
  const first = near[a];
  const last = near[b];
  if (!first || !last) {
    const start = Math.max(from, w.start);
    const end = Math.min(until, w.end);
    return end > start + EPS ? { start, end } : null;
  }
  const start = first.cutStart ? edge(first.start, first.start + EDGE_WINDOW, first.start) : first.start;
  // A filler running into the kept word after it (one sound) ends at the sound's quietest point
  // between MIN_WORD into it and that word's recognized onset (ONSET_SLACK past `until`): the
  // onset may be late by 0.4 s, the gap between them as short as 30 ms.
  const end = last.cutEnd ? (evidence.quietest(Math.max(from, last.start + MIN_WORD), until + ONSET_SLACK) ?? last.end) : last.end;
  return end > start + EPS ? { start, end } : null;
}

/**
 * A kept word's span from the audio: from ONSET_SLACK before its start (grown into a sound there,
 * at most MAX_EXTEND) to the end of the last sound starting before the next word's onset (at most
 * WORD_SOUND after its start), never into a cut item.
 */
function heardWord(words: readonly EditWord[], i: number, evidence: Evidence, items: readonly CutPiece[]): Span {
  const w = words[i]!;
  const before = items[lastWhere(items, (it) => it.end <= w.start + EPS)];
  // Recognized ends run long ("words." over the "um" after it): the first item after the start bounds the word.
  const after = items[lastWhere(items, (it) => it.start <= w.start + EPS) + 1];
  const next = nextOnset(words, i) ?? Number.POSITIVE_INFINITY;
  // A recognized onset inside a sound: the word started with that sound (onsets run up to 0.45 s late on real speech).
  const at = voicedAround(evidence.sounds, w.start - ONSET_SLACK);
  let start = Math.min(w.start - ONSET_SLACK, at ? Math.max(at.start, w.start - ONSET_LATE) : w.start);
  start = Math.max(start, before?.end ?? 0, 0);
  let end = Math.min(w.end, next);
  const limit = Math.min(next - ONSET_SLACK, w.start + WORD_SOUND);
  for (const s of evidence.sounds) {
    if (s.start >= limit) break;
    if (s.end > w.start) end = Math.max(end, Math.min(s.end, next));
  }
  return { start, end: Math.max(start, Math.min(end, after?.start ?? Number.POSITIVE_INFINITY)) };
}

/**
 * The voiced sounds (UNHEARD_SOUND or longer) no cut item overlaps: a cut never goes through them,
 * as it never goes through a kept word (whisper shifted "alright" 0.45 s onto the next word on
 * en_mfa_cold_corpus3; a lead-in cut took it).
 */
function unclaimed(sounds: readonly Span[], items: readonly CutPiece[]): Span[] {
  return sounds.filter((s) => {
    if (s.end - s.start < UNHEARD_SOUND - EPS) return false;
    const it = items[lastWhere(items, (x) => x.start < s.end - EPS)];
    return !it || it.end <= s.start + EPS;
  });
}

/** The start of the first word after word i that starts later than it, if any. */
function nextOnset(words: readonly EditWord[], i: number): number | undefined {
  for (let j = i + 1; j < words.length; j++) if (words[j]!.start > words[i]!.start + EPS) return words[j]!.start;
  return undefined;
}

interface Gap {
  gs: number;
  ge: number;
  /** A kept word before the gap (else it is the lead-in), after it (else the tail). */
  hasPrev: boolean;
  hasNext: boolean;
}

/**
 * The cuts in one gap between kept words. Without cut items: a gap over the threshold keeps
 * `kept`/2 after the word before and `kept`/2 before the word after (the lead-in keeps only the
 * latter, the tail the former). With cut items (fillers, repeats, voiced blobs): the silence
 * before the first item follows the silence rule; the items and everything after them go, down to
 * what keeps the gap's kept silence at the pace's length (at least half of it before the next
 * word); after the last word, with silences off, only the items go.
 */
function gapCuts(gap: Gap, items: readonly CutPiece[], pace: Pace): CutPiece[] {
  const { gs, ge, hasPrev, hasNext } = gap;
  const { threshold, kept, silencesOn } = pace;
  const half = kept / 2;
  if (ge - gs <= EPS) return [];
  const first = items[0];
  const last = items.at(-1);
  if (!first || !last) {
    if (!silencesOn || ge - gs <= threshold || (!hasPrev && !hasNext)) return [];
    const start = hasPrev ? gs + half : gs;
    const end = hasNext ? ge - half : ge;
    return end > start + EPS ? [{ start, end, reason: 'silence' }] : [];
  }
  const s0 = first.start - gs;
  const a = !silencesOn || s0 <= threshold ? s0 : hasPrev ? half : 0;
  const sk = ge - last.end;
  // Before the next word: what makes the join `kept` long (half of it at least); in the lead-in,
  // with silences on, half (as a lead-in without a filler). The tail after a cut item goes with
  // silences on and stays with them off (a video may go on without speech).
  const b = hasNext ? Math.min(sk, silencesOn && !hasPrev ? half : Math.max(kept - a, half)) : silencesOn ? 0 : sk;
  const cutEnd = ge - b;
  const pieces: CutPiece[] = [];
  let pos = gs + a;
  if (a < s0 - EPS) {
    pieces.push({ start: pos, end: first.start, reason: 'silence' });
    pos = first.start;
  }
  for (const it of items) {
    if (silencesOn && it.start - pos > threshold) {
      pieces.push({ start: pos, end: it.start, reason: 'silence' });
      pos = it.start;
    }
    pieces.push({ start: pos, end: Math.max(pos, it.end), reason: it.reason });
    pos = Math.max(pos, it.end);
  }
  if (cutEnd > pos + EPS) {
    if (silencesOn && cutEnd - pos > threshold) pieces.push({ start: pos, end: cutEnd, reason: 'silence' });
    else pieces[pieces.length - 1]!.end = cutEnd;
  }
  return pieces;
}
