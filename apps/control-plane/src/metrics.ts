import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PhaseSeconds, RecognitionChecks } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';

/**
 * Prometheus metrics of one control plane (prom-client), on its own registry so several control
 * planes in one process (tests) never share counters. Counters and histograms are kept in memory
 * (per control plane, as Prometheus expects: sum them across instances); queue, agent and webhook
 * backlog gauges are read from the database at scrape time, so every control plane reports the
 * farm's truth. The README lists each metric.
 */
export interface Metrics {
  readonly registry: Registry;
  /** A job reached a terminal status (succeeded, failed, cancelled). */
  jobEnded(job: { status: string; failure_code: string | null }): void;
  /** An agent completed a job and said how long each stage took. */
  jobCompleted(o: { node: string; phaseSeconds: PhaseSeconds; mediaSeconds: number | null }): void;
  /** What an agent's recognition checks retried and left out on one job. */
  recognitionChecks(checks: RecognitionChecks): void;
  /** One webhook delivery attempt; state 'exhausted' means given up (applied: this dispatcher still held the lease). */
  webhookAttempt(o: { outcome: string; state: string; applied: boolean }): void;
  /** Express middleware timing every request by method, matched route and status. */
  http(): (req: Request, res: Response, next: NextFunction) => void;
  /** Starts timing one request; the returned function records it (the hot routes, served outside Express). */
  httpTimer(): (labels: { method: string; route: string; status: string }) => void;
}

const PHASE_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];

export function createMetrics(deps: { db: Db; now: () => Date }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Registered in this order, which is the order of the exposition.
  const { jobsEnded, phase, rtf } = jobInstruments(registry, deps);
  agentGauges(registry, deps.db);
  webhookBacklogGauge(registry, deps.db);
  const { recognitionRetries, recognitionDrops, recognitionDroppedSeconds } = recognitionCounters(registry);
  const { attempts, failed } = webhookCounters(registry);
  const http = new Histogram({
    name: 'captionfarm_http_request_duration_seconds',
    help: 'HTTP request latency by method, matched route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  return {
    registry,
    jobEnded(job) {
      jobsEnded.inc({ status: job.status, failure_code: job.failure_code ?? '' });
    },
    jobCompleted({ node, phaseSeconds, mediaSeconds }) {
      for (const k of ['ingest', 'transcribe', 'render', 'upload'] as const) phase.observe({ phase: k, node }, phaseSeconds[k]);
      const total = phaseSeconds.ingest + phaseSeconds.transcribe + phaseSeconds.render + phaseSeconds.upload;
      if (mediaSeconds && total > 0) rtf.observe({ node }, mediaSeconds / total);
    },
    recognitionChecks({ retries, dropped }) {
      for (const r of retries) recognitionRetries.inc({ check: r.check });
      for (const d of dropped) {
        recognitionDrops.inc({ check: d.check });
        recognitionDroppedSeconds.inc({ check: d.check }, Math.max(0, d.end - d.start));
      }
    },
    webhookAttempt({ outcome, state, applied }) {
      attempts.inc({ outcome });
      if (state === 'exhausted' && applied) failed.inc();
    },
    httpTimer: () => http.startTimer(),
    http() {
      return (req, res, next) => {
        const end = http.startTimer();
        const seen = routeLabels(req);
        res.on('finish', () => {
          const route = seen.route ?? (seen.mount ? `${seen.mount}/*` : req.path === '/metrics' ? '/metrics' : 'unmatched');
          end({ method: req.method, route, status: String(res.statusCode) });
        });
        next();
      };
    },
  };
}

/** Jobs: terminal statuses, the queue's depth and oldest age (read at scrape time), each stage's seconds and the realtime factor. */
function jobInstruments(registry: Registry, deps: { db: Db; now: () => Date }) {
  const { db } = deps;
  const jobsEnded = new Counter({
    name: 'captionfarm_jobs_finished_total',
    help: 'Jobs that reached a terminal status, by status and failure code ("" unless failed).',
    labelNames: ['status', 'failure_code'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'captionfarm_queue_depth',
    help: 'Jobs queued and not yet leased by an agent.',
    registers: [registry],
    async collect() {
      const r = await db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'queued')
        .executeTakeFirst();
      this.set(Number(r?.n ?? 0));
    },
  });
  new Gauge({
    name: 'captionfarm_queue_oldest_age_seconds',
    help: 'Age of the oldest queued job (0 when the queue is empty).',
    registers: [registry],
    async collect() {
      const r = await db
        .selectFrom('jobs')
        .select((eb) => eb.fn.min('created_at').as('oldest'))
        .where('status', '=', 'queued')
        .executeTakeFirst();
      const oldest = r?.oldest ? Date.parse(String(r.oldest)) : NaN;
      this.set(Number.isFinite(oldest) ? Math.max(0, (deps.now().getTime() - oldest) / 1000) : 0);
    },
  });
  const phase = new Histogram({
    name: 'captionfarm_job_phase_duration_seconds',
    help: 'Wall seconds of each stage of a succeeded job (ingest, transcribe, render, upload), as the agent measured them, by node name.',
    labelNames: ['phase', 'node'] as const,
    buckets: PHASE_BUCKETS,
    registers: [registry],
  });
  const rtf = new Histogram({
    name: 'captionfarm_job_realtime_factor',
    help: 'Seconds of video per second of processing (ingest to upload) of each succeeded job, by node name; above 1 is faster than realtime.',
    labelNames: ['node'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
    registers: [registry],
  });
  return { jobsEnded, phase, rtf };
}

/** The online agents, their drain state and slots, read from the database at scrape time. */
function agentGauges(registry: Registry, db: Db): void {
  const agentGauge = (name: string, help: string, read: (nodes: { drain: number; capabilities: string }[], running: number) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const nodes = await db.selectFrom('agent_nodes').select(['drain', 'capabilities']).where('state', '=', 'online').execute();
        const running = await db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'running')
          .executeTakeFirst();
        this.set(read(nodes, Number(running?.n ?? 0)));
      },
    });
  agentGauge('captionfarm_agents_connected', 'Agents online (registered and heartbeating).', (nodes) => nodes.length);
  agentGauge(
    'captionfarm_agents_draining',
    'Online agents told to drain (finishing their jobs, taking no new ones).',
    (nodes) => nodes.filter((n) => Number(n.drain) === 1).length,
  );
  agentGauge('captionfarm_agent_slots', 'Job slots the online agents offer (their concurrency).', (nodes) =>
    nodes.reduce((sum, n) => sum + (Number((JSON.parse(n.capabilities) as { maxConcurrentJobs?: number }).maxConcurrentJobs) || 0), 0),
  );
  agentGauge('captionfarm_agent_slots_in_use', 'Jobs running on agents now (leased slots).', (_nodes, running) => running);
}

