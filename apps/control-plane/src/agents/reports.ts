import {
  PLANS,
  billableMinutes,
  contentTypeForExtension,
  type AgentCompleteInput,
  type AgentFailInput,
  type AgentIngestedInput,
  type AgentProgressInput,
  type AgentTranscribedInput,
} from '@captionfarm/contracts';
import {
  appendLedger,
  jobHeldMinutes,
  lockAccount,
  markOutputKey,
  minutesBalance,
  quoteIngestedJob,
  reportProgress,
  setJobDeadline,
  type Db,
  type Job,
} from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { deleteEndedOutputs, OUTPUT_PUT_URL_TTL_SECONDS } from '../jobs/ended-outputs.ts';
import { finishJob, type Ending } from '../jobs/finish.ts';
import { deadlineAt, minutesExhausted, minutesText, sourceTooLong } from '../jobs/decisions.ts';
import { givenTranscriptOutOfRange, saveRecognizedTranscript } from '../services/transcripts.ts';
import { OUTPUT_TTL_SECONDS, type AgentTimings, type LeaseCheck } from './timings.ts';

/** Who writes: the node (checked against the token by the router) and the lease it holds. */
type Holder = { nodeId: string; jobId: string; leaseId: string };

/**
 * What a lease holder reports: progress, the measured source, the output, the end. Every write is
 * guarded by the lease: its id (one per attempt) and its owner, on a job still running.
 */
