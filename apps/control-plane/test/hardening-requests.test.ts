import { mkdir, readdir, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema } from '@captionfarm/contracts';
import { jsonOf, makeTestClip, rawRequest, startHarness, until, type Api, type Harness } from './harness.ts';

/** GET with a chosen source address (127.0.0.x), to act as another client. */
function getFrom(url: string, localAddress: string, headers: Record<string, string>): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

const logs: { msg: string; extra: unknown }[] = [];
let h: Harness;
let api: Api;
let key: string;
let accountId: string;
let template: string;

beforeAll(async () => {
  h = await startHarness(
    {
      CAPTIONFARM_HEADERS_TIMEOUT_SECONDS: '1',
      CAPTIONFARM_BODY_IDLE_SECONDS: '0.5',
      CAPTIONFARM_BODY_TOTAL_SECONDS: '2',
      CAPTIONFARM_UPLOAD_IDLE_SECONDS: '1',
      CAPTIONFARM_AGENT_AUTH_SECONDS: '0.5',
      CAPTIONFARM_MAX_AGENT_CONNECTIONS: '8',
    },
    { log: (msg, extra) => logs.push({ msg, extra }) },
  );
  ({ api, key, accountId } = await h.account('pro', 'hardened'));
  template = (await api('GET', '/v1/templates')).body.templates[0].id;
});
afterAll(() => h.close());

describe('template previews (item 1)', () => {
  const preview = (a: Api, size: { width: number; height: number }) =>
    a('POST', `/v1/templates/${template}/preview`, { text: 'one tenant must never slow another', ...size });

  it("render on the worker pool; an account gets at most its plan's previews in flight (429 with Retry-After past it)", async () => {
    const before = h.cp.services.previews.stats().completed;
    const { api: other } = await h.account('free', 'bystander');
    const big = { width: 1280, height: 720 };
    // pro: 4 at a time. Five at once: one is refused, the others render.
    const [results, bystander] = await Promise.all([Promise.all([1, 2, 3, 4, 5].map(() => preview(api, big))), other('GET', '/v1/automation-jobs')]);
    expect(bystander.status).toBe(200);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(h.cp.services.previews.stats().completed - before).toBe(4);
    // free: 1 at a time.
    const [a, b] = await Promise.all([preview(other, { width: 1280, height: 720 }), preview(other, { width: 1280, height: 720 })]);
    expect([a.status, b.status].sort()).toEqual([200, 429]);
  });

  it('refuses a preview over 3840x2160 pixels with 422 before rendering it', async () => {
    const before = h.cp.services.previews.stats().completed;
    const res = await preview(api, { width: 3840, height: 3840 });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('limit_exceeded');
    expect(h.cp.services.previews.stats().completed).toBe(before);
    expect((await preview(api, { width: 2160, height: 3840 })).status).toBe(200);
  });
});

