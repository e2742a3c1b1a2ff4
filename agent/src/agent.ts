import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import WebSocket from 'ws';
import type { AgentCapabilities, AgentEvent, AgentRouter, LeasedJob } from '@captionfarm/contracts';
import { createSafeFetch, type SafeFetchFn } from '@captionfarm/net';
import { closed, draining, drainedByAdmin, leasing, nodeIdOf, registered, type AgentState } from './agent-state.ts';
import { failureOf, JobAborted } from './errors.ts';
import { healthOf, type AgentHealth } from './health.ts';
import { createJobChannel } from './job-channel.ts';
import { runPipeline, type Transcriber } from './pipeline.ts';
import { backoffMs, reporter, type Report } from './report.ts';
import { sweepWorkDir } from './work-dir.ts';

export interface AgentOptions {
  /** http(s)://host:port of the control plane; the agent connects to ws(s)://host:port/agent. */
  controlPlaneUrl: string;
  token: string;
  nodeName?: string;
  maxConcurrentJobs?: number;
  workDir?: string;
  transcriber: Transcriber;
  /** Outbound fetch for client video URLs; default: the production safeFetch (public https only). */
  safeFetch?: SafeFetchFn;
  encoder?: 'auto' | 'cpu' | 'nvenc';
  /** libx264 threads per job (the hardware plan: every core); default x264's own choice. */
  x264Threads?: number;
  /** ffmpeg threads of the picture's analysis (the hardware plan); default ffmpeg's choice. */
  analysisThreads?: number | undefined;
  /** Overlapped stages: render from the first final words on (pipeline.ts); default false. */
  overlap?: boolean;
  /** With overlap: whisper.cpp threads once the render is under way (CPU whisper beside x264); default unchanged. */
  whisperThreadsBesideRender?: number | undefined;
  capabilities?: Partial<AgentCapabilities>;
  /** How often leases are extended; default a quarter of the control plane's lease. */
  heartbeatMs?: number;
  /** Lease poll when no work-available event arrives. */
  pollMs?: number;
  /** How often work dirs of killed attempts are swept (also at start). Default 5 min. */
  sweepMs?: number;
  /** Minimum spacing of percent reports (phase changes go at once). */
  progressEveryMs?: number;
  /** Log lines; fields carry the ids (nodeId always, jobId for a job's lines) for a structured logger. */
  log?: (msg: string, fields: { nodeId?: string; jobId?: string; [k: string]: unknown }) => void;
}

interface Running {
  job: LeasedJob;
  controller: AbortController;
  done: Promise<void>;
  /** Set once the output is uploaded and complete is on its way: a heartbeat racing it reports the lease gone. */
  completing: boolean;
}

export interface Agent {
  readonly nodeId: string | undefined;
  start(): Promise<void>;
  /** Stops taking jobs; resolves once the current ones have finished. */
  drain(): Promise<void>;
  /** Aborts the current jobs and gives their leases back (they are queued again at once). */
  abortAll(): Promise<void>;
  close(): Promise<void>;
  activeJobIds(): string[];
  /** Where it stands, for the probes (health.ts). */
  health(): AgentHealth;
}

type Client = ReturnType<typeof createTRPCClient<AgentRouter>>;
type Log = (msg: string, fields?: Record<string, unknown>) => void;

