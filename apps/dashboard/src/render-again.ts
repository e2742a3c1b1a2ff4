// Render a finished job again from the job page (issue 42): its words go back as the new job's
// transcript, with the edit as it was or the keep-ranges the user fixed, the way the SDK's "fix a
// word and render again" sends a transcript back. It travels to the new-job form in the router's
// history state (it survives a reload; the source video is chosen again, as the job record does
// not say where it came from).
import type { JobEdit, JobOutputs, JobRecord, TranscriptRecord } from '@captionfarm/contracts';
import { framingFieldsOf, type FramingFields } from './renditions.ts';

interface Range {
  start: number;
  end: number;
}

export interface RenderAgain {
  jobId: string;
  templateId: string;
  format: string;
  quality: string;
  /** The job's words in source seconds (the export's output times dropped), sent as `transcript`. */
  transcript: { language: string | null; words: { text: string; start: number; end: number }[] };
  /** The source's length, for the cut preview: the plan's, else the record's input length. */
  sourceSeconds: number;
  /** The keep-ranges to cut with (source seconds), or null: the form's silences and fillers cut. */
  keep: Range[] | null;
  silences: string;
  fillers: string;
  zoom: boolean;
  hookTitle: { text: string; seconds: number } | null;
  profanity: string;
  /** Its renditions, reframe, safe area, placement, poster and subtitles (issue 43); null: the form's defaults. */
  framing: FramingFields | null;
}

/**
 * What the job page hands the form: the job, its transcript, its edit (null: not edited) with the
 * keep-ranges to use, and its renditions (GET .../outputs; undefined while they load: the form's defaults).
 */
export function renderAgainOf(job: JobRecord, transcript: TranscriptRecord, edit: { job: JobEdit; keep: Range[] } | null, outputs?: JobOutputs): RenderAgain {
  const words = transcript.words.map((w) => ({ text: w.text, start: w.start, end: w.end }));
  const lastEnd = words.at(-1)?.end ?? 0;
  return {
    jobId: job.id,
    templateId: job.templateId,
    format: job.format,
    quality: job.quality,
    transcript: { language: transcript.language, words },
    sourceSeconds: edit?.job.plan.sourceSeconds ?? Math.max(job.quotedSeconds ?? 0, lastEnd),
    keep: edit?.keep ?? null,
    silences: edit?.job.edit.silences ?? 'off',
    fillers: edit?.job.edit.fillers ?? 'off',
    zoom: edit?.job.edit.zoom === 'emphasis',
    hookTitle: edit?.job.hookTitle ?? null,
    profanity: edit?.job.profanity ?? 'off',
    framing: outputs ? framingFieldsOf(outputs) : null,
  };
}

/** The render-again the page was opened with, if any (history state outlives a deploy: its shape is checked). */
export function readRenderAgain(state: unknown): RenderAgain | null {
  const r = (state as { renderAgain?: Partial<RenderAgain> } | null)?.renderAgain;
  if (!r || typeof r.jobId !== 'string' || !Array.isArray(r.transcript?.words) || typeof r.sourceSeconds !== 'number') return null;
  if (r.keep !== null && !Array.isArray(r.keep)) return null;
  // A state from before issue 43 has no framing; a malformed one is dropped (the form's defaults).
  const framing = r.framing && Array.isArray(r.framing.renditions) && r.framing.renditions.length > 0 ? r.framing : null;
  return { ...r, framing } as RenderAgain;
}
