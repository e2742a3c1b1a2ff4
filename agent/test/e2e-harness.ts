import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createControlPlane, loadConfig, type ControlPlane, type ControlPlaneOptions } from '../../apps/control-plane/src/index.ts';
import { createTranscriber, testModelPath as testModelLocation, type TranscriberOptions } from '@captionfarm/transcriber';
import { createSafeFetch } from '@captionfarm/net';
import { runToEnd } from '@captionfarm/process';
import { freshTestDatabase } from '../../packages/db/src/testing.ts';
import { createAgent, type Agent, type AgentOptions } from '../src/index.ts';
import { apiFor, putBytes, testLookup, type Api } from '../../apps/control-plane/test/harness.ts';
import { createTestCertificates, type TestCertificates } from '../../packages/net/test/helpers/test-ca.ts';

/**
 * A tool (ffmpeg, ffprobe, espeak-ng, ps) run to its end through the process module: its stdout,
 * and its stderr (whole, for ffmpeg's PSNR and showinfo lines); rejects on a non-zero exit.
 */
export async function run(binary: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<{ stdout: string; stderr: string }> {
  const { stdout, stderrTail } = await runToEnd(binary, { args, env: opts.env, stderrTailChars: 1 << 20 });
  return { stdout, stderr: stderrTail };
}

/** The decoded frame of `video` at `t` seconds as raw pixels (rgb24: 3 bytes a pixel, gray: 1). */
export async function rawFrame(video: string, t: number, pixFmt: 'rgb24' | 'gray'): Promise<Buffer> {
  const args = ['-v', 'error', '-ss', t.toFixed(3), '-i', video, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', pixFmt, '-'];
  return (await runToEnd('ffmpeg', { args, encoding: 'buffer' })).stdout;
}

/** The real Whisper base model that scripts/setup fetches (scripts/fetch-test-model). */
export function testModelPath(): string {
  const p = testModelLocation();
  if (!existsSync(p)) throw new Error(`no test model at ${p}: run "bash scripts/setup --test-model" (or scripts/fetch-test-model)`);
  return p;
}

export interface Farm {
  cp: ControlPlane;
  url: string;
  dir: string;
  certs: TestCertificates;
  admin: Api;
  account(plan: 'free' | 'starter' | 'pro', name?: string): Promise<{ accountId: string; key: string; api: Api }>;
  balance(accountId: string): Promise<number>;
  /** An in-process agent connected over the websocket (the embedded default's path). */
  startAgent(o?: {
    model?: string;
    name?: string;
    concurrency?: number;
    threads?: number;
    encoder?: 'auto' | 'cpu' | 'nvenc';
    x264Threads?: number;
    overlap?: boolean;
    whisperThreadsBesideRender?: number;
    /** Options of the agent's own transcriber (a budget, a log), on top of the model and threads. */
    transcriber?: Partial<TranscriberOptions>;
    /** Wraps the agent's transcriber (a test watching what the pipeline asks of it). */
    wrapTranscriber?: (t: AgentOptions['transcriber']) => AgentOptions['transcriber'];
    log?: AgentOptions['log'];
    /** Where the agent connects; default the farm's control plane (a test puts a proxy in between). */
    controlPlaneUrl?: string;
  }): Promise<Agent & { workDir: string }>;
  agentToken(): Promise<string>;
  close(): Promise<void>;
}

export async function startFarm(o: { env?: Record<string, string>; opts?: ControlPlaneOptions } = {}): Promise<Farm> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-farm-'));
  const certs = await createTestCertificates();
  const testDb = await freshTestDatabase();
  const config = {
    ...loadConfig({
      CAPTIONFARM_DATA_DIR: path.join(dir, 'data'),
      CAPTIONFARM_LOG: 'silent',
      CAPTIONFARM_EMBEDDED_AGENT: '0',
      CAPTIONFARM_SWEEP_SECONDS: '0.5',
      ...testDb.env,
      ...o.env,
    }),
    unsafeTestNetwork: { allowLoopback: true as const, ca: certs.ca },
  };
  const cp = await createControlPlane(config, { lookup: testLookup, ...o.opts });
  const url = await cp.listen(0, '127.0.0.1');
  const admin = apiFor(url, cp.adminToken);
  const agents: { close(): Promise<void> }[] = [];
  const farm: Farm = {
    cp,
    url,
    dir,
    certs,
    admin,
    async account(plan, name = 'acme') {
      const a = await admin('POST', '/admin/v1/accounts', { name, plan });
      const k = await admin('POST', `/admin/v1/accounts/${a.body.id}/keys`);
      return { accountId: a.body.id, key: k.body.key, api: apiFor(url, k.body.key) };
    },
    async balance(accountId) {
      return (await admin('GET', `/admin/v1/accounts/${accountId}/minutes`)).body.balance;
    },
    async agentToken() {
      return (await admin('POST', '/admin/v1/agents/tokens', { name: 'test' })).body.token;
    },
    async startAgent(a = {}) {
      const workDir = await mkdtemp(path.join(dir, 'agent-'));
      const own = createTranscriber({ model: a.model ?? testModelPath(), threads: a.threads ?? 2, ...a.transcriber });
      const transcriber = a.wrapTranscriber ? a.wrapTranscriber(own) : own;
      const agent = createAgent({
        controlPlaneUrl: a.controlPlaneUrl ?? url,
        token: await farm.agentToken(),
        nodeName: a.name ?? `agent-${agents.length + 1}`,
        maxConcurrentJobs: a.concurrency ?? 1,
        workDir,
        transcriber,
        encoder: a.encoder ?? 'cpu',
        ...(a.x264Threads ? { x264Threads: a.x264Threads } : {}),
        ...(a.overlap ? { overlap: true } : {}),
        ...(a.whisperThreadsBesideRender ? { whisperThreadsBesideRender: a.whisperThreadsBesideRender } : {}),
        ...(a.log ? { log: a.log } : {}),
        heartbeatMs: 500,
        pollMs: 500,
        safeFetch: createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca }),
      });
      await agent.start();
      agents.push({
        async close() {
          await agent.close();
          await own.close();
        },
      });
      return Object.assign(agent, { workDir });
    },
    async close() {
      for (const a of agents) await a.close();
      await cp.close();
      await testDb.drop();
      certs.cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return farm;
}

/**
 * A clip made at test time: testsrc2 video (or another lavfi `video` source) plus espeak-ng speech
 * (at `speechRate` words a minute, after `leadSeconds` of silence) or none, H.264 + AAC in mp4.
 */
export async function makeClip(
  dir: string,
  name: string,
  o: {
    width: number;
    height: number;
    seconds: number;
    fps?: number;
    video?: string;
    speech?: string | null;
    speechRate?: number;
    leadSeconds?: number;
    silentAudio?: boolean;
    /** An audio file for the track (the clip is as long as `seconds`, or as the file when shorter). */
    audioFile?: string;
  },
): Promise<string> {
  const out = path.join(dir, name);
  const video = o.video ?? `testsrc2=s=${o.width}x${o.height}:r=${o.fps ?? 25}:d=${o.seconds}`;
  const args = ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', video];
  if (o.speech) {
    const wav = path.join(dir, `${name}.wav`);
    await run('espeak-ng', [...(o.speechRate ? ['-s', String(o.speechRate)] : []), '-w', wav, o.speech]);
    const pad = o.leadSeconds ? `adelay=${o.leadSeconds * 1000}:all=1,apad` : 'apad';
    args.push('-i', wav, '-map', '0:v', '-map', '1:a', '-af', pad, '-t', String(o.seconds), '-c:a', 'aac');
  } else if (o.audioFile) {
    args.push('-i', o.audioFile, '-map', '0:v', '-map', '1:a', '-t', String(o.seconds), '-shortest', '-c:a', 'aac');
  } else if (o.silentAudio) {
    args.push('-f', 'lavfi', '-i', `anullsrc=r=16000:cl=mono`, '-map', '0:v', '-map', '1:a', '-t', String(o.seconds), '-c:a', 'aac');
  }
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', out);
  await run('ffmpeg', args);
  return out;
}

/** Upload flow: create upload, PUT, create job. Returns the job record. */
export async function submitUpload(api: Api, file: Buffer, job: Record<string, unknown>, fileName = 'clip.mp4'): Promise<any> {
  const up = await api('POST', '/v1/automation-jobs/uploads', { fileName, sizeBytes: file.length });
  if (up.status !== 201) throw new Error(`upload: ${JSON.stringify(up.body)}`);
  const put = await putBytes(up.body.uploadUrl, file);
  if (put !== 200) throw new Error(`PUT answered ${put}`);
  const res = await api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: 'karaoke', ...job });
  if (res.status !== 202) throw new Error(`create: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls a job every 100 ms until `done(record)`; records every (phase, percent) seen. */
export async function watchJob(
  api: Api,
  id: string,
  done: (j: any) => boolean,
  timeoutMs = 240_000,
): Promise<{ job: any; seen: { phase: string; percent: number | null; status: string }[] }> {
  const seen: { phase: string; percent: number | null; status: string }[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await pollOnce(api, id, end);
    const j = r.body;
    const last = seen.at(-1);
    if (!last || last.phase !== j.phase || last.percent !== j.percent) seen.push({ phase: j.phase, percent: j.percent, status: j.status });
    if (done(j)) return { job: j, seen };
    if (Date.now() > end) throw new Error(`job ${id} still ${j.status}/${j.phase} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Retries of one poll after a network failure, and the first backoff (doubling: 0.1, 0.2 ... 3.2 s, 6.3 s in all). */
const POLL_RETRIES = 6;
const POLL_BACKOFF_MS = 100;

/**
 * One GET of the job, retried after a network failure (fetch rejects: ECONNRESET, a keep-alive
 * socket the server closed under a loaded machine): the GET is idempotent, as the SDK's
 * waitForJob treats it. Bounded by POLL_RETRIES and the wait's deadline; an HTTP answer, even
 * an error status, is returned as is.
 */
async function pollOnce(api: Api, id: string, end: number): ReturnType<Api> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api('GET', `/v1/automation-jobs/${id}`);
    } catch (err) {
      const delay = POLL_BACKOFF_MS * 2 ** attempt;
      if (attempt >= POLL_RETRIES || Date.now() + delay > end) {
        throw new Error(`polling job ${id} failed ${attempt + 1} times in a row: ${String((err as Error).cause ?? err)}`, { cause: err });
      }
      await new Promise((res) => setTimeout(res, delay));
    }
  }
}

