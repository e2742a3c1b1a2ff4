import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '@captionfarm/process';
import { createControlPlane, loadConfig } from '../src/index.ts';
import { agentClient, agentToken, makeTestClip, putBytes, startHarness, TEST_AGENT_CAPABILITIES, until, type Harness } from './harness.ts';

// Issue 11 item 9: killed PUTs left part files, and sources of ended jobs stayed on disk (78 of 78).
let h: Harness;
let clockOffsetMs = 0;
let dir: string;
let clip: Buffer;

beforeAll(async () => {
  h = await startHarness({}, { now: () => new Date(Date.now() + clockOffsetMs) });
  dir = await mkdtemp(path.join(tmpdir(), 'cf-debris-'));
  const file = path.join(dir, 'clip.mp4');
  await makeTestClip(file);
  clip = await readFile(file);
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** Every file under the built-in store's folder, relative to it. */
async function objects(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'objects');
  if (!existsSync(root)) return [];
  return (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

describe('sources of ended jobs', () => {
  it('an uploaded source is deleted when its job is cancelled, and when it fails', async () => {
    const { api } = await h.account('pro', 'sources');
    const upload = async (bytes: Buffer) => {
      const up = (await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: bytes.length })).body;
      expect(await putBytes(up.uploadUrl, bytes)).toBe(200);
      const job = (await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' })).body;
      return { key: `uploads/${up.uploadId}.mp4`, job };
    };
    const cancelled = await upload(clip);
    expect(await h.cp.store.head(cancelled.key)).toEqual({ sizeBytes: clip.length });
    expect((await api('POST', `/v1/automation-jobs/${cancelled.job.id}/cancel`)).body.status).toBe('cancelled');
    await until(async () => (await h.cp.store.head(cancelled.key)) === null, 5000, 'the cancelled job source to go');

    // Bytes that are no video: the job fails right after its 202, and its source goes with it.
    const failed = await upload(Buffer.alloc(2048, 1));
    expect((await api('GET', `/v1/automation-jobs/${failed.job.id}`)).body.status).toBe('failed');
    await until(async () => (await h.cp.store.head(failed.key)) === null, 5000, 'the failed job source to go');

    // A queued job keeps its source.
    const queued = await upload(clip);
    await h.cp.sweep();
    expect(await h.cp.store.head(queued.key)).toEqual({ sizeBytes: clip.length });
    const uploads = await h.cp.db
      .selectFrom('uploads')
      .select(['object_key', 'deleted_at'])
      .where('object_key', 'in', [cancelled.key, failed.key, queued.key])
      .execute();
    expect(Object.fromEntries(uploads.map((u) => [u.object_key, u.deleted_at !== null]))).toEqual({
      [cancelled.key]: true,
      [failed.key]: true,
      [queued.key]: false,
    });
  });

  it('the sweeper deletes the sources that a crash between a job end and the delete left', async () => {
    const { api } = await h.account('pro', 'crashed-delete');
    const up = (await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: clip.length })).body;
    expect(await putBytes(up.uploadUrl, clip)).toBe(200);
    const job = (await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: 'karaoke' })).body;
    // The job ends behind the service's back, as if the process died before its 'ended' handler.
    await h.cp.db.updateTable('jobs').set({ status: 'cancelled', phase: 'cancelled' }).where('id', '=', job.id).execute();
    expect(await h.cp.store.head(`uploads/${up.uploadId}.mp4`)).not.toBeNull();
    await h.cp.sweep();
    expect(await h.cp.store.head(`uploads/${up.uploadId}.mp4`)).toBeNull();
  });
});

describe('outputs', () => {
  it('an output is deleted from the store once its 7 days are over', async () => {
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
      expect(await putBytes((up as { url: string }).url, clip)).toBe(200);
      expect(await c.agent.complete.mutate({ ...ref, resolution: { width: 320, height: 240 }, outputBytes: clip.length })).toEqual({ ok: true });
    } finally {
      c.close();
    }
    const key = `outputs/${job.id}.mp4`;
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body.status).toBe('succeeded');
    await h.cp.sweep();
    expect(await h.cp.store.head(key)).toEqual({ sizeBytes: clip.length });
    clockOffsetMs = 7 * 86_400_000 + 60_000;
    try {
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    expect(await h.cp.store.head(key)).toBeNull();
    expect(await objects(h.dataDir)).not.toContain(key);
  });
});

