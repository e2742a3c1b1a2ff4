/**
 * Speech first, then words: the VAD's speech regions become chunks of speech-only audio that
 * whisper transcribes, and every time whisper gives on a chunk is mapped back to the source.
 *
 * Why: given long silences, room tone or a music bed, whisper's timestamps drift into them (9 words
 * stamped inside one 2.5 s pause of an English read), and any gate that then deletes words by
 * time loses real words (issue 10: WER 4.7% -> 32.6% with three 2.5 s pauses). Whisper never sees
 * the pauses here, so there is nothing to drift into and nothing is deleted afterwards.
 *
 * - Regions are padded (the VAD's edges miss soft onsets and endings by tens of ms) and regions
 *   closer than `mergeGap` are merged: a short pause inside a sentence stays in context.
 * - Spans are packed into chunks of at most `maxChunk` seconds (one whisper window is 30 s), joined
 *   by `joinGap` seconds of digital silence, so whisper still hears a break between them: 0.6 s,
 *   about a pause between sentences (0.3 s before issue 39: espeak's Spanish read with a 6 s
 *   silence came out at WER 26.2% against 19.0% without it; with 0.6 s both are 19.0%, and the
 *   real English clips went from 11.6% to 11.0%, language given).
 * - A span longer than `maxChunk` is cut at its widest pause between voiced regions that leaves
 *   a piece of maxChunk/2 to maxChunk seconds, so each chunk is one whisper window ending where
 *   nobody speaks, and a caller gets final words chunk by chunk (an agent renders while the rest
 *   is recognized). A span with no such pause is a chunk of its own (whisper slides its window).
 */
import { open, writeFile } from 'node:fs/promises';
import type { SpeechRegion } from './vad.ts';
import { parseWavHeader, WHISPER_SAMPLE_RATE, whisperWavHeader } from './audio.ts';
import { TranscriptionError } from './errors.ts';

export interface PlanParams {
  /** Seconds added before and after each VAD region. */
  pad: number;
  /** Regions closer than this (after padding) are one span. */
  mergeGap: number;
  /** Silence between two spans inside a chunk. */
  joinGap: number;
  /** Most seconds of audio per chunk. */
  maxChunk: number;
}

const DEFAULT_PLAN: PlanParams = { pad: 0.2, mergeGap: 0.5, joinGap: 0.6, maxChunk: 28 };

interface Span {
  /** Source seconds. */
  start: number;
  end: number;
  /** Where the span begins in its chunk's audio, seconds. */
  at: number;
  /** The VAD's own regions inside the span (unpadded), source seconds. */
  voiced: SpeechRegion[];
}

export interface Chunk {
  spans: Span[];
  /** Seconds of chunk audio. */
  duration: number;
}

/** Pads, merges and packs speech regions into chunks (pure). */
export function planChunks(regions: SpeechRegion[], sourceDuration: number, p: PlanParams = DEFAULT_PLAN): Chunk[] {
  const spans: { start: number; end: number; voiced: SpeechRegion[] }[] = [];
  for (const r of [...regions].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, r.start - p.pad);
    const end = Math.min(sourceDuration, r.end + p.pad);
    if (end <= start) continue;
    const voiced = { start: Math.max(0, r.start), end: Math.min(sourceDuration, r.end) };
    const last = spans.at(-1);
    if (last && start - last.end < p.mergeGap) {
      last.end = Math.max(last.end, end);
      last.voiced.push(voiced);
    } else spans.push({ start, end, voiced: [voiced] });
  }
  const chunks: Chunk[] = [];
  for (const s of spans.flatMap((span) => cutLong(span, p.maxChunk))) {
    const length = s.end - s.start;
    const current = chunks.at(-1);
    if (current && current.duration + p.joinGap + length <= p.maxChunk) {
      const at = current.duration + p.joinGap;
      current.spans.push({ ...s, at });
      current.duration = at + length;
    } else {
      chunks.push({ spans: [{ ...s, at: 0 }], duration: length });
    }
  }
  return chunks;
}

