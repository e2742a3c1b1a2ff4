import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PlanId } from '@captionfarm/contracts';
import { freshTestDatabase } from '@captionfarm/db/testing';
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import WebSocket from 'ws';
import type { LookupFn } from '@captionfarm/net';
import { createFakeLookup } from '@captionfarm/net/testing';
import { runToEnd } from '@captionfarm/process';
import { createControlPlane, loadConfig, type AgentRouter, type ControlPlane, type ControlPlaneOptions } from '../src/index.ts';

export interface Harness {
  cp: ControlPlane;
  url: string;
  dataDir: string;
  /** An account with a fresh API key. */
  account(plan?: PlanId, name?: string): Promise<{ accountId: string; key: string; api: Api }>;
  admin(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export type Api = (method: string, p: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any; headers: Headers }>;

export function apiFor(url: string, key: string | undefined): Api {
  return async (method, p, body, headers = {}) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
}

/**
 * This machine has no internet DNS. Names under example.com resolve to a public address (as they
 * do on the internet); *.rebind.test resolves to loopback and *.private.test to a private address
 * (as a hosts file or nss would map them), so the URL policy's DNS checks run for real against
 * these answers. The one fake resolver of the project answers like the system's: a trailing-dot
 * name is not found in such a table.
 */
export const testLookup: LookupFn = createFakeLookup({
  '*.rebind.test': [{ address: '127.0.0.1', family: 4 }],
  '*.private.test': [
    { address: '93.184.215.14', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ],
  'example.com': [{ address: '93.184.215.14', family: 4 }],
  '*.example.com': [{ address: '93.184.215.14', family: 4 }],
});

export async function startHarness(env: Record<string, string> = {}, opts: ControlPlaneOptions = {}): Promise<Harness> {
  opts = { lookup: testLookup, ...opts };
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cf-cp-'));
  // SQLite in the data dir, or a database of its own on CAPTIONFARM_TEST_DATABASE_URL's server.
  const testDb = await freshTestDatabase();
  const config = loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...testDb.env, ...env });
  const cp = await createControlPlane(config, opts);
  // Port 0 (any free port) unless the test chose one with PORT (e.g. to sit behind a proxy).
  const url = await cp.listen(env.PORT ? Number(env.PORT) : 0, '127.0.0.1');
  const adminApi = apiFor(url, cp.adminToken);
  const h: Harness = {
    cp,
    url,
    dataDir,
    async admin(method, p, body) {
      const r = await adminApi(method, `/admin/v1${p}`, body);
      return { status: r.status, body: r.body };
    },
    async account(plan = 'pro', name = 'acme') {
      const a = await h.admin('POST', '/accounts', { name, plan });
      if (a.status !== 201) throw new Error(`account create failed: ${JSON.stringify(a.body)}`);
      const k = await h.admin('POST', `/accounts/${a.body.id}/keys`);
      return { accountId: a.body.id as string, key: k.body.key as string, api: apiFor(url, k.body.key as string) };
    },
    async close() {
      await cp.close();
      await testDb.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** One HTTP/1.1 request over a raw socket: the head and `body`, then the socket stays as the test leaves it. */
export function rawRequest(url: string, head: string, body: Buffer | string = '', localAddress?: string) {
  const u = new URL(url);
  const socket: Socket = connect({ host: u.hostname, port: Number(u.port), ...(localAddress ? { localAddress } : {}) });
  let response = '';
  socket.on('data', (d) => (response += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
  socket.write(`${head.replace(/\n/g, '\r\n')}\r\nHost: ${u.host}\r\n\r\n`);
  if (body.length > 0) socket.write(body);
  return { socket, closed, response: () => response };
}

export function jsonOf(response: string): any {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

/** Polls until `check` returns a value, or fails after `ms`. */
export async function until<T>(check: () => Promise<T | undefined | null | false>, ms = 10_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A raw agent client over the real websocket protocol, for tests that play the agent's part;
 * `onClose` hears each close of its socket (with the server's close code).
 */
export function agentClient(
  url: string,
  token: string,
  o: { onClose?: (code: number | undefined) => void } = {},
): { agent: TRPCClient<AgentRouter>; close(): void } {
  const ws = createWSClient({
    url: `${url.replace('http', 'ws')}/agent`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token },
    onClose: (cause) => o.onClose?.(cause?.code),
  });
  return { agent: createTRPCClient<AgentRouter>({ links: [wsLink({ client: ws })] }), close: () => ws.close() };
}

/** A fresh agent token from the admin API. */
export async function agentToken(h: Harness, name = 'test-agent'): Promise<string> {
  return (await h.admin('POST', '/agents/tokens', { name })).body.token as string;
}

/** Capabilities of a CPU-only test agent. */
export const TEST_AGENT_CAPABILITIES = { gpu: false, nvenc: false, cudaWhisper: false, models: ['base'], maxConcurrentJobs: 2 };

/**
 * A test-pattern H.264 MP4 at `file`, with a sine as AAC unless `audio` is false: by default the
 * 2 s 320x240 clip the upload suites send.
 */
export async function makeTestClip(file: string, o: { seconds?: number; size?: string; audio?: boolean } = {}): Promise<void> {
  const { seconds = 2, size = '320x240', audio = true } = o;
  await runToEnd('ffmpeg', {
    args: [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=25:d=${seconds}`],
      ...(audio ? ['-f', 'lavfi', '-i', `sine=d=${seconds}`, '-c:a', 'aac', '-shortest'] : []),
      ...['-c:v', 'libx264', '-preset', 'ultrafast', file],
    ],
  });
}

/**
 * PUTs `body` to a presigned URL with node:http: its exact Content-Length, no Authorization, and
 * `headers` on top. The answer counts even when the server closes before reading the whole body
 * (S3 may answer 403 first).
 */
export function putBytes(url: string, body: Buffer, headers: Record<string, string | number> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, { method: 'PUT', headers: { 'content-length': body.length, ...headers } }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(body);
  });
}
