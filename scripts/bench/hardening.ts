/**
 * bench:hardening — issue 11's two load checks, bounded and on loopback, against the real
 * `captionfarm serve` in a child process (so the load generator never shares its event loop):
 *
 *  A. previews: one pro account keeps its 4 previews in flight (3840x2160 frames) while another
 *     account polls GET /v1/automation-jobs/:id and an agent sends heartbeats over the websocket.
 *     Latencies are compared with a baseline phase of the same round, without previews.
 *  B. stalled uploads: 1,000 PUT connections that declare 5 MB and send 10 bytes, spread over 16
 *     loopback addresses and 250 upload URLs (inside the default per-address and per-URL caps, so
 *     every one is held), while another account polls the API; then 1,000 to one URL from one
 *     address (the caps refuse all but 4 at once). Reports when each was cut.
 *
 *  C. issue 40's strangers and heavy tenants at once: 8 strangers (each its own loopback address)
 *     flood sign-in and invite-accept with made-up credentials; one pro account keeps 4 creates
 *     with 20,000-word transcripts (7.8 MB bodies) and 4 SRT exports of a 20,000-word job in
 *     flight; one account keeps its hostile fonts (composite-glyph bombs) in the font checker.
 *     Meanwhile another account polls GET job, downloads a presigned output (200 KB) and PUTs a
 *     200 KB upload; each against a baseline phase of the same round without the load.
 *     `--repo <checkout>` serves from another checkout (e.g. main before issue 40) with this script.
 *
 *   npm run bench:hardening [-- --rounds 3 --seconds 15 --connections 1000 --size 3840x2160 --part ABC --repo .]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readAdminToken } from '@captionfarm/control-plane';
import { runProcess, runToEnd } from '@captionfarm/process';
import { agentClient, apiFor, TEST_AGENT_CAPABILITIES, type Api } from '../../apps/control-plane/test/harness.ts';
import { compositeBombTtf } from '../../packages/renderer/test/helpers/fonts.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '1000' },
    part: { type: 'string', default: 'ABC' },
    repo: { type: 'string' },
    load: { type: 'string', default: 'strangers,transcripts,fonts' },
    'load-config': { type: 'string' },
    size: { type: 'string', default: '3840x2160' },
  },
});
const rounds = Number(values.rounds);
const loadSeconds = Number(values.seconds);
const connections = Number(values.connections);
const [previewWidth, previewHeight] = values.size.split('x').map(Number) as [number, number];
const UPLOAD_IDLE_SECONDS = 20; // the documented default (CAPTIONFARM_UPLOAD_IDLE_SECONDS)

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startServer(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const repo = path.resolve(values.repo ?? path.resolve(import.meta.dirname, '../..'));
  let listening = (_: string) => {};
  const child = runProcess(process.execPath, {
    // BENCH_SERVER_NODE_ARGS: node flags for the server alone (--cpu-prof, --trace-gc), not this process.
    args: [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      import.meta.resolve('tsx'),
      path.join(repo, 'apps/cli/src/main.ts'),
      'serve',
    ],
    env: { ...process.env, PORT: '0', CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_EMBEDDED_AGENT: '0', CAPTIONFARM_LOG: 'silent' },
    stdout: 'ignore',
    onStderr: (c) => {
      if (process.env.BENCH_SERVER_NODE_ARGS) process.stderr.write(c);
      listening(child.stderrTail());
    },
  });
  const url = await new Promise<string>((resolve, reject) => {
    listening = (err) => {
      const m = /listening on (\S+)/.exec(err);
      if (m) resolve(m[1]!);
    };
    child.done.then((r) => reject(new Error(`serve exited (${r.exitCode}): ${r.stderrTail}`)), reject);
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await child.done;
    },
  };
}

/** Polls GET every `everyMs` until stopped; returns the latencies and the answers that were not 200. */
function poll(api: Api, p: string, everyMs: number) {
  return loop(async () => (await api('GET', p)).status === 200, everyMs);
}

