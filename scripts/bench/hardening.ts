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
 *   npm run bench:hardening [-- --rounds 3 --seconds 15 --connections 1000 --size 3840x2160 --part AB]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readAdminToken } from '@captionfarm/control-plane';
import { runProcess, runToEnd } from '@captionfarm/transcriber/process';
import { agentClient, apiFor, TEST_AGENT_CAPABILITIES, type Api } from '../../apps/control-plane/test/harness.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '1000' },
    part: { type: 'string', default: 'AB' },
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
  const repo = path.resolve(import.meta.dirname, '../..');
  let listening = (_: string) => {};
  const child = runProcess(process.execPath, {
    args: [fileURLToPath(import.meta.resolve('tsx/cli')), path.join(repo, 'apps/cli/src/main.ts'), 'serve'],
    env: { ...process.env, PORT: '0', CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_EMBEDDED_AGENT: '0', CAPTIONFARM_LOG: 'silent' },
    stdout: 'ignore',
    onStderr: () => listening(child.stderrTail()),
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

/** Polls GET every `everyMs` until stopped; returns the latencies. */
function poll(api: Api, p: string, everyMs: number) {
  const latencies: number[] = [];
  let errors = 0;
  let stop = false;
  const done = (async () => {
    while (!stop) {
      const t0 = performance.now();
      const r = await api('GET', p);
      latencies.push(performance.now() - t0);
      if (r.status !== 200) errors++;
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

const dataDir = await mkdtemp(path.join(tmpdir(), 'cf-bench-hardening-'));
const server = await startServer(dataDir);
const adminToken = readAdminToken(dataDir)!;
const admin = apiFor(server.url, adminToken);
let accountN = 0;
async function account(plan: string): Promise<Api> {
  // A keep-alive connection the server closed meanwhile resets a POST (undici does not retry it).
  const a = await admin('POST', '/admin/v1/accounts', { name: `bench-${++accountN}`, plan }).catch(() =>
    admin('POST', '/admin/v1/accounts', { name: `bench-${accountN}`, plan }),
  );
  const k = await admin('POST', `/admin/v1/accounts/${a.body.id}/keys`);
  return apiFor(server.url, k.body.key as string);
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
      const latencies: number[] = [];
      let stop = false;
      const done = (async () => {
        while (!stop) {
          const t0 = performance.now();
          await agent.heartbeat.mutate({ nodeId, leases: [] });
          latencies.push(performance.now() - t0);
          await sleep(100);
        }
      })();
      return {
        async end() {
          stop = true;
          await done;
          return latencies;
        },
      };
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
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
