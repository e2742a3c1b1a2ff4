import { describe, expect, it } from 'vitest';
import { testDatabaseServerUrl } from '../../packages/db/src/testing.ts';
import { runFaultFarm } from './fault-farm.ts';

// The issue 13 fault test, shortened (`npm run bench:farm` runs it in full, with a PostgreSQL
// restart, which the suite leaves out: other suites share the server). PostgreSQL only.
describe.skipIf(!testDatabaseServerUrl())('a farm of two control planes and two agents on one PostgreSQL', () => {
  it('kill -9 of a control plane mid-render: every job succeeds, with one reserve and one settle, and every webhook arrives once after deduplication', {
    timeout: 900_000,
  }, async () => {
    const r = await runFaultFarm({ jobs: 4, webhookEvery: 2, restartPostgres: false, timeoutMs: 600_000 });
    expect(r.statuses).toEqual({ succeeded: 4 });
    expect(r.badLedgers).toEqual([]);
    expect(r.webhookJobs).toBe(2);
    expect(r.webhooksMissing).toEqual([]);
    expect(r.webhookIds).toBe(2);
  });
});
