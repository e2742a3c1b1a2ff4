import { fitWords, replaceWords, type EditPlan, type LeasedJob, type Word } from '@captionfarm/contracts';
import { vocabularyFor } from './edit-stage.ts';
import { failureOf, firstLine, JobAborted, JobFailure } from './errors.ts';
import type { Ingested } from './ingest-stage.ts';
import type { JobChannel, PipelineDeps, Transcriber } from './pipeline.ts';

/** One recognition of the job's audio: its words as they come, its signal, whisper's threads per request. */
export type Recognize = (o: {
  onWords?: Parameters<Transcriber['transcribe']>[0]['onWords'];
  signal: AbortSignal;
  threads?: Parameters<Transcriber['transcribe']>[0]['threads'];
}) => Promise<Word[]>;

/**
 * The job's recognition: the transcriber on the whisper WAV, the job's replacements applied, the
 * words reported to the control plane (kept for the transcript exports) and returned to be burned.
 */
export function recognizer(o: {
  job: LeasedJob;
  channel: JobChannel;
  deps: Pick<PipelineDeps, 'transcriber'>;
  ingested: Ingested;
  /** The job's work dir. */
  dir: string;
  /**
   * An edited job's edit (issue 42), planned from the recognized words: the words reported (masked,
   * source times), the plan reported with them, and the words burned (on the output timeline).
   */
  edit?: ((words: Word[], language: string) => Promise<{ sourceWords: Word[]; plan: EditPlan; words: Word[] }>) | undefined;
}): Recognize {
  const { job, channel, ingested } = o;
  // Both come with every lease; `?? []` for a lease answered by a control plane from before them (not parsed).
  const vocabulary = vocabularyFor(job);
  const replacements = job.replacements ?? [];
  return async ({ onWords, signal, threads }) => {
    let recognized;
    try {
      const audioPath = (await ingested.audio?.catch(() => undefined)) ?? ingested.source;
      recognized = await o.deps.transcriber.transcribe({
        audioPath,
        language: job.language ?? undefined,
        ...(vocabulary.length > 0 ? { vocabulary } : {}),
        signal,
        workDir: o.dir,
        ...(onWords ? { onWords } : {}),
        ...(threads ? { threads } : {}),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw failureOf(err, 'transcriber');
    }
    // Exported words must be valid to send back as a transcript (end > start, within the source),
    // and are the words the job burns: the replacements applied first.
    const fitted = fitWords(replaceWords(recognized.words, replacements), ingested.info.durationSeconds);
    const edited = o.edit ? await o.edit(fitted, recognized.language) : undefined;
    const words = edited?.words ?? fitted;
    const kept = await channel.transcribed({
      language: recognized.language,
      languageProbability: recognized.languageProbability ?? null,
      words: (edited?.sourceWords ?? fitted).map(({ text, start, end }) => ({ text, start, end })),
      ...(recognized.checks ? { checks: recognized.checks } : {}),
      ...(edited ? { edit: edited.plan } : {}),
    });
    if (!kept.ok) throw new JobAborted(kept.reason);
    // Speech was recognized and our checks left none of it: a failure of ours, never a silent
    // success (words the job's own replacements removed are the job's choice, not a failure).
    const dropped = recognized.checks?.dropped ?? [];
    if (recognized.words.length === 0 && dropped.length > 0) {
      throw new JobFailure('transcription-failed', `every recognized word was left out by our checks (${firstLine(dropped[0]!.reason)})`);
    }
    return words;
  };
}
