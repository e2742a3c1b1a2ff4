import {
  contentTypeForExtension,
  type AgentCompleteInput,
  type AgentFailInput,
  type AgentIngestedInput,
  type AgentProgressInput,
  type AgentTranscribedInput,
} from '@captionfarm/contracts';
import { markOutputKey, reportProgress, type Db, type Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { deleteEndedOutputs, OUTPUT_PUT_URL_TTL_SECONDS } from '../jobs/ended-outputs.ts';
import { finishJob, type Ending } from '../jobs/finish.ts';
import { ingestJob } from '../jobs/ingest.ts';
import { posterKey, posterOf, renditionKey, renditionsOf } from '../jobs/renditions.ts';
import { saveRecognizedTranscript } from '../services/transcripts.ts';
import { allStored, checkCompletion, presignMade } from './completion.ts';
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
  const { db, store, now } = deps;

  async function end(job: Job, ending: Ending, guard?: { leaseId: string }): Promise<Job | null> {
    const ended = await db.transaction().execute((trx) => finishJob(trx, job, ending, now(), guard));
    if (ended) deps.onEnded(ended);
    return ended;
  }

  /** An agent's report the job cannot take (a bug of the agent): the job fails with `internal`, its outputs are deleted. */
  async function agentBug(job: Job, leaseId: string, failureReason: string): Promise<{ ok: false; reason: 'job-ended' }> {
    await end(job, { status: 'failed', failureCode: 'internal', failureReason }, { leaseId });
    await deleteEndedOutputs(deps, job.id);
    return { ok: false, reason: 'job-ended' };
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

    /** After ingest (jobs/ingest.ts): the job goes on, or fails with what the measured source decided. */
    async ingested(input: AgentIngestedInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      const failure = await ingestJob(deps, job, input);
      if (!failure) return { ok: true };
      const fresh = await db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
      await end(fresh, failure, { leaseId: input.leaseId });
      return { ok: false, reason: 'job-ended' };
    },

    /** The recognized words, kept before rendering and served once the job succeeds. */
    async transcribed(input: AgentTranscribedInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      await saveRecognizedTranscript(db, input, now().toISOString(), { masked: job.profanity !== 'off' });
      return { ok: true };
    },

    /**
     * A presigned PUT for one rendition (`output`, 0: the job's own) or the poster (issue 43), each
     * its own key; a retried attempt's PUTs replace the earlier attempt's objects. An index past the
     * job's renditions, or a poster it did not ask for, is the agent's bug: the job fails.
     */
    async outputUploadUrl(
      input: Holder & { sizeBytes: number; output: number; target: 'video' | 'poster' },
    ): Promise<{ ok: true; url: string } | Exclude<LeaseCheck, { ok: true }>> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check as Exclude<LeaseCheck, { ok: true }>;
      const rendition = renditionsOf(job)[input.output];
      if (input.target === 'poster' ? !posterOf(job) : !rendition) {
        const asked = input.target === 'poster' ? 'a poster' : `rendition ${input.output}`;
        return agentBug(job, input.leaseId, `The agent asked to upload ${asked}, which the job did not ask for. Retry the job.`);
      }
      const key = input.target === 'poster' ? posterKey(job.id) : renditionKey(job.id, input.output, rendition!.format);
      // Marked before the URL exists (rendition 0's key stands for all of them: outputKeysOf): should
      // the job not succeed, its outputs are debris (deleteEndedOutputs).
      await markOutputKey(db, { jobId: job.id, leaseId: input.leaseId, outputKey: renditionKey(job.id, 0, job.format) });
      const url = await store.presignPut({
        key,
        contentLength: input.sizeBytes,
        contentType: contentTypeForExtension(input.target === 'poster' ? 'jpg' : rendition!.format) ?? 'application/octet-stream',
        expiresInSeconds: OUTPUT_PUT_URL_TTL_SECONDS,
      });
      return { ok: true, url };
    },

    /**
     * The job succeeded: every rendition and the poster it asked for reported (completion.ts) and in
     * the store at their sizes. A completion that lacks one is the agent's bug and fails the job with
     * `internal`, answered like an output that did not reach storage: `job-ended`.
     */
    async complete(input: AgentCompleteInput & { nodeId: string }): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!job) return check;
      if (!check.ok) {
        if (job.status === 'succeeded') return { ok: true }; // a re-sent complete
        // Cancelled (or ended otherwise) between the output's PUT and this: nothing will serve it.
        await deleteEndedOutputs(deps, job.id);
        return check;
      }
      const checked = checkCompletion(job, input);
      if (typeof checked === 'string') return agentBug(job, input.leaseId, checked);
      if (!(await allStored(store, job.id, checked))) return agentBug(job, input.leaseId, 'The rendered output did not reach storage intact.');
      const t = now();
      const made = await presignMade(store, job.id, checked);
      const ended = await end(
        job,
        {
          status: 'succeeded',
          outputKey: renditionKey(job.id, 0, job.format),
          outputBytes: input.outputBytes,
          width: input.resolution.width,
          height: input.resolution.height,
          downloadUrl: made.renditions[0]!.downloadUrl,
          outputExpiresAt: new Date(t.getTime() + OUTPUT_TTL_SECONDS * 1000).toISOString(),
          outputsMadeJson: JSON.stringify(made.renditions),
          posterMadeJson: made.poster ? JSON.stringify(made.poster) : null,
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