/** Prometheus text format (GET /metrics) -> `name{labels}` -> value (labels as written, sorted by prom-client). */
export function parseMetrics(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    m.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return m;
}

/** The stages an agent reports with each job (captionfarm_job_phase_duration_seconds). */
export const JOB_STAGES = ['ingest', 'transcribe', 'render', 'upload'] as const;

/**
 * The stage seconds of the one job a fresh farm ran: captionfarm_job_phase_duration_seconds_sum
 * from its /metrics. The control plane records them just after the job reads succeeded: polled
 * until the job is counted (10 s at most).
 */
export async function jobStageSeconds(farm: Farm): Promise<Record<(typeof JOB_STAGES)[number], number>> {
  const family = 'captionfarm_job_phase_duration_seconds';
  const sum = (metrics: Map<string, number>, what: 'sum' | 'count', stage: string) =>
    [...metrics].filter(([k]) => k.startsWith(`${family}_${what}{phase="${stage}",`)).reduce((a, [, v]) => a + v, 0);
  for (const end = Date.now() + 10_000; ; ) {
    const res = await fetch(`${farm.url}/metrics`, { headers: { authorization: `Bearer ${farm.cp.adminToken}` } });
    const metrics = parseMetrics(await res.text());
    if (sum(metrics, 'count', 'upload') >= 1) {
      return {
        ingest: sum(metrics, 'sum', 'ingest'),
        transcribe: sum(metrics, 'sum', 'transcribe'),
        render: sum(metrics, 'sum', 'render'),
        upload: sum(metrics, 'sum', 'upload'),
      };
    }
    if (Date.now() > end) throw new Error(`${family} never counted the job on ${farm.url}/metrics`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const terminal = (j: any) => ['succeeded', 'failed', 'cancelled'].includes(j.status);

/** An HTTPS server on loopback with the test certificate, serving files by path. */
export async function startVideoServer(
  certs: TestCertificates,
  files: Record<string, Buffer | ((res: import('node:http').ServerResponse) => void)>,
): Promise<{ url: (p: string) => string; close(): Promise<void> }> {
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const f = files[req.url ?? ''];
    if (typeof f === 'function') return f(res);
    if (!f) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': f.length }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p) => `https://localhost:${port}${p}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** ffmpeg processes whose command line mentions `needle` (e.g. an agent's work dir). */
export async function ffmpegProcesses(needle: string): Promise<number[]> {
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .filter((l) => /\bffmpeg\b/.test(l) && l.includes(needle) && !l.includes(' ps '))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

export async function writeTruncated(src: string, dest: string, bytes: number): Promise<void> {
  const { open } = await import('node:fs/promises');
  const fh = await open(src, 'r');
  const buf = Buffer.alloc(bytes);
  await fh.read(buf, 0, bytes, 0);
  await fh.close();
  await writeFile(dest, buf);
}
