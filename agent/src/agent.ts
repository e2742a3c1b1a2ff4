import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { createTRPCClient, createWSClient, isTRPCClientError, wsLink } from '@trpc/client';
import WebSocket from 'ws';
import type { AgentCapabilities, AgentEvent, AgentRouter, FailureCode, LeasedJob } from '@captionfarm/contracts';
import { createSafeFetch, type SafeFetchFn } from '@captionfarm/net';
import { JobAborted, JobFailure } from './errors.ts';
import { sweepWorkDir } from './work-dir.ts';
import { runPipeline, type JobChannel, type LeaseAnswer, type Transcriber } from './pipeline.ts';

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

/**
 * How long a job's report to the control plane is sent again while no control plane answers it
 * (the socket closed under it: a restart, a network cut). Past this the agent gives the job up
 * quietly: by then its lease has expired and the job is queued for another attempt.
 */
const REPORT_RETRY_MS = 10 * 60_000;

/** The wait before reconnect `i` and before re-sending a report the `i`-th time: 250 ms doubling, at most 5 s. */
const backoffMs = (i: number): number => Math.min(250 * 2 ** i, 5_000);

/** A call the control plane never answered: the socket closed before the answer came. A server's own error has a shape. */
function unanswered(err: unknown): boolean {
  return isTRPCClientError(err) && err.shape === undefined;
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
}

