import { randomUUID } from 'node:crypto';
import { PLANS, PlanIdSchema, type LeasedJob, type PlanId } from '@captionfarm/contracts';
import { deadlineAt } from '../jobs/decisions.ts';
import { extendLeases, findLeaseReply, leaseNextJob, releaseLease, saveLeaseReply, type Db, type Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { editOfJob, recognitionWords } from '../jobs/record.ts';
import { framingOfJob } from '../jobs/renditions.ts';
import type { JobsService } from '../jobs/service.ts';
import { givenTranscript } from '../services/transcripts.ts';
import type { AgentNodes } from './nodes.ts';
import type { AgentTimings, LeaseCheck } from './timings.ts';

/** Leases: taking queued jobs, heartbeats that extend them, giving them back. */
export function createAgentLeases(deps: {
  db: Db;
  store: ObjectStore;
  jobs: JobsService;
  nodes: AgentNodes;
  timings: AgentTimings;
  now: () => Date;
  leasedFonts: (accountId: string, template: unknown) => Promise<LeasedJob['fonts']>;
}) {
  const { db, store, nodes, timings, now } = deps;

  async function toLeased(job: Job, plan: PlanId): Promise<LeasedJob> {
    let source: LeasedJob['source'];
    if (job.upload_id) {
      const upload = await db.selectFrom('uploads').selectAll().where('id', '=', job.upload_id).executeTakeFirstOrThrow();
      source = { kind: 'upload', url: await store.presignGet({ key: upload.object_key, expiresInSeconds: 6 * 3600 }), sizeBytes: upload.size_bytes };
    } else {
      source = { kind: 'url', url: job.video_url ?? '' };
    }
    const template = JSON.parse(job.template_json) as unknown;
    return {
      jobId: job.id,
      leaseId: job.lease_id ?? '',
      attempt: job.attempts,
      leaseExpiresAt: job.lease_expires_at ?? '',
      deadlineAt: job.deadline_at,
      source,
      templateId: job.template_id,
      template,
      overlay: job.overlay === 1,
      fonts: await deps.leasedFonts(job.account_id, template),
      format: job.format,
      quality: job.quality,
      resolution: job.req_width !== null && job.req_height !== null ? { width: job.req_width, height: job.req_height } : null,
      language: job.language,
      maxInputSeconds: PLANS[plan].maxInputSeconds,
      frameBudget: PLANS[plan].frameBudget,
      maxSourceBytes: PLANS[plan].maxUploadBytes,
      transcript: await givenTranscript(db, job.id),
      ...recognitionWords(job),
      ...editOfJob(job),
      ...framingOfJob(job),
    };
  }

  return {
    /**
     * Leases up to `slots` queued jobs, oldest first, skipping accounts at their plan's
     * concurrency (their jobs wait in `queued`). One statement per job (leaseNextJob), so two
     * agents, on any control plane, never take the same one.
     */
    async lease(nodeId: string, slots: number, requestId: string): Promise<LeasedJob[]> {
      // A lease re-sent after a reconnect, to this or another control plane, returns the same jobs.
      const replay = await findLeaseReply(db, nodeId, requestId);
      if (replay) return JSON.parse(replay) as LeasedJob[];
      const out: LeasedJob[] = [];
      if (!(await nodes.isDrained(nodeId))) {
        for (let i = 0; i < slots; i++) {
          const t = now();
          const job = await leaseNextJob(db, {
            nodeId,
            leaseId: randomUUID(),
            now: t.toISOString(),
            leaseExpiresAt: new Date(t.getTime() + timings.leaseMs).toISOString(),
            plans: Object.values(PLANS).map((p) => ({
              plan: p.id,
              concurrentJobs: p.concurrentJobs,
              firstDeadlineAt: deadlineAt(t.getTime(), timings, p.maxInputSeconds),
            })),
            defaultConcurrency: 1,
          });
          if (!job) break;
          out.push(await toLeased(job, PlanIdSchema.catch('free').parse(job.plan)));
        }
      }
      await saveLeaseReply(db, { nodeId, requestId, replyJson: JSON.stringify(out), now: now().toISOString() });
      return out;
    },

    /** Extends the node's leases; answers which of them are no longer its own (the agent aborts those). */
    async heartbeat(nodeId: string, leases: { jobId: string; leaseId: string }[]) {
      const { drain } = await nodes.touch(nodeId);
      const kept = new Set(await extendLeases(db, { nodeId, leases, until: new Date(now().getTime() + timings.leaseMs).toISOString() }));
      return { lost: leases.filter((l) => !kept.has(l.jobId)).map((l) => l.jobId), drain };
    },

    /** Gives a lease back (the agent is shutting down): the job is queued again at once. */
    async release(nodeId: string, input: { jobId: string; leaseId: string }): Promise<LeaseCheck> {
      if (await releaseLease(db, { ...input, nodeId, now: now().toISOString() })) deps.jobs.events.emit('queued', input.jobId);
      return { ok: true };
    },
  };
}
