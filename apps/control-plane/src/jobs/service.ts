import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  ApiError,
  PLANS,
  issuesToDetails,
  ListJobsQuerySchema,
  type JobList,
  type JobRecord,
  type JobStyle,
  type JobStatus,
  type LeasedJob,
  type PlanId,
} from '@captionfarm/contracts';
import { insertJob, lockAccount, prepared, quoteProbedJob, type Db, type Job, type NewJobRow } from '@captionfarm/db';
import { signToken, verifyToken } from '../crypto.ts';
import { reserveWaiting } from './admission.ts';
import { finishJob, type Ending } from './finish.ts';
import { toJobRecord } from './record.ts';
import { prepareJob, type PreparedJob } from './body.ts';
import { sourceTooLong } from './decisions.ts';
import { insertGivenTranscript } from '../services/transcripts.ts';
import { sourceKeyFor } from '../services/uploads.ts';
import type { TemplatesService } from '../services/templates.ts';
import type { ObjectStore } from '@captionfarm/storage';

export interface Caller {
  accountId: string;
  plan: PlanId;
}

/**
 * The request's rate-limit count, written in the create's own transaction (http/middleware.ts
 * rateLimit): `count` throws rate_limited past the plan's limit, which rolls the create back;
 * `committed` says the transaction that counted it committed.
 */
export interface CountInTransaction {
  count(trx: Db): Promise<void>;
  committed(): void;
}

/** Events other parts (agents, webhooks) listen to. */
export interface JobEvents {
  queued: [jobId: string];
  cancelled: [job: Job];
  ended: [job: Job];
}

export type UrlPolicy = (url: string) => Promise<string | null>;

/**
 * ffprobe of an uploaded object: its duration, a verdict that it can never be processed, or null
 * when the probe itself could not run (then the plan's maximum is reserved and ingest probes again).
 */
export type UploadProbe = (objectKey: string) => Promise<{ durationSeconds: number } | { unreadable: string } | null>;

// The statements of the request path (GET /v1/automation-jobs/:id and the other reads of one
// job, POST /v1/automation-jobs), compiled once (prepared).
const ownedJob = prepared((db, a: { id: string; accountId: string }) =>
  db.selectFrom('jobs').selectAll().where('id', '=', a.id).where('account_id', '=', a.accountId),
);
const lastSeq = prepared((db, a: { accountId: string }) =>
  db
    .selectFrom('jobs')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('account_id', '=', a.accountId),
);