export function createAgent(opts: AgentOptions): Agent {
  const write = opts.log ?? (() => undefined);
  const log = (msg: string, fields: Record<string, unknown> = {}) => write(msg, { nodeId, ...fields });
  const max = opts.maxConcurrentJobs ?? 1;
  const workDir = opts.workDir ?? os.tmpdir();
  const safeFetch = opts.safeFetch ?? createSafeFetch();
  const wsUrl = `${opts.controlPlaneUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/agent`;
  const running = new Map<string, Running>();
  let nodeId: string | undefined;
  let draining = false; // our own drain (SIGTERM): never lease again
  let drainedByAdmin = false;
  let closed = false;
  let pumping = false;
  let timers: NodeJS.Timeout[] = [];
  let unsubscribe: (() => void) | undefined;

  const wsClient = createWSClient({
    url: wsUrl,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: () => ({ token: opts.token }),
    retryDelayMs: backoffMs,
    keepAlive: { enabled: true, intervalMs: 10_000, pongTimeoutMs: 5_000 },
  });
  const client = createTRPCClient<AgentRouter>({ links: [wsLink({ client: wsClient })] });

  function abortJob(jobId: string, why: JobAborted['why']): void {
    const r = running.get(jobId);
    if (r?.completing && why === 'lease-lost') return;
    if (r && !r.controller.signal.aborted) {
      log(`job aborting (${why})`, { jobId });
      r.controller.abort(new JobAborted(why));
    }
  }

  function onEvent(event: AgentEvent): void {
    if (event.type === 'cancel') abortJob(event.jobId, 'cancelled');
    else if (event.type === 'drain') drainedByAdmin = true;
    else if (event.type === 'undrain') {
      drainedByAdmin = false;
      void pump();
    } else if (event.type === 'work-available') void pump();
  }

  /**
   * Sends a job's report, and sends it again whenever the control plane did not answer: a report
   * in flight when its socket closed (a control plane killed mid-job) must not fail the job. The
   * wsClient reconnects (to the same URL, which a restarted or load-balanced control plane
   * answers) and sends it then. Every report is idempotent under its lease on the server
   * (agents/reports.ts: a re-sent complete answers ok, ingested trues up to the same minutes), and
   * one whose lease was lost meanwhile answers so, which stops the job quietly.
   */
  async function report<T>(send: () => Promise<T>, signal: AbortSignal, what: string, jobId: string): Promise<T> {
    const giveUpAt = Date.now() + REPORT_RETRY_MS;
    const givenUp = (): JobAborted => {
      log(`${what}: no control plane answered for ${REPORT_RETRY_MS / 60_000} min; the job is left to its lease`, { jobId });
      return new JobAborted('lease-lost');
    };
    for (let attempt = 0; ; attempt++) {
      // A call made while the socket is down waits in the wsClient's queue for the reconnect: it
      // stops waiting when the job is aborted (cancel, shutdown) or past the give-up time.
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(givenUp()), Math.max(0, giveUpAt - Date.now()));
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        if (signal.aborted) throw signal.reason;
        return await Promise.race([send(), stop]);
      } catch (err) {
        if (!unanswered(err) || signal.aborted || closed) throw err;
        if (Date.now() >= giveUpAt) throw givenUp();
        if (attempt === 0) log(`${what}: ${(err as Error).message}; sent again once the control plane answers`, { jobId });
        await delay(backoffMs(attempt), undefined, { signal });
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort!);
      }
    }
  }

  function channelFor(job: LeasedJob, controller: AbortController): JobChannel {
    const ref = { nodeId: nodeId!, jobId: job.jobId, leaseId: job.leaseId };
    const sendAgain = <T>(what: string, send: () => Promise<T>) => report(send, controller.signal, what, job.jobId);
    const check = (answer: LeaseAnswer) => {
      if (!answer.ok) abortJob(job.jobId, answer.reason);
      return answer;
    };
    let lastSent = 0;
    let pending: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const every = opts.progressEveryMs ?? 250;
    const send = (percent: number) => {
      lastSent = Date.now();
      pending = undefined;
      client.progress
        .mutate({ ...ref, phase: 'rendering', percent })
        .then(check, (err: unknown) => log(`progress: ${(err as Error).message}`, { jobId: job.jobId }));
    };
    controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    return {
      async phase(phase, percent) {
        check(await sendAgain('phase', () => client.progress.mutate({ ...ref, phase, percent })));
        if (controller.signal.aborted) throw controller.signal.reason;
      },
      percent(p) {
        // Throttled: a report at most every `every` ms, the latest value always sent.
        if (Date.now() - lastSent >= every || p === 100) {
          clearTimeout(timer);
          send(p);
          return;
        }
        pending = p;
        timer ??= setTimeout(
          () => {
            timer = undefined;
            if (pending !== undefined) send(pending);
          },
          every - (Date.now() - lastSent),
        );
      },
      async ingested(info) {
        return check(await sendAgain('ingested', () => client.ingested.mutate({ ...ref, ...info })));
      },
      async transcribed(transcript) {
        return check(await sendAgain('transcribed', () => client.transcribed.mutate({ ...ref, ...transcript })));
      },
      async outputUploadUrl(sizeBytes) {
        const r = await sendAgain('output upload URL', () => client.outputUploadUrl.mutate({ ...ref, sizeBytes }));
        if (!r.ok) {
          check(r);
          throw new JobAborted(r.reason);
        }
        return r.url;
      },
      async complete(result) {
        const r = running.get(job.jobId);
        if (r) r.completing = true;
        return check(await sendAgain('complete', () => client.complete.mutate({ ...ref, ...result })));
      },
    };
  }

  function startJob(job: LeasedJob): void {
    const controller = new AbortController();
    log(`job leased (attempt ${job.attempt})`, { jobId: job.jobId });
    const done = (async () => {
      try {
        await runPipeline(
          job,
          channelFor(job, controller),
          {
            workDir,
            transcriber: opts.transcriber,
            safeFetch,
            encoder: opts.encoder ?? 'auto',
            x264Threads: opts.x264Threads,
            overlap: opts.overlap,
            whisperThreadsBesideRender: opts.whisperThreadsBesideRender,
            log: (message) => log(message, { jobId: job.jobId }),
          },
          controller.signal,
        );
        log('job succeeded', { jobId: job.jobId });
      } catch (err) {
        const reason = controller.signal.reason as unknown;
        if (controller.signal.aborted || err instanceof JobAborted) {
          const why = reason instanceof JobAborted ? reason.why : err instanceof JobAborted ? err.why : 'cancelled';
          if (why === 'shutdown') await client.release.mutate({ nodeId: nodeId!, jobId: job.jobId, leaseId: job.leaseId }).catch(() => undefined);
          log(`job stopped (${why})`, { jobId: job.jobId });
          return;
        }
        const code: FailureCode = err instanceof JobFailure ? err.code : 'internal';
        const message = err instanceof JobFailure ? err.message : `Unexpected agent error: ${(err as Error).message ?? String(err)}`;
        log(`job failed ${code}: ${message}`, { jobId: job.jobId, failureCode: code });
        await report(
          () => client.fail.mutate({ nodeId: nodeId!, jobId: job.jobId, leaseId: job.leaseId, failureCode: code, failureReason: message }),
          controller.signal,
          'fail',
          job.jobId,
        ).catch((e: unknown) => log(`fail report: ${(e as Error).message}`, { jobId: job.jobId }));
      } finally {
        running.delete(job.jobId);
        void pump();
      }
    })();
    running.set(job.jobId, { job, controller, done, completing: false });
  }

  /** Work dirs of killed attempts (ours, or of agent processes that are gone). */
  async function sweep(): Promise<void> {
    try {
      const removed = await sweepWorkDir(workDir, running.keys());
      if (removed.length > 0) log(`removed ${removed.length} work dir(s) of ended attempts: ${removed.join(', ')}`);
    } catch (err) {
      log(`work dir sweep: ${(err as Error).message}`);
    }
  }

  async function pump(): Promise<void> {
    if (pumping || closed || draining || drainedByAdmin || !nodeId) return;
    pumping = true;
    try {
      while (!closed && !draining && !drainedByAdmin && running.size < max) {
        const jobs = await client.lease.mutate({ nodeId, slots: max - running.size, requestId: randomUUID() });
        if (jobs.length === 0) break;
        for (const job of jobs) startJob(job as LeasedJob);
      }
    } catch (err) {
      log(`lease: ${(err as Error).message}`);
    } finally {
      pumping = false;
    }
  }

  async function heartbeat(): Promise<void> {
    if (!nodeId) return;
    const leases = [...running.values()].map((r) => ({ jobId: r.job.jobId, leaseId: r.job.leaseId }));
    const res = await client.heartbeat.mutate({ nodeId, leases });
    for (const jobId of res.lost) abortJob(jobId, 'lease-lost');
    if (res.drain !== drainedByAdmin) {
      drainedByAdmin = res.drain;
      if (!res.drain) void pump();
    }
  }

  const agent: Agent = {
    get nodeId() {
      return nodeId;
    },
    async start() {
      // The model loads while the agent registers, not in its first job (which waits for the same load).
      opts.transcriber.warmUp?.().catch((err: unknown) => log(`whisper warm-up: ${(err as Error).message}`));
      await mkdir(workDir, { recursive: true });
      // Before the first lease: whatever a killed attempt of ours left is debris now.
      await sweep();
      const caps: AgentCapabilities = {
        gpu: false,
        nvenc: false,
        cudaWhisper: false,
        models: [],
        maxConcurrentJobs: max,
        ...opts.capabilities,
      };
      const reg = await client.register.mutate({ nodeName: opts.nodeName ?? os.hostname(), capabilities: caps });
      nodeId = reg.nodeId;
      drainedByAdmin = reg.drain;
      const sub = client.events.subscribe(
        { nodeId, lastEventId: null },
        {
          onData: (msg) => onEvent(((msg as { data?: AgentEvent }).data ?? msg) as AgentEvent),
          onError: (err) => log(`events: ${err.message}`),
        },
      );
      unsubscribe = () => sub.unsubscribe();
      timers = [
        setInterval(
          () => heartbeat().catch((err: unknown) => log(`heartbeat: ${(err as Error).message}`)),
          opts.heartbeatMs ?? Math.max(250, Math.floor(reg.leaseMs / 4)),
        ),
        setInterval(() => void pump(), opts.pollMs ?? 2_000),
        setInterval(() => void sweep(), opts.sweepMs ?? 5 * 60_000),
      ];
      for (const t of timers) t.unref();
      log('registered');
      await pump();
    },
    async drain() {
      draining = true;
      await Promise.all([...running.values()].map((r) => r.done));
    },
    async abortAll() {
      draining = true;
      for (const id of running.keys()) abortJob(id, 'shutdown');
      await Promise.all([...running.values()].map((r) => r.done));
    },
    async close() {
      closed = true;
      for (const t of timers) clearInterval(t);
      for (const id of running.keys()) abortJob(id, 'shutdown');
      await Promise.all([...running.values()].map((r) => r.done));
      unsubscribe?.();
      wsClient.close();
    },
    activeJobIds: () => [...running.keys()],
  };
  return agent;
}
