import {
  ApiError,
  issuesToDetails,
  TRANSCRIPT_CONTENT_TYPES,
  TranscriptQuerySchema,
  type AgentTranscribedInput,
  type LeasedJob,
  type TranscriptRecord,
} from '@captionfarm/contracts';
import type { Database, Db } from '@captionfarm/db';
import type { Kysely, Transaction } from 'kysely';
import type { TranscriptWork } from '../transcript-work.ts';
import type { GivenTranscript } from '../jobs/body.ts';
import { exportTranscript, editOfPlan } from './output-timeline.ts';
import type { Caller, JobsService } from '../jobs/service.ts';

type Words = TranscriptRecord['words'];
type Writer = Kysely<Database> | Transaction<Database>;

const wordsOnly = (words: readonly { text: string; start: number; end: number }[]): Words => words.map(({ text, start, end }) => ({ text, start, end }));

/** Stores the transcript given at creation, in the transaction that inserts the job. */
export async function insertGivenTranscript(trx: Writer, jobId: string, t: GivenTranscript | null, iso: string): Promise<void> {
  if (!t) return;
  await trx
    .insertInto('job_transcripts')
    .values({
      job_id: jobId,
      origin: 'given',
      language: t.language,
      language_probability: null,
      word_count: t.wordCount,
      words: t.wordsJson,
      created_at: iso,
      updated_at: iso,
    })
    .execute();
}

/** The given transcript of a job, as the agent receives it with its lease (null: recognize speech). */
export async function givenTranscript(db: Db, jobId: string): Promise<LeasedJob['transcript']> {
  const row = await db.selectFrom('job_transcripts').select(['language', 'words']).where('job_id', '=', jobId).where('origin', '=', 'given').executeTakeFirst();
  return row ? { language: row.language, words: JSON.parse(row.words) as Words } : null;
}

/**
 * After ingest: a given transcript must lie within the source. Returns why not (the job then fails
 * with `transcript-out-of-range`), or null. 1 ms of slack for times rounded to the millisecond.
 */
export async function givenTranscriptOutOfRange(db: Db, jobId: string, durationSeconds: number): Promise<string | null> {
  const given = await givenTranscript(db, jobId);
  if (!given) return null;
  const i = given.words.findIndex((w) => w.end > durationSeconds + 0.001);
  if (i === -1) return null;
  const w = given.words[i]!;
  return (
    `Word ${i} ("${w.text.slice(0, 64)}") of the given transcript ends at ${w.end} s, after the end of ` +
    `the ${Math.round(durationSeconds * 1000) / 1000} s video; fix its times and create the job again.`
  );
}

/**
 * The agent's words and the edit plan it made of them (idempotent: a re-sent or retried attempt
 * replaces both). A given transcript's words are kept, but its plan is stored all the same: the
 * agent plans the edit on the words it burns, given or recognized (issue 42). With `masked` (the
 * job masks or bleeps profanity) the given words take the agent's text, the same words with their
 * profane ones masked, so that the exports show what the video shows; only when the agent sent as
 * many words as were given (the times stay the given ones).
 */
export async function saveRecognizedTranscript(db: Db, input: AgentTranscribedInput, iso: string, o: { masked: boolean }): Promise<void> {
  const editJson = input.edit ? JSON.stringify(input.edit) : null;
  const words = wordsOnly(input.words);
  const values = {
    language: input.language,
    language_probability: input.languageProbability,
    word_count: words.length,
    words: JSON.stringify(words),
    updated_at: iso,
    edit_json: editJson,
  };
  await db
    .insertInto('job_transcripts')
    .values({ job_id: input.jobId, origin: 'recognized', created_at: iso, ...values })
    .onConflict((oc) => oc.column('job_id').doUpdateSet(values).where('job_transcripts.origin', '=', 'recognized'))
    .execute();
  const given = db.updateTable('job_transcripts').where('job_id', '=', input.jobId).where('origin', '=', 'given');
  await given.set({ edit_json: editJson, updated_at: iso }).execute();
  if (o.masked) await maskGivenWords(db, input.jobId, words);
}

