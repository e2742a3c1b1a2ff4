import { toSrt, toVtt } from '@captionfarm/captions';
import { wordOnOutput, type TranscriptRecord } from '@captionfarm/contracts';

type Word = { text: string; start: number; end: number };
type Range = { start: number; end: number };

/** An edited job's plan as the exports need it: its keep-ranges, and the indices of the words it removed. */
interface StoredEdit {
  keep: readonly Range[];
  removed: ReadonlySet<number>;
}

/** A stored transcript's words and language, and its job's edit (null: not edited). */
interface StoredTranscript {
  words: readonly Word[];
  language: string | null;
  languageProbability: number | null;
  edit: StoredEdit | null;
}

const ms = (s: number) => Math.round(s * 1000) / 1000;

/**
 * An edited job's words for the JSON export (issue 42): each keeps its source time and gets its
 * time in the output video, to the millisecond, null when a cut removed it. Pure: it runs on the
 * event loop and on the transcript worker.
 */
function withOutputTimes(words: readonly Word[], edit: StoredEdit): (Word & { outputStart: number | null; outputEnd: number | null })[] {
  return words.map((w, i) => {
    const out = edit.removed.has(i) ? null : wordOnOutput(edit.keep, w.start, w.end);
    return { text: w.text, start: w.start, end: w.end, outputStart: out ? ms(out.start) : null, outputEnd: out ? ms(out.end) : null };
  });
}

/**
 * An edited job's words on the output timeline, the words a cut removed left out: what its SRT and
 * VTT exports are made of, since those go with the output video, not with the source.
 */
function onOutputTimeline(words: readonly Word[], edit: StoredEdit): Word[] {
  const out: Word[] = [];
  words.forEach((w, i) => {
    const t = edit.removed.has(i) ? null : wordOnOutput(edit.keep, w.start, w.end);
    if (t) out.push({ text: w.text, start: t.start, end: t.end });
  });
  return out;
}

/**
 * The keep-ranges of a stored plan (job_transcripts.edit_json) and the words it removed (a cut
 * filler may leave a sliver of its recognized span on the output: the plan, not that sliver,
 * says it is gone), or null when the job was not edited.
 */
export function editOfPlan(editJson: string | null): StoredEdit | null {
  if (editJson === null) return null;
  const plan = JSON.parse(editJson) as { keep: Range[]; removed?: number[] };
  return { keep: plan.keep, removed: new Set(plan.removed ?? []) };
}

/**
 * A stored transcript exported (GET .../transcript), on the event loop or the transcript worker.
 * JSON gives every word's source time, and for an edited job (`edit` not null) its output time
 * too; SRT and VTT of an edited job are on the output timeline, without the words that were cut,
 * because they go with the output video (a player shows them over it as they are).
 */
export function exportTranscript(format: 'json', t: StoredTranscript): TranscriptRecord;
export function exportTranscript(format: 'srt' | 'vtt', t: StoredTranscript): string;
export function exportTranscript(format: 'json' | 'srt' | 'vtt', t: StoredTranscript): TranscriptRecord | string;
export function exportTranscript(format: 'json' | 'srt' | 'vtt', t: StoredTranscript): TranscriptRecord | string {
  const { words, edit } = t;
  if (format === 'json') return { language: t.language, languageProbability: t.languageProbability, words: edit ? withOutputTimes(words, edit) : [...words] };
  const shown = edit ? onOutputTimeline(words, edit) : words;
  return format === 'srt' ? toSrt(shown) : toVtt(shown);
}
