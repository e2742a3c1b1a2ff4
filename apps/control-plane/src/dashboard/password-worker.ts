import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { lowerThisThreadPriority } from '../worker-threads.ts';

// Background work, below the main thread's priority (worker-threads.ts).
lowerThisThreadPriority();

/** OWASP's scrypt floor (N=2^15, r=8, p=3: 32 MiB); the parameters are stored with each hash. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 3 };

export type PasswordTask = { kind: 'hash'; password: string } | { kind: 'verify'; password: string; stored: string };

function scrypt(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Buffer {
  return scryptSync(password, salt, 32, { ...o, maxmem: 128 * o.N * o.r * 2 });
}

/** Runs in the password worker: a new `scrypt$N$r$p$salt$hash`, or whether a password matches one. */
export default function passwordTask(task: PasswordTask): string | boolean {
  if (task.kind === 'hash') {
    const salt = randomBytes(16);
    const key = scrypt(task.password, salt, SCRYPT);
    return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  }
  const [kind, n, r, p, salt, hash] = task.stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const key = scrypt(task.password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  const expected = Buffer.from(hash, 'base64url');
  return key.length === expected.length && timingSafeEqual(key, expected);
}