export function createJobsService(deps: {
  db: Db;
  store: ObjectStore;
  templates: TemplatesService;
  /** null when the URL is acceptable, else the reason it is refused. */
  checkPublicUrl: UrlPolicy;
  /** Refuses font ids that are not ready fonts of the account (FontsService.requireReady). */
  requireFonts: (accountId: string, template: unknown, path: string) => Promise<void>;
  cursorKey: string;
  now: () => Date;
  /** Probes an upload when a job claims it (default: none, the plan's maximum is reserved). */
  probeUpload?: UploadProbe;
  /** Admission of an account's jobs waiting for minutes (jobs/admission.ts). */
  admit?: (accountId: string) => Promise<void>;
}) {
  const { db, store, templates, checkPublicUrl, cursorKey, now } = deps;
  const events = new EventEmitter<JobEvents>();

  async function getOwned(caller: Caller, id: string): Promise<Job> {
    // Another account's job answers exactly like a missing one: existence never leaks.
    const row = /^[0-9a-f-]{36}$/i.test(id) ? (await ownedJob(db, { id: id.toLowerCase(), accountId: caller.accountId }))[0] : undefined;
    if (!row) throw new ApiError('not_found', `No job ${id} in this account.`);
    return row;
  }

  /** POST /v1/automation-jobs with a body parsed on the event loop (small ones). */
  async function create(caller: Caller, body: unknown, rateCount?: CountInTransaction): Promise<JobRecord> {
    return createPrepared(caller, prepareJob(body), rateCount);
  }

  /** POST /v1/automation-jobs with a body validated already (prepareJob: inline, or on the transcript worker). */
  async function createPrepared(caller: Caller, job: PreparedJob, rateCount?: CountInTransaction): Promise<JobRecord> {
    const { input } = job;
    const plan = PLANS[caller.plan];
    const base = await templates.resolve(caller.accountId, input.templateId);
    if (!base) {
      throw new ApiError('invalid_request', `Unknown templateId "${input.templateId}": list the available ones with GET /v1/templates.`, {
        details: [{ path: 'templateId', message: 'unknown template' }],
      });
    }
    // The style is applied here, once: the job keeps its effective template, like a resolved one.
    let template: unknown = base;
    if (input.style) {
      const styled = templates.catalog.applyStyle(base, input.style);
      if (!styled.ok) {
        throw new ApiError('invalid_request', 'style is not valid: see details.', {
          details: issuesToDetails(styled.issues).map((d) => ({ ...d, path: d.path ? `style.${d.path}` : 'style' })),
        });
      }
      template = styled.template;
    }
    await deps.requireFonts(caller.accountId, template, input.style ? 'style.font.fontId' : 'templateId');
    // The words of recognition: the job's own, else the custom template's defaults (a job's value
    // replaces the template's, never merged), resolved now like the template. The job's template
    // keeps only what renders.
    const { vocabulary: templateVocabulary, replacements: templateReplacements, ...renderTemplate } = template as Record<string, unknown>;
    const vocabulary = input.vocabulary ?? (templateVocabulary as string[] | undefined) ?? [];
    const replacements = input.replacements ?? (templateReplacements as { from: string; to: string }[] | undefined) ?? [];
    for (const field of ['videoUrl', 'webhookUrl'] as const) {
      const url = input[field];
      if (url === undefined) continue;
      const reason = await checkPublicUrl(url);
      if (reason) {
        throw new ApiError('invalid_request', `${field} is not accepted: ${reason}.`, { details: [{ path: field, message: reason }] });
      }
    }
    if (input.resolution && input.resolution.width * input.resolution.height > plan.frameBudget) {
      throw new ApiError(
        'limit_exceeded',
        `resolution ${input.resolution.width}x${input.resolution.height} is over the ${caller.plan} plan's ` +
          `frame budget of ${plan.frameBudget} pixels; request a smaller size or upgrade.`,
        { details: [{ path: 'resolution', message: `at most ${plan.frameBudget} pixels (width x height)` }] },
      );
    }

    const id = randomUUID();
    // A claimed upload is sealed and probed before the transaction (a copy on S3 and ffprobe take
    // time; a transaction holds the database): sealing puts the bytes out of reach of the upload's
    // presigned PUT URL, which stays valid for its 15 minutes (ObjectStore.seal), and the probe
    // reads the sealed bytes, the ones the job will process.
    let sealed: { uploadKey: string; key: string } | undefined;
    let probe: Awaited<ReturnType<UploadProbe>> = null;
    if (input.uploadId) {
      const upload = await db
        .selectFrom('uploads')
        .select(['object_key', 'size_bytes', 'claimed_by_job_id', 'deleted_at'])
        .where('id', '=', input.uploadId)
        .where('account_id', '=', caller.accountId)
        .executeTakeFirst();
      if (upload && upload.claimed_by_job_id === null && upload.deleted_at === null && (await store.head(upload.object_key))?.sizeBytes === upload.size_bytes) {
        sealed = { uploadKey: upload.object_key, key: await store.seal(upload.object_key, sourceKeyFor(id, upload.object_key)) };
        if (deps.probeUpload) probe = await deps.probeUpload(sealed.key);
      }
    }
    /** Removes the copy a failed create made (the upload stays as it was, for another try). */
    const dropCopy = async () => {
      if (sealed && sealed.key !== sealed.uploadKey) await store.delete(sealed.key).catch(() => undefined);
    };
    const probeEnding: Ending | null =
      probe && 'unreadable' in probe
        ? { status: 'failed', failureCode: 'source-unreadable', failureReason: probe.unreadable }
        : probe
          ? sourceTooLong(caller.plan, probe.durationSeconds)
          : null;

    const t = now();
    const iso = t.toISOString();
    let reserved: string[] = [];
    const created = db.transaction().execute(async (trx) => {
      // The request's own rate-limit count, in the same write: past the limit nothing is created.
      await rateCount?.count(trx);
      // Another control plane's create for this account waits here: the balance cannot be spent twice.
      await lockAccount(trx, caller.accountId);
      if (input.uploadId) {
        const upload = await trx
          .selectFrom('uploads')
          .selectAll()
          .where('id', '=', input.uploadId)
          .where('account_id', '=', caller.accountId)
          .executeTakeFirst();
        // A used upload stays "already used" after its job ended and its file was removed.
        if (upload?.claimed_by_job_id)
          throw new ApiError('upload_already_used', `Upload ${input.uploadId} was already used by job ${upload.claimed_by_job_id}; create a new upload.`);
        if (!upload || upload.deleted_at !== null)
          throw new ApiError('not_found', `No upload ${input.uploadId} in this account (unused uploads are removed after 24 hours).`);
        // Not sealed: the upload was not complete when we looked (or it changed since): no claim.
        const head = sealed?.uploadKey === upload.object_key ? await store.head(sealed.key) : null;
        if (!sealed || !head || head.sizeBytes !== upload.size_bytes) {
          throw new ApiError(
            'upload_not_completed',
            `Upload ${input.uploadId} has not been completed: PUT the ${upload.size_bytes} bytes to its uploadUrl first.`,
          );
        }
        // From now on the upload's object is the sealed one: the job reads it, its end deletes it.
        const claimed = await trx
          .updateTable('uploads')
          .set({ claimed_by_job_id: id, completed_at: upload.completed_at ?? iso, object_key: sealed.key })
          .where('id', '=', upload.id)
          .where('claimed_by_job_id', 'is', null)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) !== 1) throw new ApiError('upload_already_used', `Upload ${input.uploadId} was already used; create a new upload.`);
        if (probe && 'durationSeconds' in probe)
          await trx.updateTable('uploads').set({ duration_seconds: probe.durationSeconds }).where('id', '=', upload.id).execute();
      }
      // The account's creation order (the list's order): under the account lock, so no two jobs share a place.
      const [last] = await lastSeq(trx, { accountId: caller.accountId });
      const values: NewJobRow = {
        id,
        account_id: caller.accountId,
        status: 'queued',
        phase: 'queued',
        template_id: input.templateId,
        template_json: JSON.stringify(renderTemplate),
        video_url: input.videoUrl ?? null,
        upload_id: input.uploadId ?? null,
        format: input.format,
        quality: input.quality,
        overlay: input.overlay ? 1 : 0,
        style_json: input.style ? JSON.stringify(input.style) : null,
        req_width: input.resolution?.width ?? null,
        req_height: input.resolution?.height ?? null,
        language: input.language ?? null,
        detected_language: null,
        webhook_url: input.webhookUrl ?? null,
        quoted_seconds: null,
        out_width: null,
        out_height: null,
        percent: null,
        output_key: null,
        output_bytes: null,
        download_url: null,
        output_expires_at: null,
        failure_code: null,
        failure_reason: null,
        settled_at: null,
        created_at: iso,
        updated_at: iso,
        started_at: null,
        finished_at: null,
        deadline_at: null,
        lease_id: null,
        lease_owner: null,
        seq: (last?.seq ?? 0) + 1,
        lease_expires_at: null,
        reserved_at: null,
        vocabulary_json: vocabulary.length > 0 ? JSON.stringify(vocabulary) : null,
        replacements_json: replacements.length > 0 ? JSON.stringify(replacements) : null,
      };
      await insertJob(trx, values);
      await insertGivenTranscript(trx, id, job.transcript, iso);
      // Minutes are reserved now when the balance covers them (jobs/admission.ts); a job it
      // cannot cover waits in `queued`. A job that will never run holds nothing.
      if (!probeEnding) reserved = (await reserveWaiting(trx, caller.accountId, caller.plan, t, false)).reserved;
      // The row as this transaction left it (`attempts` at its column default, `reserved_at` as
      // admission set it), without reading it back: an agent may lease it once committed, and the
      // spec's 202 always carries `queued`.
      return { ...values, attempts: 0, reserved_at: reserved.includes(id) ? iso : null };
    });
    const row = await created.catch(async (err: unknown) => {
      await dropCopy();
      throw err;
    });
    rateCount?.committed();
    // The claim holds: the upload's own key has served its purpose (a PUT after this lands there,
    // out of the job's way, and the job's end deletes it again: UploadsService.deleteEndedSources).
    if (sealed && sealed.key !== sealed.uploadKey) await store.delete(sealed.uploadKey).catch(() => undefined);
    // The spec's 202 always carries `queued`. What can be known only now ends the job right
    // after, as a failure with its webhook: an unreadable or too long upload, no minutes left.
    for (const jobId of reserved) events.emit('queued', jobId);
    if (probeEnding) {
      const ended = await db.transaction().execute(async (trx) => {
        // What the probe measured, as ingest would have reported it.
        if (probe && 'durationSeconds' in probe) await quoteProbedJob(trx, { jobId: id, quotedSeconds: Math.ceil(probe.durationSeconds) });
        return finishJob(trx, row, probeEnding, now());
      });
      if (ended) events.emit('ended', ended);
    } else if (!reserved.includes(id)) {
      // The sweeper runs admission again should this fail.
      await deps.admit?.(caller.accountId).catch(() => undefined);
    }
    return toJobRecord(row);
  }

  async function cancel(caller: Caller, id: string): Promise<JobRecord> {
    const job = await getOwned(caller, id);
    if (job.status === 'cancelled') return toJobRecord(job);
    if (job.status === 'succeeded' || job.status === 'failed') {
      throw new ApiError('job_not_cancellable', `Job ${job.id} already ${job.status}; only queued or running jobs can be cancelled.`);
    }
    const ended = await db.transaction().execute((trx) => finishJob(trx, job, { status: 'cancelled' }, now()));
    if (!ended) {
      // It ended between our read and the update: answer with what it became.
      const fresh = await getOwned(caller, id);
      if (fresh.status === 'cancelled') return toJobRecord(fresh);
      throw new ApiError('job_not_cancellable', `Job ${fresh.id} already ${fresh.status}; only queued or running jobs can be cancelled.`);
    }
    events.emit('cancelled', { ...job, ...ended, lease_owner: job.lease_owner, lease_id: job.lease_id });
    events.emit('ended', ended);
    return toJobRecord(ended);
  }

  /**
   * A cursor signed before `jobs.seq` (migration 0013) names its last job by (created_at, id), the
   * list's order then. Migration 0013 numbered the jobs in that same order, so the page goes on
   * before that job's number: a client paging across the upgrade neither skips nor repeats a job.
   * A job deleted since does not end its walk: the newest job that came before its place is found
   * by reading the account's jobs (once per walk; no index keeps that old order any more).
   */
  async function seqAfterOldCursor(accountId: string, createdAt: string, jobId: string): Promise<number> {
    const named = await db
      .selectFrom('jobs')
      .select('seq')
      .where('id', '=', jobId)
      .where('account_id', '=', accountId)
      .where('created_at', '=', createdAt)
      .executeTakeFirst();
    if (named?.seq != null) return named.seq;
    const prev = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', jobId)])]))
      .executeTakeFirst();
    // Nothing before it: an empty page, as the old cursor would have given.
    return (prev?.seq ?? 0) + 1;
  }

  /** `filter.status`: the dashboard's status filter (the public list has none). */
  async function list(caller: Caller, query: unknown, filter: { status?: JobStatus } = {}): Promise<JobList> {
    const parsed = ListJobsQuerySchema.safeParse(query);
    if (!parsed.success) throw new ApiError('invalid_request', 'Invalid list query: see details.', { details: issuesToDetails(parsed.error.issues) });
    const { cursor, limit } = parsed.data;
    // The cursor is the last listed job's place in the account's creation order (jobs.seq):
    // jobs created in the same millisecond keep their creation order, on SQLite and PostgreSQL.
    let after: number | undefined;
    if (cursor) {
      const v = verifyToken(cursor, cursorKey) as { a?: string; s?: number; c?: string; i?: string } | undefined;
      if (v && v.a === caller.accountId && typeof v.s === 'number') after = v.s;
      else if (v && v.a === caller.accountId && typeof v.c === 'string' && typeof v.i === 'string') after = await seqAfterOldCursor(caller.accountId, v.c, v.i);
      else throw new ApiError('invalid_request', 'cursor is not valid: pass nextCursor from a previous response unchanged.');
    }
    let q = db.selectFrom('jobs').selectAll().where('account_id', '=', caller.accountId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (after !== undefined) q = q.where('seq', '<', after);
    const rows = await q
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      jobs: page.map(toJobRecord),
      nextCursor: rows.length > limit && last ? signToken({ a: caller.accountId, s: last.seq ?? 0 }, cursorKey) : null,
    };
  }

  return {
    events,
    create,
    createPrepared,
    cancel,
    list,
    async get(caller: Caller, id: string): Promise<JobRecord> {
      return toJobRecord(await getOwned(caller, id));
    },
    /** The job's effective style: its template with the per-job style applied, and the words of recognition. */
    async style(caller: Caller, id: string): Promise<JobStyle> {
      const job = await getOwned(caller, id);
      return {
        jobId: job.id,
        templateId: job.template_id,
        overlay: job.overlay === 1,
        override: job.style_json === null ? null : (JSON.parse(job.style_json) as Record<string, unknown>),
        style: JSON.parse(job.template_json) as Record<string, unknown>,
        ...recognitionWords(job),
      };
    },
  };
}
export type JobsService = ReturnType<typeof createJobsService>;

/** A job's vocabulary and replacements (its own, else its template's, resolved at creation). */
export function recognitionWords(job: Pick<Job, 'vocabulary_json' | 'replacements_json'>): Pick<LeasedJob, 'vocabulary' | 'replacements'> {
  return {
    vocabulary: job.vocabulary_json === null ? [] : (JSON.parse(job.vocabulary_json) as string[]),
    replacements: job.replacements_json === null ? [] : (JSON.parse(job.replacements_json) as { from: string; to: string }[]),
  };
}
