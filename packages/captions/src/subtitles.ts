// Words -> subtitle cues -> SRT / WebVTT text. Pure functions, no I/O.
import stringWidth from 'string-width';
import { endsClause, endsSentence, graphemes, hasNoSpaceScript, needsSpaceBetween, splitNoSpaceWord } from './text.ts';

export interface SubtitleWord {
  text: string;
  start: number;
  end: number;
}

export interface SubtitleOptions {
  /** Display columns a line holds; east-asian wide characters count 2. Default 42 (broadcast and streaming guidelines). */
  maxLineWidth?: number;
  /** Lines a cue holds. Default 2. */
  maxLines?: number;
  /** A cue never lasts longer than this (seconds). Default 7. */
  maxCueSeconds?: number;
  /** A silence at least this long (seconds) between two words starts a new cue. Default 1. */
  pauseSeconds?: number;
}

export interface SubtitleCue {
  /** Seconds. */
  start: number;
  end: number;
  /** One to maxLines lines, in logical (reading) order: right-to-left text is never reversed. */
  lines: string[];
}

interface Token {
  text: string;
  start: number;
  end: number;
  width: number;
  /** A space goes before it when it does not start a line (false inside Chinese/Japanese, and for pieces of a split word). */
  space: boolean;
  /** Last piece of its word (a cue may only end a sentence there). */
  wordEnd: boolean;
}

/** Terminal columns of a text: east-asian wide and full-width characters 2, combining marks 0. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** A word wider than a line is cut into line-sized pieces (between characters), its time shared by width. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

function tokenize(words: readonly SubtitleWord[], maxWidth: number): Token[] {
  const out: Token[] = [];
  let prevText = '';
  for (const w of words) {
    // Controls (C0 and C1: some parsers end a line at U+0085 or U+001C) become a space, like line breaks.
    const text = w.text.replace(CONTROLS, ' ').trim().replace(/\s+/g, ' ');
    if (!text) continue;
    const space = out.length > 0 && needsSpaceBetween(prevText, text);
    prevText = text;
    const width = displayWidth(text);
    if (width <= maxWidth) {
      out.push({ text, start: w.start, end: w.end, width, space, wordEnd: true });
      continue;
    }
    const units = hasNoSpaceScript(text) ? splitNoSpaceWord(text) : graphemes(text);
    const pieces: string[] = [];
    let cur = '';
    for (const u of units) {
      if (cur && displayWidth(cur + u) > maxWidth) {
        pieces.push(cur);
        cur = '';
      }
      cur += u;
    }
    if (cur) pieces.push(cur);
    const total = pieces.reduce((n, p) => n + displayWidth(p), 0);
    let t = w.start;
    pieces.forEach((p, i) => {
      const last = i === pieces.length - 1;
      const end = last ? w.end : t + ((w.end - w.start) * displayWidth(p)) / total;
      out.push({ text: p, start: t, end, width: displayWidth(p), space: i === 0 ? space : false, wordEnd: last });
      t = end;
    });
  }
  return out;
}

/** Width of tokens[from..to) on one line, from prefix sums of widths and spaces. */
function lineWidths(tokens: readonly Token[]): (from: number, to: number) => number {
  const w = [0];
  const s = [0];
  tokens.forEach((t, i) => {
    w.push(w[i]! + t.width);
    s.push(s[i]! + (t.space ? 1 : 0));
  });
  // The space before the line's first token is not drawn.
  return (from, to) => w[to]! - w[from]! + s[to]! - s[from + 1]!;
}

/**
 * The best way to put `tokens` on at most `maxLines` lines of `maxWidth` columns, or null when they
 * do not fit. Best: the widest line as narrow as possible (balanced lines read faster than a full
 * line over a short one); among equals, breaks after a clause (comma, semicolon ...) win.
 */
function breakLines(tokens: readonly Token[], maxWidth: number, maxLines: number): number[][] | null {
  const n = tokens.length;
  const lineWidth = lineWidths(tokens);
  if (lineWidth(0, n) <= maxWidth) return [tokens.map((_, i) => i)];
  // best[k][i]: cost of tokens[i..n) on k lines: [widest line, clause breaks missed]; next[k][i]: where line 1 ends.
  type Cost = [number, number];
  const best: (Cost | null)[][] = [];
  const next: number[][] = [];
  for (let k = 1; k <= maxLines; k++) {
    best[k] = [];
    next[k] = [];
    for (let i = 0; i < n; i++) {
      if (k === 1) {
        const w = lineWidth(i, n);
        best[k]![i] = w <= maxWidth ? [w, 0] : null;
        next[k]![i] = n;
        continue;
      }
      let bestCost: Cost | null = best[k - 1]![i] ?? null;
      let bestJ = bestCost ? -1 : n;
      for (let j = i + 1; j < n; j++) {
        const w = lineWidth(i, j);
        if (w > maxWidth) break;
        const rest = best[k - 1]![j];
        if (!rest) continue;
        const cost: Cost = [Math.max(w, rest[0]), rest[1] + (endsClause(tokens[j - 1]!.text) || endsSentence(tokens[j - 1]!.text) ? 0 : 1)];
        if (!bestCost || cost[0] < bestCost[0] || (cost[0] === bestCost[0] && cost[1] < bestCost[1])) {
          bestCost = cost;
          bestJ = j;
        }
      }
      best[k]![i] = bestCost;
      next[k]![i] = bestJ;
    }
  }
  if (!best[maxLines]![0]) return null;
  const lines: number[][] = [];
  let i = 0;
  let k = maxLines;
  while (i < n && k >= 1) {
    const j = next[k]![i]!;
    if (j === -1) {
      k--; // fewer lines do as well
      continue;
    }
    lines.push(Array.from({ length: j - i }, (_, m) => i + m));
    i = j;
    k--;
  }
  return lines;
}

