import type { FailureCode } from '@captionfarm/contracts';
import { forgetOutputs, requeueExpiredLeases, type Db, type FailSweep, type Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { deleteEndedOutputs } from '../jobs/ended-outputs.ts';
import { finishSwept } from '../jobs/finish.ts';
import { OUTPUT_KEY_COLUMNS, outputKeysOf } from '../jobs/renditions.ts';
import type { JobsService } from '../jobs/service.ts';
import type { AgentHub } from './hub.ts';
import type { AgentNodes } from './nodes.ts';
import type { AgentTimings } from './timings.ts';

/**
 * Succeeded jobs whose output expired. Only a succeeded job has `output_expires_at` (a running or
 * unsuccessful one may have `output_key`: jobs/ended-outputs.ts), so no status here: the
 * partial index of kept outputs (jobs_output_kept) is read, not every succeeded job ever through
 * the status (sweep-plans.test.ts checks the plan).
 */
export const expiredOutputs = (db: Db, now: string) =>
  db
    .selectFrom('jobs')
    .select([...OUTPUT_KEY_COLUMNS, 'output_key'])
    .where('output_key', 'is not', null)
    .where('output_expires_at', '<', now);

/**
 * The job sweepers. Each is a set-based statement, safe to run in every control plane at once:
 * a row changes state once, whichever process's UPDATE gets it.
 * - expired leases with attempts left go back to the queue; those without fail with `internal`;
 * - jobs past their deadline fail with `timed-out` (the node that held one is told to stop);
 * - outputs past their 7 days are deleted, and those of jobs that did not succeed; silent nodes go offline.
 */
export function createAgentSweeper(deps: {
  db: Db;
  store: ObjectStore;
  hub: AgentHub;
  jobs: JobsService;
  nodes: AgentNodes;
  timings: AgentTimings;
  now: () => Date;
  onEnded: (job: Job) => void;
}) {
  const { db, store, hub, timings, now } = deps;

  async function failAll(sweep: FailSweep, failureCode: FailureCode, failureReason: string): Promise<Job[]> {
    const ended = await finishSwept(db, { sweep, failureCode, failureReason }, now());
    for (const job of ended) deps.onEnded(job);
    return ended;
  }

  /** Jobs whose agent is gone (lease expired, or `owner`'s websocket closed past the grace): queued again, or failed after maxAttempts. */
  async function requeueOrFail(owner?: string): Promise<void> {
    const iso = now().toISOString();
    for (const id of await requeueExpiredLeases(db, { now: iso, maxAttempts: timings.maxAttempts, owner })) deps.jobs.events.emit('queued', id);
    await failAll(
      { kind: 'leases-exhausted', maxAttempts: timings.maxAttempts, owner },
      'internal',
      `The job lost its agent ${timings.maxAttempts} times; retry it.`,
    );
  }

  async function sweep(): Promise<void> {
    const iso = now().toISOString();
    await requeueOrFail();
    const late = await failAll({ kind: 'past-deadline' }, 'timed-out', 'Processing took longer than the deadline (15 min + 3x the video duration).');
    for (const job of late) if (job.lease_owner) hub.push(job.lease_owner, { type: 'cancel', jobId: job.id });

    const stale = await expiredOutputs(db, iso).execute();
    // Every rendition and the poster (issue 43), not only the job's own output.
    for (const job of stale) for (const key of outputKeysOf(job)) await store.delete(key);
    await forgetOutputs(
      db,
      stale.map((j) => j.id),
    );
    await deleteEndedOutputs(deps);
    await deps.nodes.sweepSilent();
  }

  return {
    sweep,
    /**
     * The node's last websocket closed and it did not come back within the grace: it is dead (a
     * crash, kill -9, a cut cable), so its jobs are queued again now rather than showing their old
     * phase and percent until the lease expires (30-60 s).
     */
    async nodeGone(nodeId: string): Promise<void> {
      await db.updateTable('agent_nodes').set({ state: 'offline' }).where('id', '=', nodeId).execute();
      await requeueOrFail(nodeId);
    },
  };
}