/** One HTTP request from a chosen loopback source address (node:http: fetch cannot pick it). */
function httpFrom(
  localAddress: string,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, localAddress },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Times `fn` in a loop every `everyMs` until stopped: latencies and failures (a throw or `ok` false). */
function loop(fn: () => Promise<boolean>, everyMs: number) {
  const latencies: number[] = [];
  let errors = 0;
  let stop = false;
  const done = (async () => {
    while (!stop) {
      const t0 = performance.now();
      const ok = await fn().catch(() => false);
      latencies.push(performance.now() - t0);
      if (!ok) errors++;
      await sleep(everyMs);
    }
  })();
  return {
    async end() {
      stop = true;
      await done;
      return { latencies, errors };
    },
  };
}

/**
 * Runs `fn` in `n` parallel loops until stopped; counts answers by status. A tenant's loops wait a
 * second after a 429 (as the SDK honours Retry-After); a stranger's (`spin`) retry at once.
 */
function flood(n: number, fn: (i: number) => Promise<number>, o: { spin?: boolean } = {}) {
  const statuses = new Map<number, number>();
  let stop = false;
  const loops = Array.from({ length: n }, async (_, i) => {
    while (!stop) {
      const status = await fn(i).catch(() => 0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 0) await sleep(100);
      else if (status === 429 && !o.spin) await sleep(1000);
    }
  });
  return {
    async end() {
      stop = true;
      await Promise.all(loops);
      return Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0]));
    },
  };
}

/** What the load process of part C needs (passed as JSON in --load-config). */
interface LoadConfig {
  url: string;
  heavyKey: string;
  fonterKey: string;
  template: string;
  exportedJobId: string;
  round: number;
  seconds: number;
  loads: string[];
}

/**
 * Part C's load, in a process of its own at nice 19: on this 2-core machine the load generator
 * would otherwise take CPU from the server that a remote attacker's machine would not, and its
 * own event loop would delay the measuring client's timers. Prints the answers by status as JSON.
 */
async function runLoad(cfg: LoadConfig): Promise<void> {
  const heavy = apiFor(cfg.url, cfg.heavyKey);
  const fonter = apiFor(cfg.url, cfg.fonterKey);
  const on = new Set(cfg.loads);
  const idle = { end: async () => ({}) };
  const video = 'https://videos.example.com/a.mp4';
  // 7.8 MB create bodies: 20,000 words of 58 characters, each a \u escape (the costliest body to
  // parse that fits the 8 MiB limit).
  const escaped = '\\u5b57'.repeat(58);
  const bigBody = `{"videoUrl":"${video}","templateId":"${cfg.template}","transcript":{"words":[${Array.from(
    { length: 20_000 },
    (_, i) => `{"text":"${escaped}","start":${(i * 0.025).toFixed(3)},"end":${(i * 0.025 + 0.02).toFixed(3)}}`,
  ).join(',')}]}}`;
  const bomb = compositeBombTtf({ depth: 16, copies: 20 });
  const font = async () => {
    const created = await fonter('POST', '/v1/fonts', { fileName: 'bomb.ttf', sizeBytes: bomb.length });
    if (created.status !== 201) return created.status;
    await fetch(created.body.uploadUrl, { method: 'PUT', body: bomb, headers: { 'content-type': created.body.contentType } });
    const done = await fonter('POST', `/v1/fonts/${created.body.fontId}/complete`);
    if (done.status !== 422) await fonter('DELETE', `/v1/fonts/${created.body.fontId}`);
    return done.status;
  };
  // The strangers: 4 at sign-in, 4 at invite-accept, each from its own address, with the
  // anonymous CSRF cookie a browser gets first; they retry at once whatever the answer.
  const strangers = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const from = `127.0.3.${cfg.round * 10 + i + 1}`;
      const s = await httpFrom(from, 'GET', `${cfg.url}/app/api/session`);
      const csrf = JSON.parse(s.text).csrfToken as string;
      return { from, headers: { origin: cfg.url, cookie: `cf_csrf=${csrf}`, 'x-csrf-token': csrf, 'content-type': 'application/json' } };
    }),
  );
  const floods = {
    strangers: !on.has('strangers')
      ? idle
      : flood(
          8,
          async (i) => {
            const st = strangers[i]!;
            const body =
              i < 4
                ? JSON.stringify({ email: `nobody${randomUUID().slice(0, 8)}@example.com`, password: 'not the password at all' })
                : JSON.stringify({ token: `cfi_${randomUUID()}${randomUUID()}`.slice(0, 47), password: 'a long enough password' });
            return (await httpFrom(st.from, 'POST', `${cfg.url}/app/api/${i < 4 ? 'sign-in' : 'invite/accept'}`, st.headers, body)).status;
          },
          { spin: true },
        ),
    creates: !on.has('transcripts')
      ? idle
      : flood(4, async () => {
          const r = await heavy('POST', '/v1/automation-jobs', bigBody, { 'content-type': 'application/json' });
          if (r.status === 202) await heavy('POST', `/v1/automation-jobs/${r.body.id}/cancel`);
          return r.status;
        }),
    exports: !on.has('transcripts')
      ? idle
      : flood(4, async () => (await heavy('GET', `/v1/automation-jobs/${cfg.exportedJobId}/transcript?format=srt`)).status),
    fonts: !on.has('fonts') ? idle : flood(4, font),
  };
  await sleep(cfg.seconds * 1000);
  const answers: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(floods)) answers[k] = await f.end();
  process.stdout.write(`${JSON.stringify(answers)}\n`);
}

