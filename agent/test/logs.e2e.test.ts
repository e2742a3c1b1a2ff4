import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@captionfarm/log';
import { startReceiver, type Receiver } from '../../packages/net/test/helpers/receiver.ts';
import { makeClip, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

// Every line the control plane and the agent log while a real job runs (whisper.cpp, ffmpeg,
// webhook to an HTTPS receiver on loopback): JSON, with the ids it concerns, and no secret.

let farm: Farm;
let receiver: Receiver;
const chunks: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ name: 'control-plane', level: 'info', destination: sink });
  farm = await startFarm({ opts: { logger } });
  receiver = await startReceiver(farm.certs, (_req, res) => res.writeHead(204).end());
  const agentLog = logger.child({ component: 'agent' });
  await farm.startAgent({ name: 'logging-node', log: (msg, fields) => agentLog.info(fields, msg) });
}, 240_000);
afterAll(async () => {
  await receiver?.close();
  await farm?.close();
});

describe('structured logs of a job', () => {
  it('are JSON lines that carry requestId, accountId, jobId and nodeId where they apply, and never a secret', async () => {
    const { api, accountId, key } = await farm.account('pro', 'logged');
    const clip = await readFile(await makeClip(farm.dir, 'speech.mp4', { width: 320, height: 568, seconds: 3, speech: 'Logs carry ids, not secrets.' }));
    const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: clip.length });
    const uploadSignature = new URL(up.body.uploadUrl).searchParams.get('X-Amz-Signature');
    expect(uploadSignature).toMatch(/^[0-9a-f]{64}$/);
    const created = await submitUpload(api, clip, { webhookUrl: `https://127.0.0.1:${receiver.port}/hook`, language: 'en' });
    const { job } = await watchJob(api, created.id, terminal, 600_000);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    await receiver.waitForRequests(1, 60_000);
    // A query string with something secret-looking in it: only the path may be logged.
    await api('GET', '/v1/automation-jobs?limit=5&token=sekrit-query-value');

    // The agent logs its success once complete has answered, a moment after the API shows it: wait for that line.
    const end = Date.now() + 30_000;
    while (
      !chunks
        .join('')
        .split('\n')
        .some((l) => l.includes(`"jobId":"${job.id}"`) && l.includes('"msg":"job succeeded"') && l.includes('"component":"agent"')) ||
      !chunks.join('').includes('"msg":"job completed by agent"')
    ) {
      if (Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const text = chunks.join('');
    const lines = text.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(5);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const p of parsed) {
      expect(p.level, JSON.stringify(p)).toMatch(/^(trace|debug|info|warn|error|fatal)$/);
      expect(Date.parse(String(p.time))).toBeGreaterThan(0);
    }

    const ofJob = parsed.filter((p) => p.jobId === job.id);
    const nodeId = (await farm.admin('GET', '/admin/v1/nodes')).body.nodes[0].id as string;
    // HTTP requests about the job: request id and account id on each.
    const requests = ofJob.filter((p) => p.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(2); // create + polls
    for (const r of requests) expect(r, JSON.stringify(r)).toMatchObject({ requestId: expect.stringMatching(/\S/), accountId, jobId: job.id });
    // The agent's lines about the job: node id on each.
    const agentLines = ofJob.filter((p) => p.component === 'agent');
    expect(agentLines.map((p) => p.msg)).toEqual(expect.arrayContaining(['job leased (attempt 1)', 'job succeeded']));
    for (const a of agentLines) expect(a.nodeId, JSON.stringify(a)).toMatch(/^[0-9a-f-]{36}$/);
    for (const a of agentLines) expect(a.nodeId).toBe(nodeId);
    // The control plane's lines: the agent's completion (account and node) and the end of the job (account).
    expect(ofJob.find((p) => p.msg === 'job completed by agent')).toMatchObject({ accountId, nodeId, node: 'logging-node' });
    expect(ofJob.find((p) => p.msg === 'job succeeded' && p.component === undefined)).toMatchObject({ accountId, status: 'succeeded' });

    // No secret on any line.
    const webhookSecret = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/webhook-secret`)).body.secret as string;
    const secrets = JSON.parse(await readFile(path.join(farm.dir, 'data', 'secrets.json'), 'utf8')) as Record<string, string>;
    const forbidden = [
      key,
      farm.cp.adminToken,
      webhookSecret,
      secrets.storeSecretAccessKey!,
      uploadSignature!,
      'sekrit-query-value',
      'X-Amz-Signature=',
      'X-Amz-Credential=',
    ];
    if (job.downloadUrl) forbidden.push(new URL(job.downloadUrl).searchParams.get('X-Amz-Signature')!);
    // Keys and tokens of any kind (the agent's own token included) appear only censored.
    expect(text).not.toMatch(/cf_(live|agent|admin)_[A-Za-z0-9]{8,}/);
    for (const s of forbidden) {
      expect(s.length).toBeGreaterThan(8);
      expect(text.includes(s), `a log line holds ${s.slice(0, 12)}...`).toBe(false);
    }
  }, 900_000);
});
