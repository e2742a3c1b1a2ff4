import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../packages/net/test/helpers/receiver.ts';
import { makeClip, parseMetrics as parse, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

// GET /metrics after real jobs through a real control plane and agent (whisper.cpp, ffmpeg): one
// succeeded, one failed, one cancelled, each with a webhook to an HTTPS receiver on loopback.

let farm: Farm;
let receiver: Receiver;

beforeAll(async () => {
  farm = await startFarm();
  receiver = await startReceiver(farm.certs, (_req, res) => res.writeHead(204).end());
}, 240_000);
afterAll(async () => {
  await receiver?.close();
  await farm?.close();
});

async function scrape(token?: string): Promise<Response> {
  return fetch(`${farm.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
}

describe('GET /metrics', () => {
  it('refuses a scrape without the admin token, or with another token', async () => {
    const anon = await scrape();
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: unknown }).error).toMatchObject({ code: 'unauthenticated' });
    const { key } = await farm.account('free', 'not-admin');
    expect((await scrape(key)).status).toBe(401);
  });

  it('counts each terminal status and failure code, times each phase by node, and reports queue, agents, webhooks and HTTP', async () => {
    const { api } = await farm.account('pro', 'metrics');
    const hook = (n: string) => `https://127.0.0.1:${receiver.port}/${n}`;
    const speech = await readFile(await makeClip(farm.dir, 'speech.mp4', { width: 320, height: 568, seconds: 3, speech: 'Metrics show what the farm does.' }));
    const silent = await readFile(await makeClip(farm.dir, 'mute.mp4', { width: 320, height: 568, seconds: 2 }));

    // Cancelled while queued: no agent is connected yet, so the queue gauges see it first.
    const cancelled = await submitUpload(api, speech, { webhookUrl: hook('cancelled'), language: 'en' });
    const queued = parse(await (await scrape(farm.cp.adminToken)).text());
    expect(queued.get('captionfarm_queue_depth')).toBe(1);
    expect(queued.get('captionfarm_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(queued.get('captionfarm_agents_connected')).toBe(0);
    expect((await api('POST', `/v1/automation-jobs/${cancelled.id}/cancel`)).status).toBe(200);

    await farm.startAgent({ name: 'gpu-node-7' });
    const ok = await submitUpload(api, speech, { webhookUrl: hook('ok'), language: 'en' });
    const bad = await submitUpload(api, silent, { webhookUrl: hook('bad'), language: 'en' });
    // Generous deadlines: this runs on shared 2-core machines.
    expect((await watchJob(api, ok.id, terminal, 600_000)).job.status).toBe('succeeded');
    expect((await watchJob(api, bad.id, terminal, 600_000)).job).toMatchObject({ status: 'failed', failureCode: 'ingest-failed' });
    await receiver.waitForRequests(3, 60_000);

    // Deliveries are counted once the dispatcher has recorded them: poll the scrape with a deadline.
    let m = new Map<string, number>();
    const end = Date.now() + 30_000;
    for (;;) {
      const res = await scrape(farm.cp.adminToken);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      m = parse(await res.text());
      if ((m.get('captionfarm_webhook_delivery_attempts_total{outcome="success"}') ?? 0) >= 3 || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 200));
    }

    expect(m.get('captionfarm_jobs_finished_total{status="succeeded",failure_code=""}')).toBe(1);
    expect(m.get('captionfarm_jobs_finished_total{status="failed",failure_code="ingest-failed"}')).toBe(1);
    expect(m.get('captionfarm_jobs_finished_total{status="cancelled",failure_code=""}')).toBe(1);

    for (const phase of ['ingest', 'transcribe', 'render', 'upload']) {
      expect(m.get(`captionfarm_job_phase_duration_seconds_count{phase="${phase}",node="gpu-node-7"}`), phase).toBe(1);
      expect(m.get(`captionfarm_job_phase_duration_seconds_bucket{le="+Inf",phase="${phase}",node="gpu-node-7"}`), phase).toBe(1);
    }
    expect(m.get('captionfarm_job_phase_duration_seconds_sum{phase="transcribe",node="gpu-node-7"}')).toBeGreaterThan(0);
    expect(m.get('captionfarm_job_phase_duration_seconds_sum{phase="render",node="gpu-node-7"}')).toBeGreaterThan(0);
    expect(m.get('captionfarm_job_realtime_factor_count{node="gpu-node-7"}')).toBe(1);
    expect(m.get('captionfarm_job_realtime_factor_sum{node="gpu-node-7"}')).toBeGreaterThan(0);

    expect(m.get('captionfarm_queue_depth')).toBe(0);
    expect(m.get('captionfarm_queue_oldest_age_seconds')).toBe(0);
    expect(m.get('captionfarm_agents_connected')).toBe(1);
    expect(m.get('captionfarm_agents_draining')).toBe(0);
    expect(m.get('captionfarm_agent_slots')).toBe(1);
    expect(m.get('captionfarm_agent_slots_in_use')).toBe(0);

    expect(m.get('captionfarm_webhook_delivery_attempts_total{outcome="success"}')).toBe(3);
    expect(m.get('captionfarm_webhook_deliveries_pending')).toBe(0);
    expect(m.get('captionfarm_webhook_deliveries_failed_total')).toBe(0);

    expect(m.get('captionfarm_http_request_duration_seconds_count{method="POST",route="/v1/automation-jobs",status="202"}')).toBe(3);
    expect(m.get('captionfarm_http_request_duration_seconds_count{method="POST",route="/v1/automation-jobs/:id/cancel",status="200"}')).toBe(1);
    expect(m.get('captionfarm_http_request_duration_seconds_count{method="GET",route="/metrics",status="401"}')).toBeGreaterThanOrEqual(1);
    // Raw ids never become label values.
    expect([...m.keys()].some((k) => k.includes(ok.id))).toBe(false);
  }, 900_000);
});