/** A given transcript's words with the agent's (masked) text, their times kept; nothing when the counts differ. */
async function maskGivenWords(db: Db, jobId: string, sent: Words): Promise<void> {
  const row = await db.selectFrom('job_transcripts').select('words').where('job_id', '=', jobId).where('origin', '=', 'given').executeTakeFirst();
  if (!row) return;
  const stored = JSON.parse(row.words) as Words;
  if (stored.length !== sent.length) return;
  const masked = stored.map((w, i) => ({ text: sent[i]!.text, start: w.start, end: w.end }));
  await db
    .updateTable('job_transcripts')
    .set({ words: JSON.stringify(masked) })
    .where('job_id', '=', jobId)
    .where('origin', '=', 'given')
    .execute();
}

export type TranscriptExport =
  | { kind: 'json'; body: TranscriptRecord | Buffer }
  | { kind: 'text'; contentType: string; fileName: string; body: string | Buffer };

/** Transcripts up to this many words are exported on the event loop (about a millisecond); longer ones on the transcript worker. */
const INLINE_EXPORT_WORDS = 500;

/**
 * GET /v1/automation-jobs/:id/transcript[?format=json|srt|vtt]. An edited job's JSON words carry
 * their output times as well (outputStart/outputEnd, null when cut); its SRT and VTT are on the
 * output timeline, the cut words left out, because they go with the output video (output-timeline.ts).
 */
export function createTranscriptsService(deps: { db: Db; jobs: Pick<JobsService, 'get'>; work: Pick<TranscriptWork, 'export'> }) {
  const { db, jobs } = deps;
  return {
    async get(caller: Caller, id: string, query: unknown, signal?: AbortSignal): Promise<TranscriptExport> {
      // Ownership first: another account's job, or a malformed id, is 404 whatever the query says.
      const job = await jobs.get(caller, id);
      const parsed = TranscriptQuerySchema.safeParse(query ?? {});
      if (!parsed.success) {
        throw new ApiError('invalid_request', 'Invalid transcript query: format is json, srt or vtt.', { details: issuesToDetails(parsed.error.issues) });
      }
      if (job.status !== 'succeeded') {
        const when = job.status === 'queued' || job.status === 'running' ? 'once it has succeeded; poll the job until then' : 'only for succeeded jobs';
        throw new ApiError('transcript_not_available', `Job ${job.id} is ${job.status} (phase ${job.phase}); its transcript is available ${when}.`, {
          details: [{ path: 'status', message: job.status }],
        });
      }
      const row = await db.selectFrom('job_transcripts').selectAll().where('job_id', '=', job.id).executeTakeFirst();
      if (!row) {
        throw new ApiError('transcript_not_available', `Job ${job.id} ran before transcripts were kept; run it again to get one.`);
      }
      const { format } = parsed.data;
      if (row.word_count > INLINE_EXPORT_WORDS) {
        const body = await deps.work.export(
          caller.accountId,
          { format, wordsJson: row.words, language: row.language, languageProbability: row.language_probability, editJson: row.edit_json },
          signal,
        );
        if (format === 'json') return { kind: 'json', body };
        return { kind: 'text', contentType: TRANSCRIPT_CONTENT_TYPES[format], fileName: `${job.id}.${format}`, body };
      }
      const stored = {
        words: JSON.parse(row.words) as Words,
        language: row.language,
        languageProbability: row.language_probability,
        edit: editOfPlan(row.edit_json),
      };
      if (format === 'json') return { kind: 'json', body: exportTranscript(format, stored) };
      return { kind: 'text', contentType: TRANSCRIPT_CONTENT_TYPES[format], fileName: `${job.id}.${format}`, body: exportTranscript(format, stored) };
    },
  };
}
export type TranscriptsService = ReturnType<typeof createTranscriptsService>;