export function createAgent(opts: AgentOptions): Agent {
  const write = opts.log ?? (() => undefined);
  let state: AgentState = { kind: 'starting' };
  const log: Log = (msg, fields = {}) => write(msg, { nodeId: nodeIdOf(state), ...fields });
  const max = opts.maxConcurrentJobs ?? 1;
  const workDir = opts.workDir ?? os.tmpdir();
  const safeFetch = opts.safeFetch ?? createSafeFetch();
  const running = new Map<string, Running>();
  let timers: NodeJS.Timeout[] = [];
  let unsubscribe: (() => void) | undefined;

  let connected = false;
  const { wsClient, client } = connect(opts, (open) => (connected = open));
  const report = reporter({ log, closed: () => state.kind === 'closed' });

  function abortJob(jobId: string, why: JobAborted['why']): void {
    const r = running.get(jobId);
    if (r?.completing && why === 'lease-lost') return;
    if (r && !r.controller.signal.aborted) {
      log(`job aborting (${why})`, { jobId });
      r.controller.abort(new JobAborted(why));
    }
  }

  function adminDrain(drain: boolean): void {
    state = drainedByAdmin(state, drain);
    if (!drain) void pump();
  }

  function onEvent(event: AgentEvent): void {
    if (event.type === 'cancel') abortJob(event.jobId, 'cancelled');
    else if (event.type === 'drain') adminDrain(true);
    else if (event.type === 'undrain') adminDrain(false);
    else if (event.type === 'work-available') void pump();
  }

  const jobs: Jobs = { opts, client, report, log, workDir, safeFetch, running, abortJob, pump: () => void pump() };

  const sweep = () => sweepDebris(workDir, running, log);

  /** Leases jobs while there are free slots and the agent leases (one lease loop at a time). */
  const pump = oneAtATime(async () => {
    if (!leasing(state)) return;
    const { nodeId } = state;
    try {
      while (leasing(state) && running.size < max) {
        const leased = await client.lease.mutate({ nodeId, slots: max - running.size, requestId: randomUUID() });
        if (leased.length === 0) break;
        for (const job of leased) startJob(jobs, job as LeasedJob, nodeId);
      }
    } catch (err) {
      log(`lease: ${(err as Error).message}`);
    }
  });

  async function heartbeat(): Promise<void> {
    const nodeId = nodeIdOf(state);
    if (!nodeId) return;
    const leases = [...running.values()].map((r) => ({ jobId: r.job.jobId, leaseId: r.job.leaseId }));
    const res = await client.heartbeat.mutate({ nodeId, leases });
    for (const jobId of res.lost) abortJob(jobId, 'lease-lost');
    if (state.kind === 'registered' && res.drain !== state.drainedByAdmin) adminDrain(res.drain);
  }

  /** Registers, subscribes to the node's events and starts the timers (heartbeat, lease poll, sweep). */
  async function register(): Promise<void> {
    const caps: AgentCapabilities = { gpu: false, nvenc: false, cudaWhisper: false, models: [], maxConcurrentJobs: max, ...opts.capabilities };
    const reg = await client.register.mutate({ nodeName: opts.nodeName ?? os.hostname(), capabilities: caps });
    state = registered(state, reg);
    const sub = client.events.subscribe(
      { nodeId: reg.nodeId, lastEventId: null },
      {
        onData: (msg) => onEvent(((msg as { data?: AgentEvent }).data ?? msg) as AgentEvent),
        onError: (err) => log(`events: ${err.message}`),
      },
    );
    unsubscribe = () => sub.unsubscribe();
    const beat = () => heartbeat().catch((err: unknown) => log(`heartbeat: ${(err as Error).message}`));
    timers = [
      setInterval(beat, opts.heartbeatMs ?? Math.max(250, Math.floor(reg.leaseMs / 4))),
      setInterval(() => void pump(), opts.pollMs ?? 2_000),
      setInterval(() => void sweep(), opts.sweepMs ?? 5 * 60_000),
    ];
    for (const t of timers) t.unref();
  }

  const allDone = () => Promise.all([...running.values()].map((r) => r.done));
  return {
    get nodeId() {
      return nodeIdOf(state);
    },
    async start() {
      // The model loads while the agent registers, not in its first job (which waits for the same load).
      opts.transcriber.warmUp?.().catch((err: unknown) => log(`whisper warm-up: ${(err as Error).message}`));
      await mkdir(workDir, { recursive: true });
      // Before the first lease: whatever a killed attempt of ours left is debris now.
      await sweep();
      await register();
      log('registered');
      await pump();
    },
    async drain() {
      state = draining(state);
      await allDone();
    },
    async abortAll() {
      state = draining(state);
      for (const id of running.keys()) abortJob(id, 'shutdown');
      await allDone();
    },
    async close() {
      state = closed(state);
      for (const t of timers) clearInterval(t);
      for (const id of running.keys()) abortJob(id, 'shutdown');
      await allDone();
      unsubscribe?.();
      wsClient.close();
    },
    activeJobIds: () => [...running.keys()],
    health: () => healthOf(state, { connected, jobs: running.size, slots: max }),
  };
}

