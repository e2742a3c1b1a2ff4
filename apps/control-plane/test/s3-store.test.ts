import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client, createS3Store, type ObjectStore } from '@captionfarm/storage';
import { startTestS3Server, testS3ServerMissing, type TestS3Server } from '@captionfarm/storage/testing';
import { agentClient, agentToken, makeTestClip, putBytes, startHarness, TEST_AGENT_CAPABILITIES, until, type Api, type Harness } from './harness.ts';

// The control plane on a real S3 server (MinIO on loopback): upload URLs point at the server and
// it enforces them; the sweeps delete unclaimed uploads, sources of ended jobs and expired outputs
// there. Skipped only when the MinIO binary is absent on this machine; on CI its absence fails.
const missing = testS3ServerMissing();

describe.skipIf(missing)(`control plane on a real S3 server (MinIO)${missing ? ` - skipped: ${missing}` : ''}`, () => {
  let s3: TestS3Server;
  let h: Harness;
  /** A second view of the bucket, not the control plane's: what is really on the server. */
  let bucket: ObjectStore;
  let clip: Buffer;
  let clockOffsetMs = 0;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    bucket = createS3Store(s3);
    h = await startHarness(s3.env, { now: () => new Date(Date.now() + clockOffsetMs) });
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-s3-cp-'));
    const file = path.join(dir, 'clip.mp4');
    await makeTestClip(file);
    clip = await readFile(file);
    await rm(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await h?.close();
    await s3?.close();
  });

  /** Where a claimed upload's bytes are now: the job-owned key it was sealed to. */
  async function sourceKey(uploadId: string): Promise<string> {
    return (await h.cp.db.selectFrom('uploads').select('object_key').where('id', '=', uploadId).executeTakeFirstOrThrow()).object_key;
  }

  async function upload(api: Api, bytes: Buffer) {
    const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: bytes.length });
    expect(up.status).toBe(201);
    return { uploadId: up.body.uploadId as string, url: up.body.uploadUrl as string, key: `uploads/${up.body.uploadId}.mp4` };
  }

  it('upload URLs point at the S3 server, which refuses another size with 403; the job claims the upload it probed there', async () => {
    const { api } = await h.account('pro', 'uploader');
    const up = await upload(api, clip);
    expect(new URL(up.url).origin).toBe(new URL(s3.endpoint).origin);
    expect(await putBytes(up.url, Buffer.concat([clip, Buffer.alloc(10)]))).toBe(403);
    expect(await putBytes(up.url, clip.subarray(0, clip.length - 1))).toBe(403);
    expect(await bucket.head(up.key)).toBeNull();
    const early = await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('upload_not_completed');

    expect(await putBytes(up.url, clip)).toBe(200);
    expect(await bucket.head(up.key)).toEqual({ sizeBytes: clip.length });
    const job = await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' });
    expect(job.status).toBe(202);
    expect(job.body.status).toBe('queued');
    // Probed through a presigned GET on the S3 server: 2 s of video reserves 1 minute, not the plan's maximum.
    const ledger = await h.cp.db.selectFrom('minutes_ledger').selectAll().where('job_id', '=', job.body.id).execute();
    expect(ledger.map((e) => [e.kind, e.minutes])).toEqual([['reserve', -1]]);
    // The built-in store is not mounted: nothing is written under the data dir.
    expect(existsSync(path.join(h.dataDir, 'objects'))).toBe(false);
    expect((await fetch(`${h.url}/s3/captionfarm/${up.key}`)).status).toBe(404);
  });

  it('the sweep deletes an upload not turned into a job within 24 hours, and keeps a claimed one', async () => {
    const { api } = await h.account('pro', 'forgetful');
    const forgotten = await upload(api, clip);
    expect(await putBytes(forgotten.url, clip)).toBe(200);
    const used = await upload(api, clip);
    expect(await putBytes(used.url, clip)).toBe(200);
    expect((await api('POST', '/v1/automation-jobs', { uploadId: used.uploadId, templateId: 'karaoke' })).status).toBe(202);

    clockOffsetMs = 23 * 3600_000;
    try {
      await h.cp.sweep();
      expect(await bucket.head(forgotten.key)).toEqual({ sizeBytes: clip.length });
      clockOffsetMs = 24 * 3600_000 + 60_000;
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    expect(await bucket.head(forgotten.key)).toBeNull();
    // The claimed one lives on under its job's key (sealed on claim, see the PUT-after-claim test).
    expect(await bucket.head(await sourceKey(used.uploadId))).toEqual({ sizeBytes: clip.length });
    expect((await api('POST', '/v1/automation-jobs', { uploadId: forgotten.uploadId, templateId: 'karaoke' })).status).toBe(404);
  });

  it('a PUT to the upload URL after a job claimed it changes nothing the job reads: the source was copied to a key no URL names', async () => {
    const { api } = await h.account('pro', 'second-put');
    const up = await upload(api, clip);
    expect(await putBytes(up.url, clip)).toBe(200);
    const job = (await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' })).body;
    const source = await sourceKey(up.uploadId);
    expect(source).toBe(`sources/${job.id}.mp4`);
    expect(await bucket.head(source)).toEqual({ sizeBytes: clip.length });
    expect(await bucket.head(up.key)).toBeNull();
    // S3 cannot revoke the URL: other bytes of the same size are accepted, under the upload's key.
    const other = Buffer.alloc(clip.length, 0x5a);
    expect(await putBytes(up.url, other)).toBe(200);
    expect(await bucket.head(up.key)).toEqual({ sizeBytes: clip.length });
    // What an agent's lease points at is still the bytes the job was created with.
    const c = agentClient(h.url, await agentToken(h, 'second-put'));
    try {
      const { nodeId } = await c.agent.register.mutate({ nodeName: 'second-put-node', capabilities: TEST_AGENT_CAPABILITIES });
      const leases = await c.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
      const lease = leases.find((l) => l.jobId === job.id)!;
      for (const l of leases) await c.agent.release.mutate({ nodeId, jobId: l.jobId, leaseId: l.leaseId });
      expect(lease.source.kind).toBe('upload');
      const got = await fetch(lease.source.url);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(clip)).toBe(true);
    } finally {
      c.close();
    }
    // The job's end takes both keys: its source and what the late PUT left under the upload's key.
    expect((await api('POST', `/v1/automation-jobs/${job.id}/cancel`)).body.status).toBe('cancelled');
    await until(async () => (await bucket.head(source)) === null && (await bucket.head(up.key)) === null, 10_000, 'both keys to leave the bucket');
  });

  it('a cancelled job takes its uploaded source with it', async () => {
    const { api } = await h.account('pro', 'canceller');
    const up = await upload(api, clip);
    expect(await putBytes(up.url, clip)).toBe(200);
    const job = (await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' })).body;
    const source = await sourceKey(up.uploadId);
    expect(await bucket.head(source)).toEqual({ sizeBytes: clip.length });
    expect((await api('POST', `/v1/automation-jobs/${job.id}/cancel`)).body.status).toBe('cancelled');
    await until(async () => (await bucket.head(source)) === null, 10_000, 'the cancelled job source to leave the bucket');
  });

  it('an output uploaded by the agent is served by a presigned GET from S3, and deleted from the bucket after its 7 days', async () => {
    const { api } = await h.account('pro', 'outputs');
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/out.mp4', templateId: 'karaoke' })).body;
    const c = agentClient(h.url, await agentToken(h, 'outputs'));
    try {
      const { nodeId } = await c.agent.register.mutate({ nodeName: 'outputs-node', capabilities: TEST_AGENT_CAPABILITIES });
      const leases = await c.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
      const lease = leases.find((l) => l.jobId === job.id)!;
      for (const other of leases.filter((l) => l !== lease)) await c.agent.release.mutate({ nodeId, jobId: other.jobId, leaseId: other.leaseId });
      const ref = { nodeId, jobId: job.id, leaseId: lease.leaseId };
      expect(await c.agent.ingested.mutate({ ...ref, durationSeconds: 2, width: 320, height: 240 })).toEqual({ ok: true });
      const up = await c.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: clip.length });
      expect(up.ok).toBe(true);
      const url = (up as { url: string }).url;
      expect(new URL(url).origin).toBe(new URL(s3.endpoint).origin);
      expect(await putBytes(url, Buffer.concat([clip, Buffer.alloc(1)]))).toBe(403);
      expect(await putBytes(url, clip)).toBe(200);
      expect(await c.agent.complete.mutate({ ...ref, resolution: { width: 320, height: 240 }, outputBytes: clip.length })).toEqual({ ok: true });
    } finally {
      c.close();
    }
    const key = `outputs/${job.id}.mp4`;
    const done = (await api('GET', `/v1/automation-jobs/${job.id}`)).body;
    expect(done.status).toBe('succeeded');
    expect(new URL(done.downloadUrl).origin).toBe(new URL(s3.endpoint).origin);
    const got = await fetch(done.downloadUrl);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="captioned-${job.id}.mp4"`);
    expect(Buffer.from(await got.arrayBuffer()).equals(clip)).toBe(true);

    await h.cp.sweep();
    expect(await bucket.head(key)).toEqual({ sizeBytes: clip.length });
    clockOffsetMs = 7 * 86_400_000 + 60_000;
    try {
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    expect(await bucket.head(key)).toBeNull();
  });

  it('once every job has ended, the bucket is empty: no source, output or refused PUT is left behind', async () => {
    // The 7-day sweep above also timed out the jobs still queued (their deadline passed).
    await h.cp.sweep();
    const open = await h.cp.db.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).execute();
    expect(open).toEqual([]);
    expect(
      Number(
        (
          await h.cp.db
            .selectFrom('uploads')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(5);
    const client = createS3Client(s3);
    try {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      expect((listed.Contents ?? []).map((o) => o.Key)).toEqual([]);
    } finally {
      client.destroy();
    }
  });
});
