import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane, loadConfig, type ControlPlane } from '../src/index.ts';
import { mountTinyDisk } from '../../../packages/renderer/test/helpers/tiny-disk.ts';
import { apiFor } from './harness.ts';

// Issue 11 item 15: a full disk answered 500 `cannot rollback - no transaction is active`.
// A real small file system (tmpfs), not a mock: mounting needs root; without it this skips and
// says why, except on CI, where it fails.
const disk = mountTinyDisk('6m');
const mountPoint = disk.path ?? '';

let cp: ControlPlane;
beforeAll(async () => {
  if (disk.missing) return;
  cp = await createControlPlane(
    loadConfig({ CAPTIONFARM_DATA_DIR: path.join(mountPoint, 'data'), CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0' }),
  );
  await cp.listen(0, '127.0.0.1');
});
afterAll(async () => {
  await cp?.close();
  disk.unmount();
});

/** Fills the file system with one file until ENOSPC. */
async function fill(file: string): Promise<void> {
  const fh = await open(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) await fh.write(chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await fh.close();
  }
}

describe.skipIf(disk.missing)(`a full disk${disk.missing ? ` - skipped: ${disk.missing}` : ''}`, () => {
  it('503 unavailable naming the cause, never 500; the service recovers once space is back', async () => {
    const account = await cp.services.accounts.create({ name: 'full', plan: 'pro' });
    const { key } = await cp.services.accounts.createKey(account.id);
    const api = apiFor(cp.url, key);
    const upload = (await api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 512 * 1024 })).body;
    const filler = path.join(mountPoint, 'filler');
    await fill(filler);
    // The built-in store: our disk, not the client's body.
    const put = await fetch(upload.uploadUrl, { method: 'PUT', body: Buffer.alloc(512 * 1024, 1) });
    expect(put.status).toBe(503);
    expect(put.headers.get('retry-after')).toBe('30');
    expect(await put.text()).toMatch(/disk is full \(ENOSPC\)/);
    const answers: { status: number; body: any }[] = [];
    // SQLite writes into WAL pages it already has until it needs a new one: keep creating until it does.
    for (let i = 0; i < 300 && !answers.some((a) => a.status !== 202); i++) {
      answers.push(await api('POST', '/v1/automation-jobs', { videoUrl: `https://v.example.com/${i}.mp4`, templateId: 'karaoke' }));
    }
    const refused = answers.filter((a) => a.status !== 202);
    expect(refused.length, 'the disk never filled').toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error.code).toBe('unavailable');
      expect(r.body.error.message).toMatch(/disk is full|no space/i);
      expect(r.body.error.message).not.toMatch(/rollback/);
    }
    await rm(filler);
    const after = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/after.mp4', templateId: 'karaoke' });
    expect([after.status, after.body.status]).toEqual([202, 'queued']);
  });
});
