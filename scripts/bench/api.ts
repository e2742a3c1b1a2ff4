/**
 * bench:api — create-job and get-job latency of the REST API at fixed rates (200 and 500
 * requests/s), on SQLite and on PostgreSQL. The control plane runs in this process; the load comes
 * from a second process (vegeta at a constant rate, open loop: scripts/bench/api-load.ts) over
 * loopback. Latency is vegeta's, from each request's send to its answer. 60 pro accounts
 * (with minutes to spare) share the load, so no plan's rate limit caps the run. Each
 * (database, route, rate) runs `--rounds` times; the table gives the median p50/p99 over the
 * rounds with their spread, and each p99 as a ratio to GET /healthz (no database) at the same
 * rate in the same round: the ratio is what holds on a loaded machine. The last column is the
 * control plane's CPU time per request served (this process's process.cpuUsage over the round,
 * which it spends only on serving): the cost of a route, much less sensitive to the machine's
 * load than latency. Each round's line also gives the control plane's event-loop delay (p99 and max),
 * which tells a stall from a queue.
 *
 *   npm run bench:api [-- --seconds 10 --rounds 3 --rates 200,500]
 *   PostgreSQL: CAPTIONFARM_TEST_DATABASE_URL=$(bash scripts/postgres) npm run bench:api
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runToEnd } from '@captionfarm/process';
import { createControlPlane, loadConfig } from '../../apps/control-plane/src/index.ts';
import { apiFor, testLookup } from '../../apps/control-plane/test/harness.ts';
import { freshTestDatabase, testDatabaseServerUrl } from '../../packages/db/src/testing.ts';

/** A tool run to its end through the process module (execa, setpriv prefix); rejects on a non-zero exit. */
const run = (binary: string, args: string[]) => runToEnd(binary, { args });
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    rates: { type: 'string', default: '200,500' },
    accounts: { type: 'string', default: '60' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const rates = values.rates.split(',').map(Number);
const loadScript = path.join(import.meta.dirname, 'api-load.ts');
// vegeta (built once from the Go module proxy and cached, like MinIO): an open-loop generator that
// sends at a constant rate whatever the answers take. autocannon's overallRate is a closed loop
// with a per-second quota: its connections fire back to back at each second's start, so at 500/s
// the server saw bursts of 25 requests at once and every figure carried that queue.
const vegeta =
  process.env.CAPTIONFARM_VEGETA ??
  (await run('bash', [path.join(import.meta.dirname, '../build-go-tool'), 'vegeta', 'github.com/tsenart/vegeta/v12', 'v12.13.0'])).stdout.trim();
type Route = 'create' | 'get' | 'healthz';
interface Sample {
  /** CPU time of this process (the control plane) per request served, in microseconds. */
  cpuUs: number;
  /** The control plane's event loop over the round: how late its timers ran, p99 and max (ms). */
  loopDelayP99: number;
  loopDelayMax: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** SQLite: the WAL file's high-water mark after the round, in frames. */
  walHighWater?: number | undefined;
}

/** The WAL's size in frames (a 24-byte header and a 4 KiB page each; the file keeps its high-water mark). */
const walFrames = async (file: string) => Math.round(((await stat(file).catch(() => null))?.size ?? 0) / (4096 + 24));

async function load(spec: { url: string; route: Route; rate: number; keys: string[]; jobIds: string[]; body: string }, wal?: string): Promise<Sample> {
  // The control plane runs in this process and this process does nothing else meanwhile: its CPU
  // time over the run is the server's cost, which holds on a loaded machine where latency does not.
  // The event loop's delay tells a stall (a GC pause, a long synchronous step: the max) from
  // requests queueing behind a busy loop (a high p99 with a low max).
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu = process.cpuUsage();
  const { stdout } = await run(process.execPath, ['--import', 'tsx', loadScript, JSON.stringify({ ...spec, seconds, vegeta })]);
  const used = process.cpuUsage(cpu);
  loop.disable();
  // SQLite: whether the WAL kept starting over (packages/db/src/checkpointer.ts), or grew toward the writer's 10,000-frame safety net.
  const walHighWater = wal ? await walFrames(wal) : undefined;
  const s = JSON.parse(stdout) as Omit<Sample, 'cpuUs' | 'loopDelayP99' | 'loopDelayMax'>;
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  return {
    ...s,
    cpuUs: Math.round((used.user + used.system) / Math.max(1, s.requests)),
    loopDelayP99: ms(loop.percentile(99)),
    loopDelayMax: ms(loop.max),
    walHighWater,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => `${Math.min(...xs)}-${Math.max(...xs)}`;

async function bench(database: 'sqlite' | 'postgres'): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-bench-api-'));
  const testDb = database === 'postgres' ? await freshTestDatabase() : { env: {}, drop: async () => undefined };
  const cp = await createControlPlane(loadConfig({ CAPTIONFARM_DATA_DIR: dir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...testDb.env }), {
    lookup: testLookup,
  });
  const url = await cp.listen(0, '127.0.0.1');
  const admin = apiFor(url, cp.adminToken);
  const lines: string[] = [];
  try {
    const keys: string[] = [];
    const jobIds: string[] = [];
    let template = '';
    for (let i = 0; i < Number(values.accounts); i++) {
      const acc = await admin('POST', '/admin/v1/accounts', { name: `bench-${i}`, plan: 'pro' });
      await admin('POST', `/admin/v1/accounts/${acc.body.id}/minutes`, { minutes: 1_000_000 });
      const key = (await admin('POST', `/admin/v1/accounts/${acc.body.id}/keys`)).body.key as string;
      const api = apiFor(url, key);
      template ||= (await api('GET', '/v1/templates')).body.templates[0].id;
      jobIds.push((await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })).body.id);
      keys.push(key);
    }
    const body = JSON.stringify({ videoUrl: 'https://v.example.com/a.mp4', templateId: template });
    for (const rate of rates) {
      const samples: Record<Route, Sample[]> = { healthz: [], get: [], create: [] };
      for (let r = 0; r < rounds; r++) {
        for (const route of ['healthz', 'get', 'create'] as const) {
          const s = await load({ url, route, rate, keys, jobIds, body }, database === 'sqlite' ? path.join(dir, 'captionfarm.sqlite-wal') : undefined);
          if (s.non2xx > 0 || s.errors > 0) process.stderr.write(`warning: ${database} ${route} ${rate}/s: ${s.non2xx} non-2xx, ${s.errors} errors\n`);
          samples[route].push(s);
          process.stderr.write(
            `${database} ${route} ${rate}/s round ${r + 1}: p50 ${s.p50} ms, p99 ${s.p99} ms (${s.requests} requests), ${s.cpuUs} us CPU/request, ` +
              `event loop delay p99 ${s.loopDelayP99} ms, max ${s.loopDelayMax} ms${s.walHighWater === undefined ? '' : `, WAL high-water ${s.walHighWater} frames`}\n`,
          );
        }
      }
      for (const route of ['create', 'get'] as const) {
        const p50 = samples[route].map((s) => s.p50);
        const p99 = samples[route].map((s) => s.p99);
        const ratio = samples[route].map((s, i) => s.p99 / Math.max(1, samples.healthz[i]!.p99));
        const cpu = samples[route].map((s) => s.cpuUs);
        lines.push(
          `| ${database} | ${route} | ${rate}/s | ${median(p50)} (${spread(p50)}) | ${median(p99)} ` +
            `(${spread(p99)}) | ${median(ratio).toFixed(1)}x ` +
            `(${Math.min(...ratio).toFixed(1)}-${Math.max(...ratio).toFixed(1)}) | ${median(cpu)} (${spread(cpu)}) |`,
        );
      }
      const h = samples.healthz.map((s) => s.p99);
      const hc = samples.healthz.map((s) => s.cpuUs);
      lines.push(
        `| ${database} | healthz (baseline) | ${rate}/s | ${median(samples.healthz.map((s) => s.p50))} | ${median(h)} (${spread(h)}) | 1.0x | ` +
          `${median(hc)} (${spread(hc)}) |`,
      );
    }
  } finally {
    await cp.close();
    await testDb.drop();
    await rm(dir, { recursive: true, force: true });
  }
  return lines;
}

const table = [
  '| database | route | rate | p50 ms (spread) | p99 ms (spread) | p99 / healthz p99 | server CPU us/request (spread) |',
  '|---|---|---|---|---|---|---|',
];
table.push(...(await bench('sqlite')));
if (testDatabaseServerUrl()) table.push(...(await bench('postgres')));
else process.stderr.write('PostgreSQL skipped: set CAPTIONFARM_TEST_DATABASE_URL (bash scripts/postgres prints one)\n');
process.stdout.write(`bench:api  ${rounds} rounds of ${seconds} s per (database, route, rate); medians, spread over the rounds\n${table.join('\n')}\n`);
process.exit(0);