/** A span longer than `max` seconds as pieces cut in its widest pauses (see planChunks). */
function cutLong<S extends { start: number; end: number; voiced: SpeechRegion[] }>(span: S, max: number): S[] {
  const pieces: S[] = [];
  let rest = span;
  while (rest.end - rest.start > max) {
    let best = -1;
    let widest = -1;
    for (let j = 0; j + 1 < rest.voiced.length; j++) {
      const gap = rest.voiced[j + 1]!.start - rest.voiced[j]!.end;
      const at = (rest.voiced[j]!.end + rest.voiced[j + 1]!.start) / 2 - rest.start;
      if (at >= max / 2 && at <= max && gap > widest) {
        widest = gap;
        best = j;
      }
    }
    if (best < 0) break;
    const cut = (rest.voiced[best]!.end + rest.voiced[best + 1]!.start) / 2;
    pieces.push({ ...rest, end: cut, voiced: rest.voiced.slice(0, best + 1) });
    rest = { ...rest, start: cut, voiced: rest.voiced.slice(best + 1) };
  }
  pieces.push(rest);
  return pieces;
}

/**
 * A chunk time -> source time (pure). Inside a span: shifted by the span's offset. In the silence
 * joining two spans (whisper's times drift there too): a start goes to the next span's start, an
 * end to the previous span's end. Past the last span: its end.
 */
export function toSourceTime(chunk: Chunk, t: number, kind: 'start' | 'end'): number {
  const spans = chunk.spans;
  for (let i = 0; i < spans.length; i++) {
    const s = spans[i]!;
    const length = s.end - s.start;
    if (t < s.at) return kind === 'start' || i === 0 ? s.start : spans[i - 1]!.end;
    if (t <= s.at + length) return s.start + (t - s.at);
  }
  return spans.at(-1)!.end;
}

/**
 * Onset refinement from the VAD (pure): a word start that whisper put where the VAD hears no
 * voice (the padding around a region, or a short pause merged into a span) moves to where the
 * voice resumes; one put after the last voice of its span, to 50 ms before that voice ends.
 * Nobody starts a word in silence; whisper's times drift there by 100-300 ms around pauses.
 */
export function snapToVoice(chunk: Chunk, start: number): number {
  const span = chunk.spans.find((s) => start >= s.start && start <= s.end);
  if (!span || span.voiced.some((v) => start >= v.start && start < v.end)) return start;
  const next = span.voiced.find((v) => v.start > start);
  if (next) return next.start;
  const last = span.voiced.at(-1)!;
  return Math.max(last.start, last.end - 0.05);
}

/** The chunk without its first `seconds` of audio (pure). */
export function skipStart(chunk: Chunk, seconds: number): Chunk {
  const spans: Span[] = [];
  for (const s of chunk.spans) {
    const end = s.at + (s.end - s.start);
    if (end <= seconds) continue;
    const cut = Math.max(0, seconds - s.at);
    spans.push({ start: s.start + cut, end: s.end, at: Math.max(0, s.at - seconds), voiced: s.voiced });
  }
  return { spans, duration: Math.max(0, chunk.duration - seconds) };
}

const SAMPLE_RATE = WHISPER_SAMPLE_RATE;

/** Writes the chunk's audio (16 kHz mono s16 WAV) from the source WAV. */
export async function writeChunkWav(source: string, chunk: Chunk, out: string): Promise<void> {
  const fh = await open(source, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const info = parseWavHeader(head.subarray(0, bytesRead));
    if (!info) throw new TranscriptionError('transcription-failed', `not a WAV file: ${source}`);
    const totalSamples = Math.round(chunk.duration * SAMPLE_RATE);
    const pcm = Buffer.alloc(totalSamples * 2); // zeros: the joining silence
    for (const s of chunk.spans) {
      const from = Math.round(s.start * SAMPLE_RATE);
      const count = Math.min(Math.round((s.end - s.start) * SAMPLE_RATE), totalSamples - Math.round(s.at * SAMPLE_RATE));
      const bytes = Math.max(0, Math.min(count * 2, info.dataBytes - from * 2));
      await fh.read(pcm, Math.round(s.at * SAMPLE_RATE) * 2, bytes, info.dataOffset + from * 2);
    }
    await writeFile(out, Buffer.concat([whisperWavHeader(pcm.length), pcm]));
  } finally {
    await fh.close();
  }
}
