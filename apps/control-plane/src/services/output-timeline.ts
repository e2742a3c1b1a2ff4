import { toSrt, toVtt } from '@captionfarm/captions';
import { wordOnOutput, type TranscriptRecord } from '@captionfarm/contracts';

type Word = { text: string; start: number; end: number };
type Range = { start: number; end: number };

/** A stored transcript's words and language, and the keep-ranges of its job's edit (null: not edited). */
interface StoredTranscript {
  words: readonly Word[];
  language: string | null;
  languageProbability: number | null;
  keep: readonly Range[] | null;
}

const ms = (s: number) => Math.round(s * 1000) / 1000;

/**
 * An edited job's words for the JSON export (issue 42): each keeps its source time and gets its
 * time in the output video, to the millisecond, null when a cut removed it. Pure: it runs on the
 * event loop and on the transcript worker.
 */
function withOutputTimes(words: readonly Word[], keep: readonly Range[]): (Word & { outputStart: number | null; outputEnd: number | null })[] {
  return words.map((w) => {
    const out = wordOnOutput(keep, w.start, w.end);
    return { text: w.text, start: w.start, end: w.end, outputStart: out ? ms(out.start) : null, outputEnd: out ? ms(out.end) : null };
  });
}

/**
 * An edited job's words on the output timeline, the words a cut removed left out: what its SRT and
 * VTT exports are made of, since those go with the output video, not with the source.
 */
function onOutputTimeline(words: readonly Word[], keep: readonly Range[]): Word[] {
  const out: Word[] = [];
  for (const w of words) {
    const t = wordOnOutput(keep, w.start, w.end);
    if (t) out.push({ text: w.text, start: t.start, end: t.end });
  }
  return out;
}

/** The keep-ranges of a stored plan (job_transcripts.edit_json), or null when the job was not edited. */
export function keepOfPlan(editJson: string | null): Range[] | null {
  return editJson === null ? null : (JSON.parse(editJson) as { keep: Range[] }).keep;
}

/**
 * A stored transcript exported (GET .../transcript), on the event loop or the transcript worker.
 * JSON gives every word's source time, and for an edited job (`keep` not null) its output time
 * too; SRT and VTT of an edited job are on the output timeline, without the words that were cut,
 * because they go with the output video (a player shows them over it as they are).
 */
export function exportTranscript(format: 'json', t: StoredTranscript): TranscriptRecord;
export function exportTranscript(format: 'srt' | 'vtt', t: StoredTranscript): string;
export function exportTranscript(format: 'json' | 'srt' | 'vtt', t: StoredTranscript): TranscriptRecord | string;
export function exportTranscript(format: 'json' | 'srt' | 'vtt', t: StoredTranscript): TranscriptRecord | string {
  const { words, keep } = t;
  if (format === 'json') return { language: t.language, languageProbability: t.languageProbability, words: keep ? withOutputTimes(words, keep) : [...words] };
  const shown = keep ? onOutputTimeline(words, keep) : words;
  return format === 'srt' ? toSrt(shown) : toVtt(shown);
}