describe('outputs of jobs that did not succeed (issue 40 item 10)', () => {
  /** A job leased by an agent that rendered it and PUT its output, not yet completed. */
  async function renderedNotCompleted(name: string) {
    const { api } = await h.account('pro', name);
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: `https://v.example.com/${name}.mp4`, templateId: 'karaoke' })).body;
    const c = agentClient(h.url, await agentToken(h, name));
    const { nodeId } = await c.agent.register.mutate({ nodeName: `${name}-node`, capabilities: TEST_AGENT_CAPABILITIES });
    const leases = await c.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
    const lease = leases.find((l) => l.jobId === job.id)!;
    for (const other of leases.filter((l) => l !== lease)) await c.agent.release.mutate({ nodeId, jobId: other.jobId, leaseId: other.leaseId });
    const ref = { nodeId, jobId: job.id as string, leaseId: lease.leaseId };
    expect(await c.agent.ingested.mutate({ ...ref, durationSeconds: 2, width: 320, height: 240 })).toEqual({ ok: true });
    const up = await c.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: clip.length });
    const url = (up as { url: string }).url;
    expect(await putBytes(url, clip)).toBe(200);
    const key = `outputs/${job.id}.mp4`;
    expect(await h.cp.store.head(key)).toEqual({ sizeBytes: clip.length });
    return { api, c, ref, key, url };
  }

  it("a job cancelled between the agent's output PUT and its completion: the refused completion deletes the output", async () => {
    const { api, c, ref, key } = await renderedNotCompleted('cancel-race');
    try {
      expect((await api('POST', `/v1/automation-jobs/${ref.jobId}/cancel`)).body.status).toBe('cancelled');
      expect(await c.agent.complete.mutate({ ...ref, resolution: { width: 320, height: 240 }, outputBytes: clip.length })).toEqual({
        ok: false,
        reason: 'job-ended',
      });
    } finally {
      c.close();
    }
    // Before: the whole output (clip.length bytes) stayed in the store for ever.
    expect(await h.cp.store.head(key)).toBeNull();
    expect(await objects(h.dataDir)).not.toContain(key);
    expect((await api('GET', `/v1/automation-jobs/${ref.jobId}`)).body.status).toBe('cancelled');
  });

  it('the sweeper deletes the output of an ended job that did not succeed, again for a PUT landing late, until the URL expired', async () => {
    const { api, c, ref, key, url } = await renderedNotCompleted('cancel-no-complete');
    c.close(); // the agent stopped on the cancel and never completes
    expect((await api('POST', `/v1/automation-jobs/${ref.jobId}/cancel`)).body.status).toBe('cancelled');
    await h.cp.sweep();
    expect(await h.cp.store.head(key)).toBeNull();
    // A PUT still under way when the job ended lands afterwards: the next sweep deletes it too.
    expect(await putBytes(url, clip)).toBe(200);
    await h.cp.sweep();
    expect(await h.cp.store.head(key)).toBeNull();
    const mark = () => h.cp.db.selectFrom('jobs').select('output_key').where('id', '=', ref.jobId).executeTakeFirstOrThrow();
    expect((await mark()).output_key).toBe(key);
    // Past the URL's hour, the mark goes: the sweeps stop looking at this job.
    clockOffsetMs = 3600_000 + 60_000;
    try {
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    expect((await mark()).output_key).toBeNull();
  });
});

describe('part files of PUTs', () => {
  it('a server killed (kill -9) in the middle of a PUT leaves a part file; the next start removes it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cf-killed-put-'));
    const script = path.join(dataDir, 'serve.mts');
    const src = new URL('../src/index.ts', import.meta.url).pathname;
    await writeFile(
      script,
      `import { createControlPlane, loadConfig } from ${JSON.stringify(src)};
       const cp = await createControlPlane(loadConfig({ CAPTIONFARM_DATA_DIR: ${JSON.stringify(dataDir)}, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0' }));
       await cp.listen(0, '127.0.0.1');
       const account = await cp.services.accounts.create({ name: 'killed', plan: 'pro' });
       const up = await cp.services.uploads.create({ accountId: account.id, plan: 'pro' }, { fileName: 'big.mp4', sizeBytes: 1000000 });
       console.log(JSON.stringify(up));`,
    );
    let out = '';
    let printed = () => {};
    const server = runProcess(process.execPath, {
      args: ['--import', 'tsx', script],
      onStdout: (d) => {
        out += d;
        printed();
      },
    });
    try {
      const upload = await new Promise<{ uploadUrl: string }>((resolve, reject) => {
        printed = () => out.includes('\n') && resolve(JSON.parse(out.split('\n')[0]!));
        server.done.then((r) => reject(new Error(`the server exited (${r.exitCode}): ${r.stderrTail}`)), reject);
      });
      // Half of the declared body, then the server dies mid-upload.
      const req = request(upload.uploadUrl, { method: 'PUT', headers: { 'content-length': 1_000_000 } });
      req.on('error', () => undefined);
      req.write(Buffer.alloc(500_000, 3));
      await until(async () => (await objects(dataDir)).some((f) => f.includes('.part-')), 10_000, 'the part file');
      server.kill('SIGKILL');
      await server.done;
      req.destroy();
      expect((await objects(dataDir)).filter((f) => f.includes('.part-'))).toHaveLength(1);

      const cp = await createControlPlane(loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0' }));
      await cp.close();
      expect(await objects(dataDir)).toEqual([]);
    } finally {
      server.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('the sweeper removes part files nobody wrote to for an hour, and leaves fresh ones', async () => {
    const root = path.join(h.dataDir, 'objects', 'uploads');
    await mkdir(root, { recursive: true });
    const stale = path.join(root, `${randomUUID()}.mp4.part-0123456789abcdef01234567`);
    const fresh = path.join(root, `${randomUUID()}.mp4.part-89abcdef0123456789abcdef`);
    await writeFile(stale, 'x');
    await writeFile(fresh, 'x');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    await h.cp.sweep();
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    await rm(fresh);
  });
});