export function createAgentReports(deps: {
  db: Db;
  store: ObjectStore;
  timings: AgentTimings;
  now: () => Date;
  onEnded: (job: Job) => void;
  onMinutesFreed?: (accountId: string) => void;
}) {
  const { db, store, timings, now } = deps;

  async function end(job: Job, ending: Ending, guard?: { leaseId: string }): Promise<Job | null> {
    const ended = await db.transaction().execute((trx) => finishJob(trx, job, ending, now(), guard));
    if (ended) deps.onEnded(ended);
    return ended;
  }

  async function owned(input: Holder): Promise<{ job: Job | undefined; check: LeaseCheck }> {
    const job = await db.selectFrom('jobs').selectAll().where('id', '=', input.jobId).executeTakeFirst();
    if (!job) return { job, check: { ok: false, reason: 'lease-lost' } };
    if (job.status !== 'running' && job.status !== 'queued') return { job, check: { ok: false, reason: 'job-ended' } };
    if (job.lease_id !== input.leaseId || job.lease_owner !== input.nodeId) return { job, check: { ok: false, reason: 'lease-lost' } };
    return { job, check: { ok: true } };
  }

  return {
    async progress(input: AgentProgressInput & { nodeId: string }): Promise<LeaseCheck> {
      if (await reportProgress(db, { ...input, percent: input.percent ?? null, now: now().toISOString() })) return { ok: true };
      return (await owned(input)).check;
    },

    /**
     * After ingest: quotedSeconds, the plan's duration, the resolution against the source, and
     * the minutes trued up to the measured duration (more if the balance allows, else the job fails).
     */
    async ingested(input: AgentIngestedInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      const account = await db.selectFrom('accounts').select('plan').where('id', '=', job.account_id).executeTakeFirstOrThrow();
      const plan = PLANS[account.plan];
      const seconds = Math.ceil(input.durationSeconds);
      await quoteIngestedJob(db, { jobId: job.id, leaseId: input.leaseId, quotedSeconds: seconds, now: now().toISOString() });
      const fail = async (failureCode: AgentFailInput['failureCode'], failureReason: string): Promise<LeaseCheck> => {
        const fresh = await db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
        await end(fresh, { status: 'failed', failureCode, failureReason }, { leaseId: input.leaseId });
        return { ok: false, reason: 'job-ended' };
      };
      const tooLong = sourceTooLong(plan.id, input.durationSeconds);
      if (tooLong) return fail(tooLong.failureCode, tooLong.failureReason);
      if (job.req_width !== null && job.req_height !== null && (job.req_width > input.width || job.req_height > input.height)) {
        return fail(
          'output-larger-than-source',
          `The requested ${job.req_width}x${job.req_height} is larger than the ${input.width}x${input.height} source; videos are never upscaled.`,
        );
      }
      const outOfRange = await givenTranscriptOutOfRange(db, job.id, input.durationSeconds);
      if (outOfRange) return fail('transcript-out-of-range', outOfRange);
      const needed = billableMinutes(input.durationSeconds);
      // The balance when the account cannot cover the difference, else null (trued up).
      const short = await db.transaction().execute(async (trx) => {
        await lockAccount(trx, job.account_id);
        const held = await jobHeldMinutes(trx, job.id);
        if (needed === held) return null;
        if (needed > held) {
          const balance = await minutesBalance(trx, job.account_id);
          if (balance < needed - held) return { balance: balance + held };
        }
        await appendLedger(trx, { accountId: job.account_id, jobId: job.id, kind: 'true_up', minutes: held - needed, note: `${seconds} s`, now: now() });
        return null;
      });
      if (short) {
        const exhausted = minutesExhausted(minutesText(needed), short.balance);
        return fail(exhausted.failureCode, exhausted.failureReason);
      }
      deps.onMinutesFreed?.(job.account_id);
      const deadline = deadlineAt(Date.parse(job.started_at ?? now().toISOString()), timings, input.durationSeconds);
      await setJobDeadline(db, { jobId: job.id, leaseId: input.leaseId, deadlineAt: deadline });
      return { ok: true };
    },

    /** The recognized words, kept before rendering and served once the job succeeds. */
    async transcribed(input: AgentTranscribedInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      await saveRecognizedTranscript(db, input, now().toISOString());
      return { ok: true };
    },

    async outputUploadUrl(input: Holder & { sizeBytes: number }): Promise<{ ok: true; url: string } | Exclude<LeaseCheck, { ok: true }>> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check as Exclude<LeaseCheck, { ok: true }>;
      const key = `outputs/${job.id}.${job.format}`;
      // Marked before the URL exists: should the job not succeed, its output is debris (deleteEndedOutputs).
      await markOutputKey(db, { jobId: job.id, leaseId: input.leaseId, outputKey: key });
      const url = await store.presignPut({
        key,
        contentLength: input.sizeBytes,
        contentType: contentTypeForExtension(job.format) ?? 'application/octet-stream',
        expiresInSeconds: OUTPUT_PUT_URL_TTL_SECONDS,
      });
      return { ok: true, url };
    },

    async complete(input: AgentCompleteInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!job) return check;
      if (!check.ok) {
        if (job.status === 'succeeded') return { ok: true }; // a re-sent complete
        // Cancelled (or ended otherwise) between the output's PUT and this: nothing will serve it.
        await deleteEndedOutputs(deps, job.id);
        return check;
      }
      const key = `outputs/${job.id}.${job.format}`;
      const head = await store.head(key);
      if (!head || head.sizeBytes !== input.outputBytes) {
        await end(
          job,
          { status: 'failed', failureCode: 'internal', failureReason: 'The rendered output did not reach storage intact.' },
          { leaseId: input.leaseId },
        );
        await deleteEndedOutputs(deps, job.id);
        return { ok: false, reason: 'job-ended' };
      }
      const t = now();
      const expires = new Date(t.getTime() + OUTPUT_TTL_SECONDS * 1000);
      const downloadUrl = await store.presignGet({ key, expiresInSeconds: OUTPUT_TTL_SECONDS, downloadName: `captioned-${job.id}.${job.format}` });
      const ended = await end(
        job,
        {
          status: 'succeeded',
          outputKey: key,
          outputBytes: input.outputBytes,
          width: input.resolution.width,
          height: input.resolution.height,
          downloadUrl,
          outputExpiresAt: expires.toISOString(),
        },
        { leaseId: input.leaseId },
      );
      if (ended) return { ok: true };
      await deleteEndedOutputs(deps, job.id); // cancelled meanwhile (a job still running keeps its output)
      return (await owned(input)).check;
    },

    async fail(input: AgentFailInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!job) return check;
      if (!check.ok) return job.status === 'failed' ? { ok: true } : check;
      const ended = await end(job, { status: 'failed', failureCode: input.failureCode, failureReason: input.failureReason }, { leaseId: input.leaseId });
      return ended ? { ok: true } : (await owned(input)).check;
    },
  };
}
