import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseServerUrl } from '@captionfarm/db/testing';
import { putBytes, startHarness, type Harness } from './harness.ts';

// A job create's calls to the object store (the upload's size, the seal, the sealed copy's size)
// run before its transaction, never inside it: a store call may take as long as the network
// makes it, and the transaction holds the database meanwhile. On SQLite the control plane has one
// connection, which its transaction holds until it commits: a query that cannot get it while a
// store call runs shows that the call was made inside the transaction.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Whether the database answers a query within `ms` (false: a transaction holds the connection). */
async function connectionFree(ms = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const held = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const answered = h.cp.db
    .selectFrom('accounts')
    .select('id')
    .limit(1)
    .execute()
    .then(() => true as const);
  try {
    return await Promise.race([answered, held]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(testDatabaseServerUrl())('a job create and the object store (SQLite)', () => {
  it('checks, seals and measures a claimed upload with the database free: no store call inside the transaction', async () => {
    const { api } = await h.account('pro', 'store-calls');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id;
    const bytes = Buffer.alloc(4096, 7);
    const up = (await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: bytes.length })).body;
    expect(await putBytes(up.uploadUrl, bytes, { 'content-type': up.contentType })).toBe(200);

    const store = h.cp.store;
    const { head, seal } = store;
    const calls: { call: string; databaseFree: boolean }[] = [];
    store.head = async (key) => {
      calls.push({ call: 'head', databaseFree: await connectionFree() });
      return head(key);
    };
    store.seal = async (key, toKey) => {
      calls.push({ call: 'seal', databaseFree: await connectionFree() });
      return seal(key, toKey);
    };
    try {
      const job = await api('POST', '/v1/automation-jobs', { uploadId: up.uploadId, templateId: template });
      expect(job.status, JSON.stringify(job.body)).toBe(202);
    } finally {
      store.head = head;
      store.seal = seal;
    }
    // The upload's size, the seal, the sealed object's size.
    expect(calls).toEqual([
      { call: 'head', databaseFree: true },
      { call: 'seal', databaseFree: true },
      { call: 'head', databaseFree: true },
    ]);
  });
});
