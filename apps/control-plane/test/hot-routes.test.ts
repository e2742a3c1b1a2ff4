import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ErrorBodySchema } from '@captionfarm/contracts';
import { openDatabase, type Db } from '@captionfarm/db';
import { hotRoutes } from '../src/http/hot-routes.ts';
import { rateLimit, type RequestLogLine } from '../src/http/middleware.ts';
import { createMetrics } from '../src/metrics.ts';
import type { JobsService } from '../src/jobs/service.ts';
import { jsonOf, rawRequest, startHarness, type Api, type Harness } from './harness.ts';

/**
 * The hot routes (src/http/hot-routes.ts) serve the plain create and get outside Express. Two
 * things must hold: they take only what they can answer exactly as Express would, and their
 * answers are Express's. The first part checks the choice against a server whose Express stands
 * in as a marker; the second sends the same requests to a real control plane on both paths (a
 * trailing slash routes a request to Express, where the same route matches) and compares them.
 */
describe('which requests the hot routes take', () => {
  const JOB_ID = '0b8e5a56-3c35-4b0e-9a51-1d0a7a4c9f10';
  let server: Server;
  let url: string;
  let db: Db;
  let dir: string;
  const lines: RequestLogLine[] = [];
  const created: unknown[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cf-hot-'));
    db = await openDatabase({ path: path.join(dir, 'db.sqlite') });
    const now = () => new Date();
    const jobs = {
      // The service counts the request in its own transaction (CountInTransaction), as JobsService does.
      async create(_caller, body, rateCount) {
        await rateCount?.count(db);
        rateCount?.committed();
        created.push(body);
        return { id: JOB_ID, status: 'queued' } as never;
      },
      async get(_caller, id) {
        return { id, status: 'queued' } as never;
      },
    } satisfies Pick<JobsService, 'create' | 'get'>;
    const hot = hotRoutes({
      authenticate: async (key) => (key === 'cf_live_good' ? { accountId: 'acc_1', plan: 'pro' } : null),
      limiter: rateLimit(db, now, new Set(['POST /automation-jobs'])),
      jobs,
      maxJobJsonBytes: 1000,
      bodyTimeouts: { totalMs: 2000, idleMs: 500 },
      metrics: createMetrics({ db, now }),
      logRequest: (line) => lines.push(line),
      log: () => undefined,
    });
    // What the hot routes hand on is answered 299 "express" (the control plane's Express app).
    const express = (res: import('node:http').ServerResponse) => res.writeHead(299).end('express');
    server = createServer((req, res) => {
      if (!hot(req, res, () => express(res))) express(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.close();
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const send = async (method: string, p: string, headers: Record<string, string>, body?: string) => {
    const res = await fetch(`${url}${p}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const json = { authorization: 'Bearer cf_live_good', 'content-type': 'application/json' };

  it('serves the plain create and get', async () => {
    const c = await send('POST', '/v1/automation-jobs', json, '{"templateId":"karaoke"}');
    expect(c.status).toBe(202);
    expect(JSON.parse(c.text)).toEqual({ id: JOB_ID, status: 'queued' });
    expect(c.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(c.headers.get('x-ratelimit-limit')).toBe('1200');
    expect(created.at(-1)).toEqual({ templateId: 'karaoke' });
    expect((await send('POST', '/v1/automation-jobs', { ...json, 'content-type': 'application/json; charset=UTF-8' }, '{}')).status).toBe(202);
    const g = await send('GET', `/v1/automation-jobs/${JOB_ID}`, { authorization: 'Bearer cf_live_good' });
    expect(g.status).toBe(200);
    expect(JSON.parse(g.text).id).toBe(JOB_ID);
    // Each answer has its one log line, with the ids.
    expect(lines.at(-1)).toMatchObject({ accountId: 'acc_1', jobId: JOB_ID, method: 'GET', path: `/v1/automation-jobs/${JOB_ID}`, status: 200 });
    expect(lines.at(-3)).toMatchObject({ accountId: 'acc_1', jobId: JOB_ID, method: 'POST', path: '/v1/automation-jobs', status: 202 });
  });

  it('hands everything else to Express, before reading a byte of the body', async () => {
    const express = async (method: string, p: string, headers: Record<string, string>, body?: string) => {
      const r = await send(method, p, headers, body);
      expect(r.status, `${method} ${p} ${JSON.stringify(headers)}`).toBe(299);
    };
    const body = '{"templateId":"karaoke"}';
    await express('POST', '/v1/automation-jobs/', json, body);
    await express('POST', '/v1/automation-jobs?x=1', json, body);
    await express('POST', '/V1/automation-jobs', json, body);
    await express('POST', '/v1/automation-jobs', { ...json, authorization: 'Bearer cf_live_wrong' }, body);
    await express('POST', '/v1/automation-jobs', { ...json, authorization: 'Basic abc' }, body);
    await express('POST', '/v1/automation-jobs', { 'content-type': 'application/json' }, body);
    await express('POST', '/v1/automation-jobs', { ...json, 'content-type': 'text/plain' }, body);
    await express('POST', '/v1/automation-jobs', { ...json, 'content-type': 'application/json; charset=utf-16' }, body);
    await express('POST', '/v1/automation-jobs', { ...json, 'content-type': 'application/merge-patch+json' }, body);
    await express('POST', '/v1/automation-jobs', { ...json, 'content-encoding': 'gzip' }, body);
    await express('POST', '/v1/automation-jobs', json, 'x'.repeat(1001));
    await express('POST', '/v1/automation-jobs', json, '');
    await express('POST', '/v1/automation-jobs', json);
    await express('GET', `/v1/automation-jobs/${JOB_ID}/`, { authorization: 'Bearer cf_live_good' });
    await express('GET', '/v1/automation-jobs/not-a-job-id', { authorization: 'Bearer cf_live_good' });
    await express('GET', '/v1/automation-jobs', { authorization: 'Bearer cf_live_good' });
    await express('GET', `/v1/automation-jobs/${JOB_ID}?x=1`, { authorization: 'Bearer cf_live_good' });
    await express('HEAD', `/v1/automation-jobs/${JOB_ID}`, { authorization: 'Bearer cf_live_good' });
    await express('GET', `/v1/automation-jobs/${JOB_ID}/style`, { authorization: 'Bearer cf_live_good' });
    // A chunked body (no declared length) and a GET with a body.
    const chunked = rawRequest(
      url,
      'POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer cf_live_good\nContent-Type: application/json\nTransfer-Encoding: chunked\nConnection: close',
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    expect(await chunked.closed).toMatch(/^HTTP\/1.1 299/);
    const getWithBody = rawRequest(
      url,
      `GET /v1/automation-jobs/${JOB_ID} HTTP/1.1\nAuthorization: Bearer cf_live_good\nContent-Length: 2\nConnection: close`,
      '{}',
    );
    expect(await getWithBody.closed).toMatch(/^HTTP\/1.1 299/);
  });

  it('answers a body that is not JSON, or that stalls, as the JSON parser does', async () => {
    const bad = await send('POST', '/v1/automation-jobs', json, '{"templateId":');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({ code: 'invalid_request', message: 'The request body is not valid JSON.' });
    // A UTF-8 byte-order mark is skipped, as body-parser's decoder skips it.
    const bom = await send('POST', '/v1/automation-jobs', json, '\uFEFF{"templateId":"bom"}');
    expect(bom.status).toBe(202);
    expect(created.at(-1)).toEqual({ templateId: 'bom' });
    const stalled = rawRequest(
      url,
      'POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer cf_live_good\nContent-Type: application/json\nContent-Length: 200',
      '{"a":',
    );
    const answer = await stalled.closed;
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(jsonOf(answer).error.code).toBe('request_timeout');
  });
});

describe('the hot routes answer as Express does', () => {
  let h: Harness;
  let api: Api;
  let key: string;
  let template: string;

  /** The control plane's clock: the real one, or held still where a test needs one rate-limit window. */
  let heldAt: Date | undefined;

  beforeAll(async () => {
    h = await startHarness({ CAPTIONFARM_BODY_IDLE_SECONDS: '0.5', CAPTIONFARM_BODY_TOTAL_SECONDS: '2' }, { now: () => heldAt ?? new Date() });
    ({ api, key } = await h.account('pro', 'hot'));
    template = (await api('GET', '/v1/templates')).body.templates[0].id;
  });
  afterAll(() => h?.close());

  /** Status, headers (but the per-request ones) and body, with ids and times made comparable. */
  const answer = async (res: Response) => {
    const headers: Record<string, string> = Object.fromEntries(
      [...res.headers].filter(([k]) => !['date', 'x-request-id', 'x-ratelimit-remaining'].includes(k)),
    );
    const text = await res.text();
    const body = text.replace(/"(req_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/g, '"<id>"');
    return {
      status: res.status,
      headers: { ...headers, 'content-length': 'n' } as Record<string, string>,
      body: body.replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"'),
      length: Number(headers['content-length']),
    };
  };
  /** The same request on the hot path and on Express's (a trailing slash); both answers. */
  const both = async (method: string, p: string, o: { body?: string; headers?: Record<string, string>; apiKey?: string } = {}) => {
    const init = () => ({
      method,
      headers: { authorization: `Bearer ${o.apiKey ?? key}`, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
      ...(o.body !== undefined ? { body: o.body } : {}),
    });
    const hot = await answer(await fetch(`${h.url}${p}`, init()));
    const express = await answer(await fetch(`${h.url}${p}/`, init()));
    return { hot, express };
  };

  it('a create, and the job read back', async () => {
    const body = JSON.stringify({ videoUrl: 'https://v.example.com/a.mp4', templateId: template, webhookUrl: 'https://hooks.example.com/cf' });
    const { hot, express } = await both('POST', '/v1/automation-jobs', { body });
    expect(hot.status).toBe(202);
    expect(hot).toEqual(express);
    const id = (await api('POST', '/v1/automation-jobs', JSON.parse(body))).body.id as string;
    const read = await both('GET', `/v1/automation-jobs/${id}`);
    expect(read.hot.status).toBe(200);
    expect(read.hot).toEqual(read.express);
  });

  it('every refusal once the key is known', async () => {
    const cases: { name: string; body: string; status: number }[] = [
      { name: 'malformed JSON', body: '{"templateId":', status: 400 },
      { name: 'not an object', body: '[1,2]', status: 400 },
      { name: 'an unknown field and a wrong type', body: JSON.stringify({ templateId: template, videoUrl: 5, color: 'red' }), status: 400 },
      { name: 'an unknown template', body: JSON.stringify({ templateId: 'nope', videoUrl: 'https://v.example.com/a.mp4' }), status: 400 },
      { name: 'a private address', body: JSON.stringify({ templateId: template, videoUrl: 'https://x.private.test/a.mp4' }), status: 400 },
      { name: 'an unknown upload', body: JSON.stringify({ templateId: template, uploadId: '0b8e5a56-3c35-4b0e-9a51-1d0a7a4c9f10' }), status: 404 },
    ];
    for (const c of cases) {
      const { hot, express } = await both('POST', '/v1/automation-jobs', { body: c.body });
      expect(hot.status, c.name).toBe(c.status);
      expect(ErrorBodySchema.safeParse(JSON.parse(hot.body)).success, c.name).toBe(true);
      expect(hot, c.name).toEqual(express);
    }
    const other = await h.account('pro', 'someone else');
    const theirs = (await other.api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })).body.id as string;
    for (const id of [theirs, '0b8e5a56-3c35-4b0e-9a51-1d0a7a4c9f10']) {
      const { hot, express } = await both('GET', `/v1/automation-jobs/${id}`);
      expect(hot.status).toBe(404);
      expect(hot).toEqual(express);
    }
  });

  it('past the plan rate limit, on both paths, with Retry-After', async () => {
    // One per-minute window for all 61 requests: on a loaded machine they took long enough to cross
    // a minute boundary (CI run 33: x-ratelimit-remaining 33, a new window, where 2 was due).
    heldAt = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 30_000);
    onTestFinished(() => {
      heldAt = undefined;
    });
    const free = await h.account('free', 'limited');
    const body = JSON.stringify({ videoUrl: 'https://v.example.com/a.mp4', templateId: template });
    // A free plan allows 60 requests a minute; each create below counts once, on either path.
    let remaining = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 58; i++) {
      const r = await fetch(`${h.url}/v1/automation-jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${free.key}`, 'content-type': 'application/json' },
        body,
      });
      expect(r.status).toBe(202);
      remaining = Number(r.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toBe(2);
    const last = await both('POST', '/v1/automation-jobs', { body, apiKey: free.key });
    expect([last.hot.status, last.express.status]).toEqual([202, 202]);
    const refused = await both('POST', '/v1/automation-jobs', { body, apiKey: free.key });
    expect(refused.hot.status).toBe(429);
    expect(refused.hot.headers['retry-after']).toMatch(/^\d+$/);
    delete refused.hot.headers['retry-after'];
    delete refused.express.headers['retry-after'];
    expect(refused.hot).toEqual(refused.express);
    const read = await both('GET', '/v1/automation-jobs/0b8e5a56-3c35-4b0e-9a51-1d0a7a4c9f10', { apiKey: free.key });
    expect(read.hot.status).toBe(429);
  });

  it('a body that stalls: 408 and the connection closed, on both paths', async () => {
    const head = (p: string) => `POST ${p} HTTP/1.1\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 200`;
    const [hot, express] = await Promise.all([
      rawRequest(h.url, head('/v1/automation-jobs'), '{"a":').closed,
      rawRequest(h.url, head('/v1/automation-jobs/'), '{"a":').closed,
    ]);
    for (const r of [hot, express]) {
      expect(r).toMatch(/^HTTP\/1.1 408/);
      expect(jsonOf(r).error.code).toBe('request_timeout');
    }
    expect(jsonOf(hot).error.message).toBe(jsonOf(express).error.message);
  });
});
