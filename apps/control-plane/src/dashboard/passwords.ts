import { ApiError } from '@captionfarm/contracts';
import { createFairShare } from '../fair-share.ts';
import type { PasswordTask } from './password-worker.ts';
import { workerPool } from '../worker-threads.ts';

/**
 * Password hashing for the dashboard, the one costly thing a stranger can ask for (scrypt: 32 MiB,
 * about 0.2 s of a core). It runs on its own worker thread(s), never on the event loop or libuv's
 * shared pool (on main, 8 sign-ins or invite accepts in flight filled that pool: a presigned
 * download went from 9 ms to 4.7 s). Client addresses take turns (fair-share.ts): one address has
 * one hash running and two waiting at most; a further attempt is refused at once with 429.
 */
export interface Passwords {
  hash(password: string, client: string): Promise<string>;
  verify(password: string, stored: string, client: string): Promise<boolean>;
  /** Hashes computed so far (new and verified passwords). */
  stats(): { hashed: number };
  close(): Promise<void>;
}

export function createPasswords(o: { threads: number }): Passwords {
  const pool = workerPool(new URL('./password-worker-entry.mjs', import.meta.url), o.threads);
  const fair = createFairShare({
    slots: o.threads,
    perKey: 1,
    queuePerKey: 2,
    full: () => new ApiError('rate_limited', 'Too many sign-in attempts from this address at once; wait for the last one to finish.', { retryAfterSeconds: 1 }),
  });
  const run = (task: PasswordTask, client: string) => fair.run(client, () => pool.run(task) as Promise<unknown>);
  return {
    hash: async (password, client) => String(await run({ kind: 'hash', password }, client)),
    verify: async (password, stored, client) => (await run({ kind: 'verify', password, stored }, client)) === true,
    stats: () => ({ hashed: pool.completed }),
    close: () => pool.destroy(),
  };
}
