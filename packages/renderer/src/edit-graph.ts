import { RenderError } from './errors.ts';
import type { Size } from './plan-output-size.ts';

// Issue 42: the edit a render applies (cuts, punch-in zooms, bleeps) as ffmpeg filters. Pure
// functions of the plan; render-args.ts puts them in the graph.

export interface TimeSpan {
  start: number;
  end: number;
}

/** renderVideo's `edit`: the output is the concatenation of `keep` (source seconds); zooms and bleeps in OUTPUT seconds. */
export interface RenderEdit {
  keep: readonly TimeSpan[];
  zooms: readonly { start: number; end: number; scale: number }[];
  bleeps: readonly TimeSpan[];
}

/** An edit checked against its source: the keep-ranges it really cuts, and what they add up to. */
export interface EditGraph extends RenderEdit {
  keep: TimeSpan[];
  /** The source's duration: a range ending there gets no fade out (nothing is joined after it). */
  sourceSeconds: number;
  /** The output's duration: the kept ranges' summed length. */
  outputSeconds: number;
}

/**
 * Each audio join fades out and in over this long (a half-sine, so the gain's slope is zero at
 * both ends): the two sides of a cut meet at silence instead of stepping from one waveform to
 * another. A 440 Hz sine at -6 dBFS cut at 5 joins of mismatched phase: the largest step between
 * two samples near a join was 0.48 of full scale cut hard, 0.030 with these fades (the sine's own
 * largest step is 0.029; test/edit-render.test.ts). Short enough that the planner's padding around
 * each word covers it.
 */
const JOIN_FADE_SECONDS = 0.008;

/** The bleep: a 1 kHz sine at -12 dBFS (10^(-12/20) of full scale) in place of the speech. */
const BLEEP_HZ = 1000;
const BLEEP_AMPLITUDE = 0.2512;

/** How long a zoom eases in (and out): a half-sine from 1 to its scale, then held. */
const ZOOM_EASE_SECONDS = 0.12;

/**
 * A frame whose time is within this of a range's start belongs to the range (and one this close
 * to its end does not): frame-aligned ranges meet frame times exactly, where a double's last bit
 * would otherwise decide.
 */
export const FRAME_EPSILON = 1e-4;
/** Pieces of audio shorter than this (a bleep that ends a few µs before a cut) are not made. */
const PIECE_EPSILON = 5e-4;

/**
 * The edit as the render cuts it: ranges clamped to the source (a frame-aligned end may pass it by
 * a frame), ranges that touch merged (no join, no fade), and nothing left -> RenderError. Ranges
 * must be ascending and not overlap (the contracts' KeepRangesSchema); anything else is a caller's
 * bug, a TypeError.
 */
export function editGraph(edit: RenderEdit, sourceSeconds: number): EditGraph {
  const keep: TimeSpan[] = [];
  for (const r of edit.keep) {
    if (!(Number.isFinite(r.start) && Number.isFinite(r.end) && r.end > r.start && r.start >= 0)) {
      throw new TypeError(`renderVideo: keep-range ${JSON.stringify(r)} is not a span of time`);
    }
    const prev = keep.at(-1);
    if (prev && r.start < prev.end - 1e-9) throw new TypeError('renderVideo: keep-ranges must be ascending and not overlap');
    const end = Math.min(r.end, sourceSeconds);
    if (end - r.start < PIECE_EPSILON) continue;
    if (prev && r.start - prev.end < PIECE_EPSILON) prev.end = end;
    else keep.push({ start: r.start, end });
  }
  if (keep.length === 0) {
    throw new RenderError('render-failed', `The edit keeps nothing of the ${sourceSeconds.toFixed(3)} s source: every keep-range is past its end`);
  }
  const outputSeconds = keep.reduce((sum, r) => sum + (r.end - r.start), 0);
  return { keep, zooms: edit.zooms, bleeps: edit.bleeps, sourceSeconds, outputSeconds };
}

/** Seconds as ffmpeg reads them: microseconds at most (its timestamps' own resolution), no exponent. */
export function sec(n: number): string {
  return String(Number(n.toFixed(6)));
}

/**
 * An expression choosing among `n` cases by the time `t`, as a balanced tree of `if(lt(...))`
 * (ffmpeg evaluates only the branch taken): log2(n) comparisons a frame instead of n, so 2,000
 * ranges cost a frame no more than 11 tests.
 */
