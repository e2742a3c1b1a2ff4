import type { AttemptRecord, ClaimDueArgs, WebhookDelivery, WebhookStore } from '../../src/dispatcher.ts';

/**
 * In-memory WebhookStore for this package's unit tests only. It follows the contract in the
 * README literally (lease, guards, attempt log), so it doubles as an executable description
 * of what the SQL store must do.
 */
interface MemoryRow extends WebhookDelivery {
  state: 'pending' | 'delivered' | 'exhausted';
  exhaustedReason: 'gone' | 'attempts_exhausted' | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

export interface MemoryStore extends WebhookStore {
  rows: Map<string, MemoryRow>;
  attempts: Array<AttemptRecord & { kind: string; nextAttemptAt?: number }>;
  enqueue(delivery: { id: string; accountId: string; url: string; body: string; createdAt: number }): void;
}

export function createMemoryStore(): MemoryStore {
  const rows = new Map<string, MemoryRow>();
  const attempts: MemoryStore['attempts'] = [];

  function guard(a: AttemptRecord): MemoryRow | null {
    const row = rows.get(a.deliveryId);
    if (row?.state !== 'pending' || row.leaseOwner !== a.owner) return null;
    if (row.attemptCount !== a.attemptNumber - 1) return null;
    return row;
  }
  function finish(row: MemoryRow, a: AttemptRecord): void {
    row.attemptCount = a.attemptNumber;
    row.firstAttemptAt ??= a.firstAttemptAt;
    row.leaseOwner = null;
    row.leaseUntil = null;
  }

  return {
    rows,
    attempts,
    enqueue(d) {
      rows.set(d.id, {
        id: d.id,
        accountId: d.accountId,
        url: d.url,
        body: d.body,
        attemptCount: 0,
        firstAttemptAt: null,
        nextAttemptAt: d.createdAt,
        state: 'pending',
        exhaustedReason: null,
        leaseOwner: null,
        leaseUntil: null,
      });
    },
    claimDue({ now, limit, owner, leaseUntil }: ClaimDueArgs) {
      const due = [...rows.values()]
        .filter((r) => r.state === 'pending' && r.nextAttemptAt <= now && (r.leaseUntil === null || r.leaseUntil <= now))
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
        .slice(0, limit);
      for (const r of due) {
        r.leaseOwner = owner;
        r.leaseUntil = leaseUntil;
      }
      return due.map((r) => ({
        id: r.id,
        accountId: r.accountId,
        url: r.url,
        body: r.body,
        attemptCount: r.attemptCount,
        firstAttemptAt: r.firstAttemptAt,
        nextAttemptAt: r.nextAttemptAt,
      }));
    },
    recordAttempt(a) {
      const row = guard(a);
      if (!row) return false;
      attempts.push({ ...a, kind: 'retry' });
      finish(row, a);
      row.nextAttemptAt = a.nextAttemptAt;
      return true;
    },
    markDelivered(a) {
      const row = guard(a);
      if (!row) return false;
      attempts.push({ ...a, kind: 'delivered' });
      finish(row, a);
      row.state = 'delivered';
      return true;
    },
    markExhausted(a) {
      const row = guard(a);
      if (!row) return false;
      attempts.push({ ...a, kind: a.reason });
      finish(row, a);
      row.state = 'exhausted';
      row.exhaustedReason = a.reason;
      return true;
    },
  };
}