function lineText(tokens: readonly Token[], idx: readonly number[]): string {
  return idx.map((i, m) => (m > 0 && tokens[i]!.space ? ' ' : '') + tokens[i]!.text).join('');
}

/**
 * Groups words into subtitle cues: at most `maxLines` lines of `maxLineWidth` display columns, a
 * new cue after a sentence, at a pause, or when the cue would run past `maxCueSeconds`. A cue
 * lasts from its first word's start to its last word's end, cut at the next cue's start.
 */
export function subtitleCues(words: readonly SubtitleWord[], opts: SubtitleOptions = {}): SubtitleCue[] {
  const maxWidth = opts.maxLineWidth ?? 42;
  const maxLines = opts.maxLines ?? 2;
  const maxCue = opts.maxCueSeconds ?? 7;
  const pause = opts.pauseSeconds ?? 1;
  const tokens = tokenize(words, maxWidth);
  const groups: { tokens: Token[]; lines: number[][] }[] = [];
  let cur: { tokens: Token[]; lines: number[][] } | null = null;
  for (const t of tokens) {
    if (cur) {
      const prev = cur.tokens.at(-1)!;
      const split = prev.wordEnd && (t.start - prev.end >= pause || t.end - cur.tokens[0]!.start > maxCue || endsSentence(prev.text));
      const lines = split ? null : breakLines([...cur.tokens, t], maxWidth, maxLines);
      if (lines) {
        cur.tokens.push(t);
        cur.lines = lines;
        continue;
      }
    }
    cur = { tokens: [t], lines: [[0]] };
    groups.push(cur);
  }
  return groups.map((g, i) => {
    const start = g.tokens[0]!.start;
    let end = Math.max(...g.tokens.map((t) => t.end));
    const nextStart = groups[i + 1]?.tokens[0]?.start;
    if (nextStart !== undefined && nextStart > start) end = Math.min(end, nextStart);
    return { start, end: Math.max(end, start + 0.001), lines: g.lines.map((idx) => lineText(g.tokens, idx)) };
  });
}

/** 3723.5 -> "01:02:03,500" (SRT) or "01:02:03.500" (WebVTT). */
export function formatSubtitleTime(seconds: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round(seconds * 1000));
  const ms = total % 1000;
  const s = Math.floor(total / 1000) % 60;
  const m = Math.floor(total / 60_000) % 60;
  const h = Math.floor(total / 3_600_000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(h)}:${p(m)}:${p(s)}${separator}${p(ms, 3)}`;
}

/**
 * SubRip cue text has no escapes, and players read syntax in it: a line holding "-->" is a timing
 * line, <b>, <i>, <u>, <font> and {\an8} are formatting (line breaks inside a word are already a
 * space: tokenize). A zero-width space (U+200B) inside "-->", after a "<" that opens a tag and after
 * a "{" before "\\" keeps the text as it reads and takes the syntax out, as WebVTT's escapes do.
 */
function neutraliseSrt(text: string): string {
  return text
    .replace(/-->/g, '--\u200b>')
    .replace(/<(?=\/?[a-zA-Z])/g, '<\u200b')
    .replace(/\{(?=\\)/g, '{\u200b');
}

/** SubRip: numbered cues, "HH:MM:SS,mmm --> HH:MM:SS,mmm", a blank line after each. */
export function toSrt(words: readonly SubtitleWord[], opts: SubtitleOptions = {}): string {
  return subtitleCues(words, opts)
    .map((c, i) => `${i + 1}\n${formatSubtitleTime(c.start, ',')} --> ${formatSubtitleTime(c.end, ',')}\n${c.lines.map(neutraliseSrt).join('\n')}\n\n`)
    .join('');
}

/** WebVTT cue text: "&", "<" and ">" are markup there ("-->" would end the timing line). */
function escapeVtt(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** WebVTT: the "WEBVTT" header, then "HH:MM:SS.mmm --> HH:MM:SS.mmm" cues separated by blank lines. */
export function toVtt(words: readonly SubtitleWord[], opts: SubtitleOptions = {}): string {
  const cues = subtitleCues(words, opts).map(
    (c) => `${formatSubtitleTime(c.start, '.')} --> ${formatSubtitleTime(c.end, '.')}\n${c.lines.map(escapeVtt).join('\n')}\n\n`,
  );
  return `WEBVTT\n\n${cues.join('')}`;
}