export function byTime(n: number, t: string, startOf: (i: number) => number, leaf: (i: number) => string): string {
  const tree = (lo: number, hi: number): string => {
    if (hi - lo === 1) return leaf(lo);
    const mid = (lo + hi) >> 1;
    return `if(lt(${t},${sec(startOf(mid))}),${tree(lo, mid)},${tree(mid, hi)})`;
  };
  return tree(0, n);
}

/**
 * The video cut: `select` keeps the frames inside a range, `setpts` moves each one back by what
 * the cuts before its range removed (its output time is its time in the range plus the length of
 * the ranges before). Timestamps, not frame counts, so a variable-frame-rate source keeps its
 * spacing and each frame lands where its audio does.
 */
export function cutVideoFilters(keep: readonly TimeSpan[]): string[] {
  const start = (i: number) => keep[i]!.start - FRAME_EPSILON;
  const inside = byTime(keep.length, 't', start, (i) => `gte(t,${sec(start(i))})*lt(t,${sec(keep[i]!.end - FRAME_EPSILON)})`);
  const offsets: number[] = [];
  let before = 0;
  for (const r of keep) {
    offsets.push(r.start - before);
    before += r.end - r.start;
  }
  const shift = byTime(keep.length, 'T', start, (i) => sec(offsets[i]!));
  // setpts truncates its result to an integer: round, or a frame at 0.2 s could land a tick early.
  return [`select='${inside}'`, `setpts='round((T-(${shift}))/TB)'`];
}

/**
 * The punch-in zooms, on frames already at the output size: scale up by z(t) and crop the centre
 * back to `out`. Outside every zoom z is exactly 1, the scale's size is the input's and ffmpeg's
 * scale passes the frame through untouched (frames outside zooms are bit-identical to a render
 * without them); inside, z eases up to the zoom's scale over ZOOM_EASE_SECONDS, holds, and eases
 * back. Sizes change on whole even pixels.
 */
export function zoomFilters(zooms: RenderEdit['zooms'], out: Size): string[] {
  const sorted = zooms.filter((z) => z.end > z.start && z.scale > 1).toSorted((a, b) => a.start - b.start);
  if (sorted.length === 0) return [];
  const z = byTime(
    sorted.length,
    't',
    (i) => sorted[i]!.start,
    (i) => {
      const { start, end, scale } = sorted[i]!;
      const ease = Math.min(ZOOM_EASE_SECONDS, (end - start) / 2);
      // 0 outside the zoom, 1 in its held middle; (1-cos(PI*x))/2 is 0 exactly at x = 0.
      const x = `clip(min((t-${sec(start)})/${sec(ease)},(${sec(end)}-t)/${sec(ease)}),0,1)`;
      return `1+${sec(scale - 1)}*(1-cos(PI*${x}))/2`;
    },
  );
  const w = `2*trunc(${out.width}*(${z})/2)`;
  const h = `2*trunc(${out.height}*(${z})/2)`;
  return [`scale=w='${w}':h='${h}':eval=frame:flags=bicubic`, `crop=w=${out.width}:h=${out.height}:x='(${w}-${out.width})/2':y='(${h}-${out.height})/2'`];
}

/** One stretch of output audio: source audio from `start` to `end`, or the bleep in its place. */
interface Piece extends TimeSpan {
  tone: boolean;
  /** Where it starts on the output timeline (the bleep's phase runs on from there). */
  at: number;
  fadeIn: boolean;
  fadeOut: boolean;
}

/**
 * The output's audio as pieces of the source in order: each keep-range, split where a bleep
 * (output seconds) starts or ends inside it. A range's ends fade unless they are the source's own.
 */
