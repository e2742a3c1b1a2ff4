import { EventEmitter } from 'node:events';
import { ApiError, type JobList, type JobRecord, type JobStatus, type JobStyle, type PlanId } from '@captionfarm/contracts';
import { prepared, type Db, type Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import type { TemplatesService } from '../services/templates.ts';
import { prepareJob, type PreparedJob } from './body.ts';
import { createJob } from './create.ts';
import { finishJob } from './finish.ts';
import { listJobs } from './list.ts';
import type { UploadProbe } from './probe-upload.ts';
import { recognitionWords, toJobRecord } from './record.ts';

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

/** Events other parts (agents, webhooks) listen to (jobs/events.ts wires them). */
export interface JobEvents {
  queued: [jobId: string];
  cancelled: [job: Job];
  ended: [job: Job];
}
export type JobsEmitter = EventEmitter<JobEvents>;

export type UrlPolicy = (url: string) => Promise<string | null>;

export interface JobsDeps {
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
}

// The read of one job on the request path (GET /v1/automation-jobs/:id and the other reads of
// one job), compiled once (prepared).
const ownedJob = prepared((db, a: { id: string; accountId: string }) =>
  db.selectFrom('jobs').selectAll().where('id', '=', a.id).where('account_id', '=', a.accountId),
);

/** The public API's jobs: create (jobs/create.ts), get, list (jobs/list.ts), cancel, style, and their events. */
export function createJobsService(deps: JobsDeps) {
  const { db, now } = deps;
  const events: JobsEmitter = new EventEmitter<JobEvents>();

  async function getOwned(caller: Caller, id: string): Promise<Job> {
    // Another account's job answers exactly like a missing one: existence never leaks.
    const row = /^[0-9a-f-]{36}$/i.test(id) ? (await ownedJob(db, { id: id.toLowerCase(), accountId: caller.accountId }))[0] : undefined;
    if (!row) throw new ApiError('not_found', `No job ${id} in this account.`);
    return row;
  }

  /** POST /v1/automation-jobs with a body validated already (prepareJob: inline, or on the transcript worker). */
  async function createPrepared(caller: Caller, job: PreparedJob, rateCount?: CountInTransaction): Promise<JobRecord> {
    return createJob({ ...deps, events }, caller, job, rateCount);
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

  return {
    events,
    /** POST /v1/automation-jobs with a body parsed on the event loop (small ones). */
    async create(caller: Caller, body: unknown, rateCount?: CountInTransaction): Promise<JobRecord> {
      return createPrepared(caller, prepareJob(body), rateCount);
    },
    createPrepared,
    cancel,
    /** `filter.status`: the dashboard's status filter (the public list has none). */
    list(caller: Caller, query: unknown, filter: { status?: JobStatus } = {}): Promise<JobList> {
      return listJobs(deps, caller, query, filter);
    },
    async get(caller: Caller, id: string): Promise<JobRecord> {
      return toJobRecord(await getOwned(caller, id));
    },
    /** The caller's job's row (GET .../:id/outputs reads its framing columns); 404 like get. */
    owned: getOwned,
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