/** Webhook deliveries waiting, read from the database at scrape time. */
function webhookBacklogGauge(registry: Registry, db: Db): void {
  new Gauge({
    name: 'captionfarm_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for their first or next attempt.',
    registers: [registry],
    async collect() {
      const r = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'pending')
        .executeTakeFirst();
      this.set(Number(r?.n ?? 0));
    },
  });
}

/** What the agents' recognition checks retried and left out. */
function recognitionCounters(registry: Registry) {
  const recognitionRetries = new Counter({
    name: 'captionfarm_recognition_retries_total',
    help: 'Chunks of speech decoded again by the agents, by the check that sent them back (loop: the words looked like a decoding loop; budget: the decode ran past its time budget).',
    labelNames: ['check'] as const,
    registers: [registry],
  });
  const recognitionDrops = new Counter({
    name: 'captionfarm_recognition_drops_total',
    help: 'Recognized speech left out of a transcript by the agents, by check: each loop cut out of a chunk, or a whole chunk that ran past its budget twice.',
    labelNames: ['check'] as const,
    registers: [registry],
  });
  const recognitionDroppedSeconds = new Counter({
    name: 'captionfarm_recognition_dropped_seconds_total',
    help: 'Seconds of source audio whose recognized words were left out by the agents, by check.',
    labelNames: ['check'] as const,
    registers: [registry],
  });
  return { recognitionRetries, recognitionDrops, recognitionDroppedSeconds };
}

/** Webhook delivery attempts and the deliveries given up on. */
function webhookCounters(registry: Registry) {
  const attempts = new Counter({
    name: 'captionfarm_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome (success, retry, gone, ...).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const failed = new Counter({
    name: 'captionfarm_webhook_deliveries_failed_total',
    help: 'Webhook deliveries given up on (every retry failed, or the endpoint answered 410 Gone).',
    registers: [registry],
  });
  return { attempts, failed };
}

/**
 * The route label of a request, taken when Express matches it: the matched pattern with its mount
 * point (/v1/automation-jobs/:id, /app/api/v1/automation-jobs/:id), never the raw path (ids would
 * explode the label set). Read at 'finish' it would be too late: an error leaves the routers, which
 * restore `req.baseUrl` (an error answer lost its /v1), and a refusal before routing (401, 429, 413,
 * 415 in a mount's middleware) has no route at all: it gets the deepest mount it reached (/v1/*).
 * Mount paths are literal in this code base, so the label set stays bounded.
 */
function routeLabels(req: Request): { route?: string; mount?: string } {
  const seen: { route?: string; mount?: string } = {};
  let route: Request['route'] = req.route;
  let baseUrl: string = req.baseUrl;
  Object.defineProperties(req, {
    route: {
      configurable: true,
      enumerable: true,
      get: () => route,
      set(value: Request['route']) {
        route = value;
        if (value?.path !== undefined) seen.route = `${baseUrl}${String(value.path)}`;
      },
    },
    baseUrl: {
      configurable: true,
      enumerable: true,
      get: () => baseUrl,
      set(value: string) {
        baseUrl = value;
        if (value && value.length > (seen.mount?.length ?? 0)) seen.mount = value;
      },
    },
  });
  return seen;
}