describe('request bodies (item 2)', () => {
  it('a connection that sends nothing, or only part of its headers, is closed by the headers timeout', async () => {
    const u = new URL(h.url);
    const silent = connect({ host: u.hostname, port: Number(u.port) });
    silent.on('error', () => undefined);
    const head = connect({ host: u.hostname, port: Number(u.port) }, () => head.write('GET /v1/automation-jobs HTTP/1.1\r\nHost: x\r\n'));
    head.on('error', () => undefined);
    await Promise.all([new Promise((r) => silent.on('close', r)), new Promise((r) => head.on('close', r))]);
    // A request that started is not cut by this deadline: the trickling body below runs 2 s and
    // ends with its own 408, not a closed connection at 1 s.
  });

  it('a declared Content-Length over the limit gets 413 from the headers alone, and the connection closes', async () => {
    const c = rawRequest(
      h.url,
      `POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 100000000`,
      '{"a":1,"b"',
    );
    const response = await c.closed;
    expect(response).toMatch(/^HTTP\/1.1 413/);
    expect(jsonOf(response).error.code).toBe('payload_too_large');
    // Refused before the credential is even looked at.
    const anon = await rawRequest(h.url, 'POST /v1/automation-jobs HTTP/1.1\nContent-Type: application/json\nContent-Length: 100000000', '{').closed;
    expect(anon).toMatch(/^HTTP\/1.1 413/);
  });

  it('a JSON body that stalls gets 408 request_timeout and the connection closes', async () => {
    const c = rawRequest(
      h.url,
      `POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 200`,
      '{"templateId":',
    );
    const response = await c.closed;
    expect(response).toMatch(/^HTTP\/1.1 408/);
    const body = jsonOf(response);
    expect(ErrorBodySchema.safeParse(body).success).toBe(true);
    expect(body.error.code).toBe('request_timeout');
  });

  it('a JSON body that trickles past the total timeout gets 408 too', async () => {
    const c = rawRequest(h.url, `POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 200`, '{');
    // One byte every 200 ms never trips the idle timeout (500 ms); the total one (2 s) ends it.
    const drip = setInterval(() => c.socket.write(' '), 200);
    try {
      const response = await c.closed;
      expect(response).toMatch(/^HTTP\/1.1 408/);
      expect(jsonOf(response).error.message).toMatch(/took longer than 2 s/);
    } finally {
      clearInterval(drip);
    }
  });

  it('stalled upload connections are cut after the upload idle timeout, leave no part file, and the API keeps answering', async () => {
    const ups = await Promise.all([0, 1, 2, 3, 4].map(() => api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 5_000_000 })));
    const stalled = ups.flatMap((u) => {
      const url = new URL(u.body.uploadUrl);
      return [0, 1, 2, 3].map(() =>
        rawRequest(u.body.uploadUrl, `PUT ${url.pathname}${url.search} HTTP/1.1\nContent-Type: video/mp4\nContent-Length: 5000000`, Buffer.alloc(10)),
      );
    });
    const objects = path.join(h.dataDir, 'objects');
    const parts = async () => (await readdir(objects, { recursive: true }).catch(() => [] as string[])).filter((f) => f.includes('.part'));
    await until(async () => (await parts()).length === 20, 10_000, '20 part files');
    // The API answers while they are held.
    expect((await api('GET', '/v1/automation-jobs')).status).toBe(200);
    const responses = await Promise.all(stalled.map((s) => s.closed));
    for (const r of responses) expect(r).toMatch(/^HTTP\/1.1 400[\s\S]*RequestTimeout/);
    await until(async () => (await parts()).length === 0, 10_000, 'part files removed');
  });
});

