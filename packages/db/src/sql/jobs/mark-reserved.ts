import { prepared } from '../../prepared.ts';

/**
 * Marks a job's minutes reserved (admission, in the transaction that writes its `reserve` ledger
 * row) while it still waits: no row once it was cancelled (by another control plane, on
 * PostgreSQL) since it was read. Every create's admission may run it: compiled once (prepared.ts).
 */
export const markReserved = prepared((db, a: { id: string; at: string }) =>
  db.updateTable('jobs').set({ reserved_at: a.at }).where('id', '=', a.id).where('status', '=', 'queued').where('reserved_at', 'is', null).returning('id'),
);
