import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRecordSchema } from '@captionfarm/contracts';
import { verifyWebhook } from '../../packages/sdk/src/index.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../packages/net/test/helpers/receiver.ts';
import { makeClip, run, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

// The webhook payloads clients act on, for each way a job ends, delivered by a real control plane
// with a real agent (whisper.cpp, ffmpeg) to an HTTPS receiver on loopback, and verified the way
// the SDK's receivers do it (raw body, Standard Webhooks signature with the account secret).

let farm: Farm;
let receiver: Receiver;
let speech: Buffer;

beforeAll(async () => {
  farm = await startFarm();
  receiver = await startReceiver(farm.certs, (_req, res) => res.writeHead(204).end());
  const { readFile } = await import('node:fs/promises');
  speech = await readFile(await makeClip(farm.dir, 'speech.mp4', { width: 320, height: 568, seconds: 3, speech: 'Webhooks tell you when it is done.' }));
  await farm.startAgent();
}, 240_000);
afterAll(async () => {
  await receiver?.close();
  await farm?.close();
});

// An IP literal: the control plane's test resolver knows only example.com names.
const hookUrl = (name: string) => `https://127.0.0.1:${receiver.port}/${name}`;

/** The one delivery sent to `/name`, verified with the account's secret. */
async function deliveredTo(name: string, accountId: string) {
  const end = Date.now() + 30_000;
  const find = () => receiver.requests.find((r) => r.url === `/${name}`);
  let got: ReceivedRequest | undefined = find();
  while (!got) {
    if (Date.now() > end) throw new Error(`no webhook reached /${name}: ${JSON.stringify(receiver.requests.map((r) => r.url))}`);
    await receiver.waitForRequests(receiver.requests.length + 1, Math.max(1, end - Date.now())).catch(() => undefined);
    got = find();
  }
  const { secret } = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/webhook-secret`)).body;
  const verified = verifyWebhook({ body: got.body, headers: got.headers as Record<string, string>, secret });
  expect(JobRecordSchema.parse(JSON.parse(got.body))).toEqual(verified.job);
  return verified;
}

describe('webhook payloads for every outcome', () => {
  it('succeeded: the record with downloadUrl, outputExpiresAt and settledAt; the link downloads the video', async () => {
    const { api, accountId } = await farm.account('pro', 'hooked-success');
    const created = await submitUpload(api, speech, { webhookUrl: hookUrl('success'), language: 'en' });
    const { job } = await watchJob(api, created.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');

    const { job: payload, webhookId } = await deliveredTo('success', accountId);
    expect(webhookId).toMatch(/\S/);
    // The same record GET returns, so one parser serves both.
    expect(payload).toEqual(job);
    expect(payload).toMatchObject({ status: 'succeeded', phase: 'succeeded', failureCode: null, failureReason: null, percent: null, quotedSeconds: 3 });
    expect(payload.downloadUrl).toMatch(/^https?:\/\//);
    expect(Date.parse(payload.outputExpiresAt!)).toBeGreaterThan(Date.now());
    expect(Date.parse(payload.settledAt!)).toBeGreaterThan(0);
    const res = await fetch(payload.downloadUrl!);
    expect(res.status).toBe(200);
    const file = `${farm.dir}/from-webhook.mp4`;
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', file]);
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['aac', 'h264']);
  });

  it('failed: the record with failureCode and failureReason, no download, minutes refunded', async () => {
    const { api, accountId } = await farm.account('pro', 'hooked-failure');
    const before = await farm.balance(accountId);
    const garbage = Buffer.from('not a video, only text bytes '.repeat(200));
    const created = await submitUpload(api, garbage, { webhookUrl: hookUrl('failure') });
    const { job } = await watchJob(api, created.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('failed');

    const { job: payload } = await deliveredTo('failure', accountId);
    expect(payload).toEqual(job);
    expect(payload).toMatchObject({
      status: 'failed',
      phase: 'failed',
      failureCode: 'source-unreadable',
      downloadUrl: null,
      outputExpiresAt: null,
      settledAt: null,
    });
    expect(payload.failureReason).toEqual(expect.stringMatching(/\S{3}/));
    expect(await farm.balance(accountId)).toBe(before);
  });
});