/** The tRPC client over the control plane's agent websocket (reconnecting with `backoffMs`). */
function connect(opts: AgentOptions, onConnection: (open: boolean) => void): { wsClient: ReturnType<typeof createWSClient>; client: Client } {
  const wsClient = createWSClient({
    onOpen: () => onConnection(true),
    onClose: () => onConnection(false),
    url: `${opts.controlPlaneUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/agent`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: () => ({ token: opts.token }),
    retryDelayMs: backoffMs,
    keepAlive: { enabled: true, intervalMs: 10_000, pongTimeoutMs: 5_000 },
  });
  return { wsClient, client: createTRPCClient<AgentRouter>({ links: [wsLink({ client: wsClient })] }) };
}

/** Work dirs of killed attempts (ours, or of agent processes that are gone). */
async function sweepDebris(workDir: string, running: Map<string, Running>, log: Log): Promise<void> {
  try {
    const removed = await sweepWorkDir(workDir, running.keys());
    if (removed.length > 0) log(`removed ${removed.length} work dir(s) of ended attempts: ${removed.join(', ')}`);
  } catch (err) {
    log(`work dir sweep: ${(err as Error).message}`);
  }
}

/** What a job's run needs of its agent. */
interface Jobs {
  opts: AgentOptions;
  client: Client;
  report: Report;
  log: Log;
  workDir: string;
  safeFetch: SafeFetchFn;
  running: Map<string, Running>;
  abortJob(jobId: string, why: JobAborted['why']): void;
  /** Leases again (a slot is free). */
  pump(): void;
}

/** Runs a leased job through the pipeline under its own AbortController, kept in `running` until it ends. */
function startJob(ctx: Jobs, job: LeasedJob, nodeId: string): void {
  const { opts, client, report, log, running } = ctx;
  const controller = new AbortController();
  const jobLog = (message: string, fields: Record<string, unknown> = {}) => log(message, { jobId: job.jobId, ...fields });
  jobLog(`job leased (attempt ${job.attempt})`);
  const channel = createJobChannel({
    client,
    job,
    nodeId,
    controller,
    report,
    abortJob: (why) => ctx.abortJob(job.jobId, why),
    completing: () => {
      const r = running.get(job.jobId);
      if (r) r.completing = true;
    },
    progressEveryMs: opts.progressEveryMs ?? 250,
    log: jobLog,
  });
  const done = (async () => {
    try {
      await runPipeline(
        job,
        channel,
        {
          workDir: ctx.workDir,
          transcriber: opts.transcriber,
          safeFetch: ctx.safeFetch,
          encoder: opts.encoder ?? 'auto',
          x264Threads: opts.x264Threads,
          analysisThreads: opts.analysisThreads,
          overlap: opts.overlap,
          whisperThreadsBesideRender: opts.whisperThreadsBesideRender,
          log: (message) => jobLog(message),
        },
        controller.signal,
      );
      jobLog('job succeeded');
    } catch (err) {
      await jobEnded({ err, job, nodeId, signal: controller.signal, client, report, log: jobLog });
    } finally {
      running.delete(job.jobId);
      ctx.pump();
    }
  })();
  running.set(job.jobId, { job, controller, done, completing: false });
}

/**
 * A job's run ended in `err`: an abort (cancel, lost lease, shutdown) stops it quietly, its lease
 * given back on shutdown; anything else is reported as the job's failure (errors.ts, `failureOf`).
 */
async function jobEnded(o: {
  err: unknown;
  job: LeasedJob;
  nodeId: string;
  signal: AbortSignal;
  client: Client;
  report: Report;
  log: (msg: string, fields?: Record<string, unknown>) => void;
}): Promise<void> {
  const { err, job, nodeId, signal, client, log } = o;
  const lease = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
  const reason = signal.reason as unknown;
  if (signal.aborted || err instanceof JobAborted) {
    const why = reason instanceof JobAborted ? reason.why : err instanceof JobAborted ? err.why : 'cancelled';
    if (why === 'shutdown') await client.release.mutate(lease).catch(() => undefined);
    log(`job stopped (${why})`);
    return;
  }
  const failure = failureOf(err);
  log(`job failed ${failure.code}: ${failure.message}`, { failureCode: failure.code });
  await o
    .report(() => client.fail.mutate({ ...lease, failureCode: failure.code, failureReason: failure.message }), signal, 'fail', job.jobId)
    .catch((e: unknown) => log(`fail report: ${(e as Error).message}`));
}

/** `run`, never twice at once: a call while it runs returns at once. */
function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let inFlight = false;
  return async () => {
    if (inFlight) return;
    inFlight = true;
    try {
      await run();
    } finally {
      inFlight = false;
    }
  };
}