function audioPieces(edit: EditGraph): Piece[] {
  const bleeps = edit.bleeps.filter((b) => b.end > b.start).toSorted((a, b) => a.start - b.start);
  const pieces: Piece[] = [];
  let at = 0;
  for (const r of edit.keep) {
    const outEnd = at + (r.end - r.start);
    // The range on the output timeline as spans of speech and of bleep, snapped together where
    // they would leave a sliver under PIECE_EPSILON.
    const spans: { s: number; e: number; tone: boolean }[] = [];
    let cur = at;
    for (const b of bleeps) {
      const e = Math.min(b.end, outEnd);
      let s = Math.max(b.start, cur);
      if (e - s < PIECE_EPSILON) continue;
      if (s - cur >= PIECE_EPSILON) spans.push({ s: cur, e: s, tone: false });
      else s = cur;
      const last = spans.at(-1);
      if (last?.tone && last.e === s) last.e = e;
      else spans.push({ s, e, tone: true });
      cur = e;
    }
    if (outEnd - cur >= PIECE_EPSILON) spans.push({ s: cur, e: outEnd, tone: false });
    else spans.at(-1)!.e = outEnd;
    const first = pieces.length;
    for (const { s, e, tone } of spans) pieces.push({ start: r.start + (s - at), end: r.start + (e - at), tone, at: s, fadeIn: false, fadeOut: false });
    const head = pieces[first]!;
    const tail = pieces.at(-1)!;
    head.fadeIn = !head.tone && r.start > PIECE_EPSILON;
    tail.fadeOut = !tail.tone && r.end < edit.sourceSeconds - PIECE_EPSILON;
    at = outEnd;
  }
  return pieces;
}

/**
 * The audio side of an edit, from `input` (the source's audio) to `[output]`: the source split
 * once at every piece boundary (`asegment`, sample-exact, each sample to one output, so the cost
 * does not grow with the number of ranges: 2,000 ranges of a 120 s track took 2.4 s where
 * `asplit` + 2,000 `atrim` took 518 s), the pieces between ranges dropped, each kept piece
 * faded at its joins or replaced by the bleep, and all concatenated.
 */
export function editAudioGraph(edit: EditGraph, input: string, output: string): string {
  // The track as consecutive segments from its start, each a piece or a stretch that is cut.
  const segments: { start: number; piece: Piece | null }[] = [];
  let pos = 0;
  for (const piece of audioPieces(edit)) {
    if (piece.start - pos >= PIECE_EPSILON) segments.push({ start: pos, piece: null });
    segments.push({ start: piece.start, piece });
    pos = piece.end;
  }
  segments.push({ start: pos, piece: null });
  const labels = segments.map((_s, i) => `[s${i}]`).join('');
  const points = segments.slice(1).map((s) => sec(s.start));
  // asegment splits at sample counts from the first sample: aresample makes the timeline start at
  // 0 (a track that starts late is padded with silence, as the timeline says), so counts and times agree.
  const chains = [`${input}aresample=first_pts=0,asegment=timestamps='${points.join('|')}'${labels}`];
  const kept: string[] = [];
  for (const [i, { piece }] of segments.entries()) {
    if (piece === null) {
      chains.push(`[s${i}]anullsink`);
      continue;
    }
    const filters = pieceFilters(piece);
    if (filters.length === 0) {
      kept.push(`[s${i}]`);
      continue;
    }
    chains.push(`[s${i}]${filters.join(',')}[p${i}]`);
    kept.push(`[p${i}]`);
  }
  chains.push(`${kept.join('')}concat=n=${kept.length}:v=0:a=1,asetpts=N/SR/TB${output}`);
  return chains.join(';');
}

/**
 * A piece's filters, on its source timestamps (concat lays the pieces end to end whatever their
 * timestamps, and one asetpts after it numbers the samples afresh: a filter less per piece,
 * and the graph's cost grows with the square of its filters, as ffmpeg's scheduler scans them all
 * at every step).
 */
function pieceFilters(p: Piece): string[] {
  if (p.tone) {
    // The same format as the speech it replaces (c=same), its phase running on across joins.
    const shift = p.at - p.start;
    return [`aeval=exprs='${BLEEP_AMPLITUDE}*sin(${2 * BLEEP_HZ}*PI*(t${shift < 0 ? '' : '+'}${sec(shift)}))':c=same`];
  }
  const fade = Math.min(JOIN_FADE_SECONDS, (p.end - p.start) / 2);
  const filters: string[] = [];
  if (p.fadeIn) filters.push(`afade=t=in:st=${sec(p.start)}:d=${sec(fade)}:curve=hsin`);
  if (p.fadeOut) filters.push(`afade=t=out:st=${sec(p.end - fade)}:d=${sec(fade)}:curve=hsin`);
  return filters;
}
