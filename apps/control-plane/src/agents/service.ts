import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  PLANS,
  billableMinutes,
  type AgentCapabilities,
  type AgentCompleteInput,
  type AgentFailInput,
  type AgentIngestedInput,
  type AgentProgressInput,
  type AgentTranscribedInput,
  type LeasedJob,
  type PlanId,
} from '@captionfarm/contracts';
import { appendLedger, jobHeldMinutes, minutesBalance, type Db, type Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { generateAgentToken, hashSecret } from '../crypto.ts';
import { finishJob, type Ending } from '../services/finish-job.ts';
import type { JobsService } from '../services/jobs.ts';
import { givenTranscript, givenTranscriptOutOfRange, saveRecognizedTranscript } from '../services/transcripts.ts';
import type { AgentHub } from './hub.ts';

export const OUTPUT_TTL_SECONDS = 7 * 24 * 3600;

export interface AgentTimings {
  /** A lease lasts this long without a heartbeat. */
  leaseMs: number;
  /** Attempts before a job that keeps losing its agent fails with `internal`. */
  maxAttempts: number;
  /** Deadline = first lease + base + perInputSecond x input seconds (ARCHITECTURE: 15 min + 3x). */
  deadlineBaseMs: number;
  deadlinePerInputSecond: number;
  /** A node whose last websocket closed loses its leases after this grace (a reconnect within it keeps them). */
  disconnectGraceMs: number;
}

export const DEFAULT_AGENT_TIMINGS: AgentTimings = { leaseMs: 30_000, maxAttempts: 3, deadlineBaseMs: 15 * 60_000, deadlinePerInputSecond: 3, disconnectGraceMs: 5_000 };

export type LeaseCheck = { ok: true } | { ok: false; reason: 'lease-lost' | 'job-ended' };

const CONTENT_TYPES: Record<string, string> = { mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime' };

export function createAgentsService(deps: {
  db: Db;
  store: ObjectStore;
  hub: AgentHub;
  jobs: JobsService;
  timings: AgentTimings;
  now: () => Date;
  onEnded: (job: Job) => void;
  /** Presigned GETs of the uploaded fonts a job's template names (FontsService.leasedFonts). */
  leasedFonts: (accountId: string, template: unknown) => Promise<LeasedJob['fonts']>;
  /** Minutes came back to an account (a true-up below the reservation): its waiting jobs may run. */
  onMinutesFreed?: (accountId: string) => void;
}) {
  const { db, store, hub, timings, now } = deps;
  const concurrencyCase = sql.raw(
    `case a.plan ${Object.values(PLANS)
      .map((p) => `when '${p.id}' then ${p.concurrentJobs}`)
      .join(' ')} else 1 end`,
  );
  /** Lease results by (node, request id): a lease re-sent after a reconnect returns the same jobs. */
  const leaseReplies = new Map<string, LeasedJob[]>();

  async function end(job: Job, ending: Ending, guard?: { leaseId: string }): Promise<Job | null> {
    const ended = await db.transaction().execute((trx) => finishJob(trx, job, ending, now(), guard));
    if (ended) deps.onEnded(ended);
    return ended;
  }

  async function owned(input: { jobId: string; leaseId: string }): Promise<{ job: Job | undefined; check: LeaseCheck }> {
    const job = await db.selectFrom('jobs').selectAll().where('id', '=', input.jobId).executeTakeFirst();
    if (!job) return { job, check: { ok: false, reason: 'lease-lost' } };
    if (job.status !== 'running' && job.status !== 'queued') return { job, check: { ok: false, reason: 'job-ended' } };
    if (job.lease_id !== input.leaseId) return { job, check: { ok: false, reason: 'lease-lost' } };
    return { job, check: { ok: true } };
  }

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
      format: job.format as LeasedJob['format'],
      quality: job.quality as LeasedJob['quality'],
      overlay: job.overlay === 1,
      fonts: await deps.leasedFonts(job.account_id, template),
      resolution: job.req_width !== null && job.req_height !== null ? { width: job.req_width, height: job.req_height } : null,
      language: job.language,
      maxInputSeconds: PLANS[plan].maxInputSeconds,
      frameBudget: PLANS[plan].frameBudget,
      maxSourceBytes: PLANS[plan].maxUploadBytes,
      transcript: await givenTranscript(db, job.id),
    };
  }

  /**
   * A job whose agent is gone (lease expired, or its websocket closed past the grace) goes back
   * to the queue as a fresh `queued` record, or fails with `internal` after `maxAttempts`
   * attempts. Guarded by the lease id it had, so a job finished or re-leased meanwhile is left alone.
   */
  async function requeueOrFail(job: Job): Promise<void> {
    if (job.attempts >= timings.maxAttempts) {
      await end(job, { status: 'failed', failureCode: 'internal', failureReason: `The job lost its agent ${job.attempts} times; retry it.` }, { leaseId: job.lease_id ?? '' });
      return;
    }
    const res = await db
      .updateTable('jobs')
      .set({ status: 'queued', phase: 'queued', percent: null, lease_id: null, lease_owner: null, lease_expires_at: null, updated_at: now().toISOString() })
      .where('id', '=', job.id)
      .where('lease_id', '=', job.lease_id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) deps.jobs.events.emit('queued', job.id);
  }

  const service = {
    /** Called with each node that registers (the server tells online nodes about new work). */
    onRegistered: (_nodeId: string): void => undefined,
    async createToken(name: string | null) {
      const token = generateAgentToken();
      const id = randomUUID();
      await db.insertInto('agent_tokens').values({ id, hash: hashSecret(token), prefix: token.slice(0, 13), name, created_at: now().toISOString(), revoked_at: null }).execute();
      return { id, token, name };
    },
    async authenticate(token: string): Promise<{ tokenId: string } | null> {
      const row = await db.selectFrom('agent_tokens').select(['id', 'revoked_at']).where('hash', '=', hashSecret(token)).executeTakeFirst();
      return row && row.revoked_at === null ? { tokenId: row.id } : null;
    },

    async register(tokenId: string, nodeName: string, capabilities: AgentCapabilities) {
      const t = now().toISOString();
      const existing = await db.selectFrom('agent_nodes').selectAll().where('token_id', '=', tokenId).where('name', '=', nodeName).executeTakeFirst();
      if (existing) {
        await db.updateTable('agent_nodes').set({ capabilities: JSON.stringify(capabilities), state: 'online', connected_at: t, last_heartbeat_at: t }).where('id', '=', existing.id).execute();
        service.onRegistered(existing.id);
        return { nodeId: existing.id, drain: existing.drain === 1, leaseMs: timings.leaseMs };
      }
      const id = randomUUID();
      await db.insertInto('agent_nodes').values({ id, name: nodeName, token_id: tokenId, capabilities: JSON.stringify(capabilities), state: 'online', connected_at: t, last_heartbeat_at: t, created_at: t }).execute();
      service.onRegistered(id);
      return { nodeId: id, drain: false, leaseMs: timings.leaseMs };
    },
    async nodeOf(tokenId: string, nodeId: string) {
      return db.selectFrom('agent_nodes').selectAll().where('id', '=', nodeId).where('token_id', '=', tokenId).executeTakeFirst();
    },

    /**
     * Leases up to `slots` queued jobs, oldest first, skipping accounts at their plan's
     * concurrency and jobs still waiting for minutes (both wait in `queued`). One UPDATE ... RETURNING per job, so two agents
     * can never take the same one.
     */
    async lease(nodeId: string, slots: number, requestId: string): Promise<LeasedJob[]> {
      const key = `${nodeId}:${requestId}`;
      const replay = leaseReplies.get(key);
      if (replay) return replay;
      const node = await db.selectFrom('agent_nodes').select(['drain']).where('id', '=', nodeId).executeTakeFirst();
      const out: LeasedJob[] = [];
      if (node && node.drain === 0) {
        for (let i = 0; i < slots; i++) {
          const t = now();
          const iso = t.toISOString();
          const leaseId = randomUUID();
          const row = await sql<Job & { plan: PlanId }>`
            update jobs set status = 'running', phase = 'ingesting', percent = null,
              lease_id = ${leaseId}, lease_owner = ${nodeId}, lease_expires_at = ${new Date(t.getTime() + timings.leaseMs).toISOString()},
              attempts = attempts + 1, started_at = coalesce(started_at, ${iso}), updated_at = ${iso}
            where id = (
              select j.id from jobs j join accounts a on a.id = j.account_id
              where j.status = 'queued'
                and exists (select 1 from minutes_ledger l where l.job_id = j.id and l.kind = 'reserve')
                and (select count(*) from jobs r where r.account_id = j.account_id and r.status = 'running') < ${concurrencyCase}
              order by j.created_at, j.id limit 1)
            and status = 'queued'
            returning *, (select plan from accounts where accounts.id = jobs.account_id) as plan`.execute(db);
          const job = row.rows[0];
          if (!job) break;
          if (job.deadline_at === null) {
            const maxInput = PLANS[job.plan].maxInputSeconds;
            const deadline = new Date(Date.parse(job.started_at ?? iso) + timings.deadlineBaseMs + timings.deadlinePerInputSecond * maxInput * 1000).toISOString();
            await db.updateTable('jobs').set({ deadline_at: deadline }).where('id', '=', job.id).execute();
            job.deadline_at = deadline;
          }
          out.push(await toLeased(job, job.plan));
        }
      }
      leaseReplies.set(key, out);
      if (leaseReplies.size > 5000) leaseReplies.delete(leaseReplies.keys().next().value as string);
      return out;
    },

    /** Extends the node's leases; answers which of them are no longer its own (the agent aborts those). */
    async heartbeat(nodeId: string, leases: { jobId: string; leaseId: string }[]) {
      const t = now();
      await db.updateTable('agent_nodes').set({ last_heartbeat_at: t.toISOString(), state: 'online' }).where('id', '=', nodeId).execute();
      const lost: string[] = [];
      for (const l of leases) {
        const res = await db
          .updateTable('jobs')
          .set({ lease_expires_at: new Date(t.getTime() + timings.leaseMs).toISOString() })
          .where('id', '=', l.jobId)
          .where('lease_id', '=', l.leaseId)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) lost.push(l.jobId);
      }
      const node = await db.selectFrom('agent_nodes').select('drain').where('id', '=', nodeId).executeTakeFirst();
      return { lost, drain: node?.drain === 1 };
    },

    async progress(input: AgentProgressInput): Promise<LeaseCheck> {
      const t = now().toISOString();
      // percent only grows within rendering; a phase change resets it.
      const res = await sql`
        update jobs set phase = ${input.phase},
          percent = case when ${input.phase} = 'rendering' then max(coalesce(case when phase = 'rendering' then percent end, 0), ${input.percent ?? 0}) else null end,
          updated_at = ${t}
        where id = ${input.jobId} and lease_id = ${input.leaseId} and status = 'running'`.execute(db);
      if (Number(res.numAffectedRows ?? 0) === 1) return { ok: true };
      return (await owned(input)).check;
    },

    /**
     * After ingest: quotedSeconds, the plan's duration, the resolution against the source, and
     * the minutes trued up to the measured duration (more if the balance allows, else the job fails).
     */
    async ingested(input: AgentIngestedInput): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      const account = await db.selectFrom('accounts').select('plan').where('id', '=', job.account_id).executeTakeFirstOrThrow();
      const plan = PLANS[account.plan as PlanId];
      const seconds = Math.ceil(input.durationSeconds);
      await db.updateTable('jobs').set({ quoted_seconds: seconds, updated_at: now().toISOString() }).where('id', '=', job.id).where('lease_id', '=', input.leaseId).execute();
      const fail = async (failureCode: AgentFailInput['failureCode'], failureReason: string): Promise<LeaseCheck> => {
        const fresh = await db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
        await end(fresh, { status: 'failed', failureCode, failureReason }, { leaseId: input.leaseId });
        return { ok: false, reason: 'job-ended' };
      };
      if (input.durationSeconds > plan.maxInputSeconds) {
        return fail('source-too-long', `The video is ${seconds} s long; the ${plan.id} plan accepts up to ${plan.maxInputSeconds} s. Trim it or upgrade.`);
      }
      if (job.req_width !== null && job.req_height !== null && (job.req_width > input.width || job.req_height > input.height)) {
        return fail('output-larger-than-source', `The requested ${job.req_width}x${job.req_height} is larger than the ${input.width}x${input.height} source; videos are never upscaled.`);
      }
      const outOfRange = await givenTranscriptOutOfRange(db, job.id, input.durationSeconds);
      if (outOfRange) return fail('transcript-out-of-range', outOfRange);
      const needed = billableMinutes(input.durationSeconds);
      const exhausted = await db.transaction().execute(async (trx) => {
        const held = await jobHeldMinutes(trx, job.id);
        if (needed === held) return false;
        if (needed > held && (await minutesBalance(trx, job.account_id)) < needed - held) return true;
        await appendLedger(trx, { accountId: job.account_id, jobId: job.id, kind: 'true_up', minutes: held - needed, note: `${seconds} s`, now: now() });
        return false;
      });
      if (exhausted) return fail('automation-minutes-exhausted', `The video needs ${needed} minutes and the account does not have them; add minutes and retry.`);
      deps.onMinutesFreed?.(job.account_id);
      const deadline = new Date(Date.parse(job.started_at ?? now().toISOString()) + timings.deadlineBaseMs + timings.deadlinePerInputSecond * input.durationSeconds * 1000).toISOString();
      await db.updateTable('jobs').set({ deadline_at: deadline }).where('id', '=', job.id).execute();
      return { ok: true };
    },

    /** The recognized words, kept before rendering and served once the job succeeds. */
    async transcribed(input: AgentTranscribedInput): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check;
      await saveRecognizedTranscript(db, input, now().toISOString());
      return { ok: true };
    },

    async outputUploadUrl(input: { jobId: string; leaseId: string; sizeBytes: number }): Promise<{ ok: true; url: string } | Exclude<LeaseCheck, { ok: true }>> {
      const { job, check } = await owned(input);
      if (!check.ok || !job) return check as Exclude<LeaseCheck, { ok: true }>;
      const url = await store.presignPut({ key: `outputs/${job.id}.${job.format}`, contentLength: input.sizeBytes, contentType: CONTENT_TYPES[job.format] ?? 'application/octet-stream', expiresInSeconds: 3600 });
      return { ok: true, url };
    },

    async complete(input: AgentCompleteInput): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!job) return check;
      if (!check.ok) return job.status === 'succeeded' ? { ok: true } : check; // a re-sent complete
      const key = `outputs/${job.id}.${job.format}`;
      const head = await store.head(key);
      if (!head || head.sizeBytes !== input.outputBytes) {
        await end(job, { status: 'failed', failureCode: 'internal', failureReason: 'The rendered output did not reach storage intact.' }, { leaseId: input.leaseId });
        return { ok: false, reason: 'job-ended' };
      }
      const t = now();
      const expires = new Date(t.getTime() + OUTPUT_TTL_SECONDS * 1000);
      const downloadUrl = await store.presignGet({ key, expiresInSeconds: OUTPUT_TTL_SECONDS, downloadName: `captioned-${job.id}.${job.format}` });
      const ended = await end(
        job,
        { status: 'succeeded', outputKey: key, outputBytes: input.outputBytes, width: input.resolution.width, height: input.resolution.height, downloadUrl, outputExpiresAt: expires.toISOString() },
        { leaseId: input.leaseId },
      );
      return ended ? { ok: true } : (await owned(input)).check;
    },

    async fail(input: AgentFailInput): Promise<LeaseCheck> {
      const { job, check } = await owned(input);
      if (!job) return check;
      if (!check.ok) return job.status === 'failed' ? { ok: true } : check;
      const ended = await end(job, { status: 'failed', failureCode: input.failureCode, failureReason: input.failureReason }, { leaseId: input.leaseId });
      return ended ? { ok: true } : (await owned(input)).check;
    },

    /** Gives a lease back (the agent is shutting down): the job is queued again at once. */
    async release(input: { jobId: string; leaseId: string }): Promise<LeaseCheck> {
      const res = await db
        .updateTable('jobs')
        .set({ status: 'queued', phase: 'queued', percent: null, lease_id: null, lease_owner: null, lease_expires_at: null, updated_at: now().toISOString() })
        .where('id', '=', input.jobId)
        .where('lease_id', '=', input.leaseId)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) deps.jobs.events.emit('queued', input.jobId);
      return { ok: true };
    },

    /**
     * Expired leases go back to the queue (bounded attempts, then `internal`); jobs past their
     * deadline fail with `timed-out`; outputs past their 7 days are deleted.
     */
    async sweep(): Promise<void> {
      const t = now();
      const iso = t.toISOString();
      const expired = await db.selectFrom('jobs').selectAll().where('status', '=', 'running').where('lease_expires_at', '<', iso).execute();
      for (const job of expired) await requeueOrFail(job);
      const late = await db.selectFrom('jobs').selectAll().where('status', 'in', ['queued', 'running']).where('deadline_at', '<', iso).execute();
      for (const job of late) {
        const ended = await end(job, { status: 'failed', failureCode: 'timed-out', failureReason: 'Processing took longer than the deadline (15 min + 3x the video duration).' });
        if (ended && job.lease_owner) hub.push(job.lease_owner, { type: 'cancel', jobId: job.id });
      }
      const stale = await db.selectFrom('jobs').select(['id', 'output_key']).where('status', '=', 'succeeded').where('output_key', 'is not', null).where('output_expires_at', '<', iso).execute();
      for (const job of stale) {
        await store.delete(job.output_key ?? '');
        await db.updateTable('jobs').set({ output_key: null }).where('id', '=', job.id).execute();
      }
      const silentBefore = new Date(t.getTime() - 2 * timings.leaseMs).toISOString();
      await db.updateTable('agent_nodes').set({ state: 'offline' }).where('state', '=', 'online').where('last_heartbeat_at', '<', silentBefore).execute();
    },

    /**
     * The node's last websocket closed and it did not come back within the grace: it is dead (a
     * crash, kill -9, a cut cable), so its jobs are queued again now rather than showing their old
     * phase and percent until the lease expires (30-60 s).
     */
    async nodeGone(nodeId: string): Promise<void> {
      await db.updateTable('agent_nodes').set({ state: 'offline' }).where('id', '=', nodeId).execute();
      const held = await db.selectFrom('jobs').selectAll().where('status', '=', 'running').where('lease_owner', '=', nodeId).execute();
      for (const job of held) await requeueOrFail(job);
    },

    async setDrain(nodeId: string, drain: boolean) {
      const res = await db.updateTable('agent_nodes').set({ drain: drain ? 1 : 0 }).where('id', '=', nodeId).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      hub.push(nodeId, { type: drain ? 'drain' : 'undrain' });
      return true;
    },
    async listNodes() {
      const nodes = await db.selectFrom('agent_nodes').selectAll().orderBy('created_at').execute();
      const running = await db.selectFrom('jobs').select(['id', 'lease_owner', 'phase', 'percent']).where('status', '=', 'running').execute();
      return nodes.map((n) => ({
        id: n.id,
        name: n.name,
        state: n.drain === 1 ? (n.state === 'online' ? 'draining' : 'offline (drained)') : n.state,
        drain: n.drain === 1,
        capabilities: JSON.parse(n.capabilities) as AgentCapabilities,
        currentJobs: running.filter((j) => j.lease_owner === n.id).map((j) => ({ id: j.id, phase: j.phase, percent: j.percent })),
        lastHeartbeatAt: n.last_heartbeat_at,
        connectedAt: n.connected_at,
      }));
    },
  };
  return service;
}
export type AgentsService = ReturnType<typeof createAgentsService>;