describe('agent websockets (items 3, 4)', () => {
  const wsUrl = () => `${h.url.replace('http', 'ws')}/agent`;

  it('an unauthenticated websocket is closed at the auth deadline even though it answers pings', async () => {
    const ws = new WebSocket(wsUrl());
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((r) => ws.once('open', r));
    expect(await closed).toBe(4401);
  });

  it('an authenticated agent stays connected past the deadline', async () => {
    const token = (await h.admin('POST', '/agents/tokens', { name: 'stays' })).body.token;
    const ws = new WebSocket(`${wsUrl()}?connectionParams=1`);
    let closedCode: number | null = null;
    ws.on('close', (code) => (closedCode = code));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ method: 'connectionParams', data: { token } }));
    ws.send(
      JSON.stringify({
        id: 1,
        method: 'mutation',
        params: {
          path: 'register',
          input: { nodeName: 'stays', capabilities: { gpu: false, nvenc: false, cudaWhisper: false, models: ['base'], maxConcurrentJobs: 1 } },
        },
      }),
    );
    const reply = await new Promise<any>((resolve) => ws.once('message', (m) => resolve(JSON.parse(String(m)))));
    expect(reply.result?.data?.nodeId).toMatch(/[0-9a-f-]{36}/);
    // Outlive the 0.5 s deadline by a margin: a closed-by-deadline socket would have closed by then.
    const probe = new WebSocket(wsUrl());
    await new Promise<void>((resolve) => probe.on('close', () => resolve()));
    expect(closedCode).toBeNull();
    ws.close();
  });

  it('caps open websockets: past the unauthenticated share, the upgrade gets 503', async () => {
    // 8 connections at most, a quarter (2) unauthenticated.
    const open = [new WebSocket(wsUrl()), new WebSocket(wsUrl())];
    await Promise.all(open.map((w) => new Promise((r) => w.once('open', r))));
    const third = new WebSocket(wsUrl());
    const status = await new Promise<number>((resolve) => third.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    third.on('error', () => undefined);
    expect(status).toBe(503);
    await Promise.all(open.map((w) => new Promise((r) => w.once('close', r))));
  });

  it('error frames for an unauthenticated client carry no stack trace and no server paths', async () => {
    const ws = new WebSocket(wsUrl());
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ id: 1, method: 'mutation', params: { path: 'register', input: { nodeName: 'x', capabilities: {} } } }));
    ws.send(JSON.stringify({ id: 2, method: 'mutation', params: { path: 'no.such.procedure', input: {} } }));
    const frames: string[] = [];
    await new Promise<void>((resolve) => {
      ws.on('message', (m) => {
        frames.push(String(m));
        if (frames.length === 2) resolve();
      });
    });
    ws.close();
    for (const frame of frames) {
      const parsed = JSON.parse(frame);
      expect(parsed.error, frame).toBeDefined();
      expect(JSON.stringify(parsed)).not.toMatch(/"stack"|node_modules|\/src\/|\.ts:\d+|\bat \w+ \(/);
    }
  });
});

describe('paths with malformed percent-encoding (item 5)', () => {
  it.each([
    ['GET', '/v1/automation-jobs/%E0%A4%A'],
    ['POST', '/v1/automation-jobs/%E0%A4%A/cancel'],
    ['GET', '/v1/automation-jobs/%E0%A4%A/webhook-deliveries'],
    ['GET', '/v1/templates/%E0%A4%A'],
    ['DELETE', '/v1/templates/%E0%A4%A'],
    ['POST', '/v1/templates/%E0%A4%A/preview'],
    ['GET', '/v1/automation-jobs/%'],
  ])('%s %s -> 400 invalid_request, nothing logged as unhandled', async (method, p) => {
    const before = logs.length;
    const res = await api(method, p);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(logs.slice(before).filter((l) => l.msg.includes('unhandled'))).toEqual([]);
  });

  it('admin routes too', async () => {
    const res = await h.admin('GET', '/accounts/%E0%A4%A/keys');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });
});

describe('creation-time URL checks (items 6, 12)', () => {
  it.each(['https://cdn.rebind.test./a.mp4', 'https://cdn.private.test./a.mp4', 'https://cdn.private.test../a.mp4', 'https://CDN.Rebind.Test./a.mp4'])(
    'a trailing-dot host gets the same check as without the dot: %s',
    async (bad) => {
      for (const body of [
        { videoUrl: bad, templateId: template },
        { videoUrl: 'https://videos.example.com/a.mp4', templateId: template, webhookUrl: bad },
      ]) {
        const res = await api('POST', '/v1/automation-jobs', body);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
    },
  );

  it('the refusal does not echo the internal address and reads as a sentence', async () => {
    const res = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://cdn.private.test/a.mp4', templateId: template });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toContain('10.1.2.3');
    expect(res.body.error.message).toBe(
      'videoUrl is not accepted: cdn.private.test resolves to a non-public address; use a host whose ' + 'addresses are all public.',
    );
  });
});

describe('uploads (item 8)', () => {
  it('once a job has claimed an upload, its URL can no longer replace the object (409)', async () => {
    const dir = path.join(h.dataDir, 'media');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'clip.mp4');
    await makeTestClip(file, { seconds: 1, size: '64x64' });

    const bytes = await readFile(file);
    const up = (await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: bytes.length })).body;
    const putBytes = (b: Buffer) => fetch(up.uploadUrl, { method: 'PUT', body: b, headers: { 'content-type': 'video/mp4' } });
    expect((await putBytes(Buffer.alloc(bytes.length, 1))).status).toBe(200);
    // Before a job claims it, the client may still replace what it uploaded.
    expect((await putBytes(bytes)).status).toBe(200);
    expect((await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: template })).status).toBe(202);
    const again = await putBytes(Buffer.alloc(bytes.length, 2));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('UploadAlreadyUsed');
    expect(await readFile(path.join(h.dataDir, 'objects', `uploads/${up.uploadId}.mp4`))).toEqual(bytes);
  });
});

