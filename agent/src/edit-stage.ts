import path from 'node:path';
import type { Template } from '@captionfarm/captions';
import type { LeasedJob, Word } from '@captionfarm/contracts';
import { EditFailure, fillerPrompt, planEdit, type PlannedEdit, type VoiceEnvelope, voiceEnvelope, voicedRegions } from '@captionfarm/edit';
import { readWavSamples } from '@captionfarm/edit/wav';
import { extractWhisperWav } from './audio-tap.ts';
import { JobFailure } from './errors.ts';
import type { Ingested } from './ingest-stage.ts';

/**
 * Whether a job is edited (issue 42): cuts or zoom, a hook title, or profanity masked or bleeped.
 * An edited job renders once every word is known (no overlapped render): the cuts decide the
 * output timeline the captions are laid out on.
 */
export function isEdited(job: Pick<LeasedJob, 'edit' | 'hookTitle' | 'profanity'>): boolean {
  return (job.edit ?? null) !== null || (job.hookTitle ?? null) !== null || (job.profanity ?? 'off') !== 'off';
}

/**
 * The recognizer's vocabulary for an edited job: with fillers to cut, the filler prompt of the
 * job's language too, so that whisper writes "um" and "uh" rather than dropping them (only with
 * a given language: an English prompt would pull the detection of another language).
 */
export function vocabularyFor(job: LeasedJob): string[] {
  const vocabulary = job.vocabulary ?? [];
  const fillers = job.edit?.fillers ?? 'off';
  const prompt = fillers !== 'off' && job.language ? fillerPrompt(job.language) : '';
  return prompt ? [...vocabulary, prompt] : [...vocabulary];
}

/**
 * Where the voice is, from the whisper WAV (made now for a job given its words): its voiced regions
 * and its envelope (the planner cuts in its valleys: recognized times alone clip real words; a
 * bleep covers the profane word's own sound), or undefined when neither cuts nor bleeps need them.
 */
async function voiceOf(
  job: LeasedJob,
  ingested: Ingested,
  dir: string,
  signal: AbortSignal,
): Promise<{ voiced: { start: number; end: number }[]; envelope: VoiceEnvelope } | undefined> {
  const edit = job.edit;
  const cuts = edit && !edit.keep && (edit.silences !== 'off' || edit.fillers !== 'off');
  // A bleep covers the profane word's own sound, found in the envelope too.
  if (!cuts && job.profanity !== 'bleep') return undefined;
  let wav = await ingested.audio?.catch(() => undefined);
  if (!wav || wav === ingested.source) {
    const made = path.join(dir, 'edit-16k.wav');
    wav = (await extractWhisperWav(ingested.source, made, signal)) ? made : undefined;
  }
  if (!wav) return undefined;
  const { samples, sampleRate } = await readWavSamples(wav);
  return { voiced: voicedRegions(samples, sampleRate), envelope: voiceEnvelope(samples, sampleRate) };
}

/**
 * The job's edit, planned from its words: the keep-ranges, cuts and bleeps, the words masked and on
 * the output timeline. An edit that cannot be made fails the job with its code (edit-out-of-range,
 * edit-left-nothing: neither retryable).
 */
export async function planJobEdit(o: {
  job: LeasedJob;
  ingested: Ingested;
  template: Template;
  words: readonly Word[];
  language: string | null;
  dir: string;
  signal: AbortSignal;
}): Promise<PlannedEdit> {
  const { job, ingested } = o;
  const voice = await voiceOf(job, ingested, o.dir, o.signal);
  try {
    return planEdit({
      words: o.words.map(({ text, start, end }) => ({ text, start, end })),
      sourceSeconds: ingested.info.durationSeconds,
      fps: ingested.info.fps,
      language: o.language,
      edit: job.edit ?? null,
      profanity: job.profanity ?? 'off',
      profanityWords: job.profanityWords ?? [],
      ...(voice ?? {}),
      keywords: o.template.keywords,
    });
  } catch (err) {
    if (err instanceof EditFailure) throw new JobFailure(err.code, err.message);
    throw err;
  }
}