async function partC(): Promise<void> {
  const loads = values.load.split(',');
  console.log(
    `\nC. loads [${loads.join(', ')}] for ${loadSeconds} s, from a process of their own at nice 19: 8 strangers (each its own address) ` +
      `flood sign-in and invite-accept; one pro account keeps 4 creates with 20,000-word transcripts (7.8 MB) and 4 SRT exports of ` +
      `a 20,000-word job in flight; one account keeps hostile fonts in the checker. Meanwhile another account polls GET job every ` +
      `50 ms, downloads a presigned 200 KB output every 100 ms and PUTs a 200 KB upload every 200 ms; baseline: 5 s without the loads`,
  );
  const token = (await admin('POST', '/admin/v1/agents/tokens', { name: 'bench-c' })).body.token as string;
  const { agent, close } = agentClient(server.url, token);
  const { nodeId } = await agent.register.mutate({ nodeName: 'bench-c', capabilities: TEST_AGENT_CAPABILITIES });
  /**
   * Plays the agent for job `jobId`: ingest, an output of `bytes`, complete. A job an earlier part
   * left queued (part A's) is leased on the way and failed, so it is not mistaken for this one.
   */
  const succeed = async (jobId: string, durationSeconds: number, bytes: Buffer) => {
    for (;;) {
      const [job] = await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
      if (!job) throw new Error(`job ${jobId} was not leased`);
      const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
      if (job.jobId !== jobId) {
        await agent.fail.mutate({ ...ref, failureCode: 'internal', failureReason: 'bench: an earlier part left it queued' });
        continue;
      }
      await agent.ingested.mutate({ ...ref, durationSeconds, width: 64, height: 64 });
      await agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
      const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
      if (!up.ok) throw new Error('no output upload URL');
      if ((await fetch(up.url, { method: 'PUT', body: bytes })).status !== 200) throw new Error('output PUT failed');
      await agent.complete.mutate({ ...ref, resolution: { width: 64, height: 64 }, outputBytes: bytes.length });
      return;
    }
  };
  const other = apiFor(server.url, await accountKey('pro'));
  const heavyKey = await accountKey('pro');
  const fonterKey = await accountKey('pro');
  const template = (await other('GET', '/v1/templates')).body.templates[0].id as string;
  const video = 'https://videos.example.com/a.mp4';
  // The other tenant's finished job: GET job and its presigned download.
  const mine = (await other('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })).body.id as string;
  await succeed(mine, 10, Buffer.alloc(200_000, 7));
  const jobPath = `/v1/automation-jobs/${mine}`;
  const downloadUrl = (await other('GET', jobPath)).body.downloadUrl as string;
  const upload = (await other('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 200_000 })).body;
  const uploadBytes = Buffer.alloc(200_000, 3);
  // The heavy tenant's 20,000-word job to export.
  const words = Array.from({ length: 20_000 }, (_, i) => ({ text: `w${i}`, start: i * 0.025, end: i * 0.025 + 0.02 }));
  const heavy = apiFor(server.url, heavyKey);
  const exportedJobId = (await heavy('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, transcript: { words } })).body.id as string;
  await succeed(exportedJobId, 501, Buffer.alloc(1000, 1));
  const measure = () => ({
    get: loop(async () => (await other('GET', jobPath)).status === 200, 50),
    download: loop(async () => {
      const r = await fetch(downloadUrl);
      return r.status === 200 && (await r.arrayBuffer()).byteLength === 200_000;
    }, 100),
    put: loop(async () => (await fetch(upload.uploadUrl, { method: 'PUT', body: uploadBytes, headers: { 'content-type': 'video/mp4' } })).status === 200, 200),
  });
  /** The server's event-loop delay since the last call (prom-client resets it at each scrape): p99 and max, ms. */
  const loopDelay = async () => {
    const text = String((await admin('GET', '/metrics')).body);
    const v = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000;
    return `event loop p99 ${v('nodejs_eventloop_lag_p99_seconds').toFixed(1)} ms, max ${v('nodejs_eventloop_lag_max_seconds').toFixed(1)} ms`;
  };
  const summary: Record<'get' | 'download' | 'put', number[]> = { get: [], download: [], put: [] };
  for (let round = 1; round <= rounds; round++) {
    await loopDelay();
    let m = measure();
    await sleep(5000);
    const base = { get: await m.get.end(), download: await m.download.end(), put: await m.put.end() };
    const baseLoop = await loopDelay();
    const cfg: LoadConfig = { url: server.url, heavyKey, fonterKey, template, exportedJobId, round, seconds: loadSeconds + 1, loads };
    const load = runProcess('nice', {
      args: ['-n', '19', process.execPath, '--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), '--load-config', JSON.stringify(cfg)],
    });
    await sleep(1000);
    await loopDelay();
    m = measure();
    await sleep(loadSeconds * 1000);
    const loaded = { get: await m.get.end(), download: await m.download.end(), put: await m.put.end() };
    const loadedLoop = await loopDelay();
    const result = await load.done;
    console.log(`round ${round}: answers by status ${result.stdout.trim() || `(load process failed: ${result.stderrTail})`}`);
    console.log(`  server       baseline ${baseLoop}; loaded ${loadedLoop}`);
    for (const k of ['get', 'download', 'put'] as const) {
      const label = { get: 'GET job     ', download: 'download    ', put: 'upload PUT  ' }[k];
      summary[k].push(pct(loaded[k].latencies, 99));
      console.log(`  ${label} baseline ${fmt(base[k].latencies)}, errors ${base[k].errors}`);
      console.log(
        `  ${label} loaded   ${fmt(loaded[k].latencies)}, errors ${loaded[k].errors}   p99 ratio ${(pct(loaded[k].latencies, 99) / pct(base[k].latencies, 99)).toFixed(2)}`,
      );
    }
  }
  const spread = (xs: number[]) =>
    `p99 ${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)} ms over ${xs.length} rounds (median ${pct(xs, 50).toFixed(1)})`;
  console.log(`C loaded: GET job ${spread(summary.get)}; download ${spread(summary.download)}; upload PUT ${spread(summary.put)}`);
  close();
}

if (values['load-config']) {
  await runLoad(JSON.parse(values['load-config']) as LoadConfig);
  process.exit(0);
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'cf-bench-hardening-'));
const server = await startServer(dataDir);
const adminToken = readAdminToken(dataDir)!;
const admin = apiFor(server.url, adminToken);
let accountN = 0;
async function accountKey(plan: string): Promise<string> {
  // A keep-alive connection the server closed meanwhile resets a POST (undici does not retry it).
  const a = await admin('POST', '/admin/v1/accounts', { name: `bench-${++accountN}`, plan }).catch(() =>
    admin('POST', '/admin/v1/accounts', { name: `bench-${accountN}`, plan }),
  );
  const k = await admin('POST', `/admin/v1/accounts/${a.body.id}/keys`);
  return k.body.key as string;
}
async function account(plan: string): Promise<Api> {
  return apiFor(server.url, await accountKey(plan));
}
console.log(
  `bench:hardening against ${server.url} (captionfarm serve, child process); ulimit -n ${(await runToEnd('sh', { args: ['-c', 'ulimit -n'] })).stdout.trim()}; ${rounds} rounds`,
);

try {
  if (values.part.includes('A')) {
    console.log(
      `\nA. one pro account keeps 4 previews (${values.size}) in flight for ${loadSeconds} s; another ` +
        `account polls GET job every 50 ms; an agent heartbeats every 100 ms`,
    );
    const token = (await admin('POST', '/admin/v1/agents/tokens', { name: 'bench' })).body.token as string;
    const { agent, close } = agentClient(server.url, token);
    const { nodeId } = await agent.register.mutate({ nodeName: 'bench', capabilities: TEST_AGENT_CAPABILITIES });
    const heartbeat = () => {
      const l = loop(async () => {
        await agent.heartbeat.mutate({ nodeId, leases: [] });
        return true;
      }, 100);
      return { end: async () => (await l.end()).latencies };
    };
    const saturator = await account('pro');
    const template = (await saturator('GET', '/v1/templates')).body.templates[0].id as string;
    for (let round = 1; round <= rounds; round++) {
      const other = await account('pro');
      const job = (await other('POST', '/v1/automation-jobs', { videoUrl: 'https://videos.example.com/a.mp4', templateId: template })).body;
      const jobPath = `/v1/automation-jobs/${job.id ?? '00000000-0000-4000-8000-000000000000'}`;
      // Baseline: nothing else running.
      let g = poll(other, jobPath, 50);
      let hb = heartbeat();
      await sleep(5000);
      const base = await g.end();
      const baseHb = await hb.end();
      // Loaded: the saturating account keeps its plan's 4 previews in flight.
      let previews = 0;
      const refusals = new Map<number, number>();
      let stop = false;
      const loops = [1, 2, 3, 4].map(async () => {
        while (!stop) {
          const r = await saturator('POST', `/v1/templates/${template}/preview`, {
            text: 'one tenant must never slow another',
            width: previewWidth,
            height: previewHeight,
          });
          if (r.status === 200) previews++;
          else refusals.set(r.status, (refusals.get(r.status) ?? 0) + 1);
        }
      });
      await sleep(1000); // the pool's threads start on the first previews
      g = poll(other, jobPath, 50);
      hb = heartbeat();
      await sleep(loadSeconds * 1000);
      const loaded = await g.end();
      const loadedHb = await hb.end();
      stop = true;
      await Promise.all(loops);
      console.log(
        `round ${round}: previews rendered ${previews} (${(previews / (loadSeconds + 1)).toFixed(2)}/s), ` +
          `refused ${JSON.stringify(Object.fromEntries(refusals))}; GET errors ${base.errors + loaded.errors}`,
      );
      console.log(`  GET job      baseline ${fmt(base.latencies)}`);
      console.log(`  GET job      loaded   ${fmt(loaded.latencies)}   p99 ratio ${(pct(loaded.latencies, 99) / pct(base.latencies, 99)).toFixed(2)}`);
      console.log(`  heartbeat    baseline ${fmt(baseHb)}`);
      console.log(`  heartbeat    loaded   ${fmt(loadedHb)}`);
    }
    close();
  }

  if (values.part.includes('B')) {
    const objects = path.join(dataDir, 'objects');
    const partFiles = async () => (await readdir(objects, { recursive: true }).catch(() => [] as string[])).filter((f) => f.includes('.part')).length;
    const uploaders = [await account('pro'), await account('pro'), await account('pro')];
    const perUrl = 4;
    const urlCount = Math.ceil(connections / perUrl);
    const urls: string[] = [];
    for (let i = 0; i < urlCount; i++) {
      const r = await uploaders[i % uploaders.length]!('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 5_000_000 });
      if (r.status !== 201) throw new Error(`upload URL: ${r.status} ${JSON.stringify(r.body)}`);
      urls.push(r.body.uploadUrl as string);
    }
    const stall = (url: string, localAddress: string) => {
      const u = new URL(url);
      return new Promise<{ status: string; closedAfterMs: number }>((resolve) => {
        const socket: Socket = connect({ host: u.hostname, port: Number(u.port), localAddress }, () => {
          socket.write(`PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: video/mp4\r\nContent-Length: 5000000\r\n\r\n`);
          socket.write(Buffer.alloc(10));
          sent = performance.now();
        });
        let sent = performance.now();
        let response = '';
        socket.on('data', (d) => (response += d.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ status: response.slice(9, 12) || 'closed', closedAfterMs: performance.now() - sent }));
      });
    };
    const runB = async (label: string, target: (i: number) => { url: string; from: string }) => {
      const watcher = await account('pro');
      const b = poll(watcher, '/v1/automation-jobs', 50);
      await sleep(5000);
      const base = await b.end();
      // Open the connections at 250 a second, then hold them all until the server cuts them.
      const ramp = poll(watcher, '/v1/automation-jobs', 50);
      const closing: Promise<{ status: string; closedAfterMs: number }>[] = [];
      for (let i = 0; i < connections; i++) {
        closing.push(stall(target(i).url, target(i).from));
        if (i % 25 === 24) await sleep(100);
      }
      const rampResult = await ramp.end();
      const open = Promise.all(closing);
      let firstClosed = false;
      void Promise.race(closing).then(() => (firstClosed = true));
      const held = poll(watcher, '/v1/automation-jobs', 50);
      let peakParts = 0;
      while (!firstClosed) {
        peakParts = Math.max(peakParts, await partFiles());
        await sleep(1000);
      }
      const heldResult = await held.end();
      const all = await open;
      const t0 = performance.now();
      while ((await partFiles()) > 0 && performance.now() - t0 < 60_000) await sleep(250);
      const partsGoneMs = performance.now() - t0;
      const byStatus = new Map<string, number[]>();
      for (const c of all) byStatus.set(c.status, [...(byStatus.get(c.status) ?? []), c.closedAfterMs]);
      console.log(`\nB. ${label}`);
      for (const [status, times] of byStatus) console.log(`  ${times.length} answered ${status}, closed ${fmt(times)} after their last byte`);
      console.log(
        `  part files: peak ${peakParts}, ${await partFiles()} left ${(partsGoneMs / 1000).toFixed(1)} s ` +
          `after the last close; API errors ${base.errors + rampResult.errors + heldResult.errors}`,
      );
      console.log(`  API GET baseline            ${fmt(base.latencies)}`);
      console.log(`  API GET while opening them  ${fmt(rampResult.latencies)}`);
      console.log(
        `  API GET while all are held  ${fmt(heldResult.latencies)}   p99 ratio to baseline ` +
          `${(pct(heldResult.latencies, 99) / pct(base.latencies, 99)).toFixed(2)}`,
      );
    };
    // 16 source addresses x at most 63 connections: under the default 64 per address.
    await runB(
      `${connections} stalled PUTs over 16 addresses and ${urlCount} upload URLs (all held; documented idle timeout ${UPLOAD_IDLE_SECONDS} s)`,
      (i) => ({ url: urls[i % urlCount]!, from: `127.0.1.${(i % 16) + 1}` }),
    );
    await runB(`${connections} stalled PUTs to one upload URL from one address`, () => ({ url: urls[0]!, from: '127.0.0.1' }));
  }

  if (values.part.includes('C')) await partC();
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