describe('API keys (item 13)', () => {
  it('lastUsedAt is written on use and shown in the key list', async () => {
    const { api: fresh, accountId: id } = await h.account('free', 'lastused');
    const keys = async () => (await h.admin('GET', `/accounts/${id}/keys`)).body.keys;
    expect((await keys())[0].lastUsedAt).toBeNull();
    expect((await fresh('GET', '/v1/automation-jobs')).status).toBe(200);
    const first = (await keys())[0].lastUsedAt;
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Within the minute, further requests do not write again.
    expect((await fresh('GET', '/v1/automation-jobs')).status).toBe(200);
    expect((await keys())[0].lastUsedAt).toBe(first);
    expect(accountId).not.toBe(id);
  });
});

describe('failed authentication (item 16)', () => {
  let h2: Harness;
  const seen: { msg: string; extra: any }[] = [];
  beforeAll(async () => {
    h2 = await startHarness({ CAPTIONFARM_AUTH_FAILURES_PER_MINUTE: '3' }, { log: (msg, extra) => seen.push({ msg, extra }) });
  });
  afterAll(() => h2.close());

  it('is logged without the key, and past the limit the address gets 429 with Retry-After for wrong keys, while a valid key is answered (issue 40)', async () => {
    const { key: good } = await h2.account('pro', 'victim');
    const bad = 'cf_live_guessedkey0000000000000000000000';
    const url = `${h2.url}/v1/automation-jobs`;
    for (let i = 0; i < 3; i++) expect((await getFrom(url, '127.0.0.3', { authorization: `Bearer ${bad}` })).status).toBe(401);
    const failures = seen.filter((l) => l.msg === 'authentication failed');
    expect(failures).toHaveLength(3);
    expect(failures[0]!.extra).toMatchObject({ ip: '127.0.0.3', kind: 'api-key', reason: 'unknown or revoked', path: '/v1/automation-jobs' });
    expect(JSON.stringify(failures)).not.toContain('guessedkey');
    const blocked = await getFrom(url, '127.0.0.3', { authorization: `Bearer ${bad}` });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    expect(Number(blocked.retryAfter)).toBeLessThanOrEqual(60);
    // A valid key from that address is answered: a client that fails cannot lock its neighbours out.
    expect((await getFrom(url, '127.0.0.3', { authorization: `Bearer ${good}` })).status).toBe(200);
    // Another address's wrong key is a plain 401.
    expect((await getFrom(url, '127.0.0.4', { authorization: `Bearer ${bad}` })).status).toBe(401);
    // The admin API counts failures the same way.
    for (let i = 0; i < 3; i++)
      expect((await getFrom(`${h2.url}/admin/v1/accounts`, '127.0.0.5', { authorization: 'Bearer wrong-admin-token' })).status).toBe(401);
    expect((await getFrom(`${h2.url}/admin/v1/accounts`, '127.0.0.5', { authorization: 'Bearer wrong-admin-token' })).status).toBe(429);
    expect((await getFrom(`${h2.url}/admin/v1/accounts`, '127.0.0.5', { authorization: `Bearer ${h2.cp.adminToken}` })).status).toBe(200);
  });
});
