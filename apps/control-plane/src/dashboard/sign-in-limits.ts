import { ApiError } from '@captionfarm/contracts';

export interface SignInLimits {
  /** Failed sign-ins of one email from one client address before that pair gets 429 (default 5). */
  perAccount?: number;
  /** Failed sign-ins and invite lookups from one client address, all emails together (default 30). */
  perIp?: number;
  /** The window the counts live in (default 15 min). */
  windowMs?: number;
}

/**
 * Failed dashboard sign-ins and invite lookups, counted in memory per process (a restart gives an
 * attacker a restart's worth). They key on what the attacker controls: the email together with
 * the client address (http/client-address.ts: the forwarded client behind a trusted proxy), and
 * the address alone. Five wrong passwords lock that email out from that address only: the owner
 * signing in from elsewhere is not locked out by a stranger (on main one address locked the only
 * operator out for 15 min). A limit is checked before the password is hashed, so a limited client
 * costs nothing; a success clears its pair's count.
 */
export function createSignInLimiter(o: SignInLimits & { now: () => Date }) {
  const perAccount = o.perAccount ?? 5;
  const perIp = o.perIp ?? 30;
  const windowMs = o.windowMs ?? 15 * 60_000;
  const counters = new Map<string, { start: number; count: number }>();
  const bucket = (key: string) => {
    const t = o.now().getTime();
    let c = counters.get(key);
    if (!c || t - c.start >= windowMs) {
      if (counters.size > 50_000) for (const [k, v] of counters) if (t - v.start >= windowMs) counters.delete(k);
      c = { start: t, count: 0 };
      counters.set(key, c);
    }
    return { c, retryAfterSeconds: Math.max(1, Math.ceil((c.start + windowMs - t) / 1000)) };
  };
  const pair = (address: string, email: string) => `pair:${address}\n${email.trim().toLowerCase()}`;
  const refuse = (retryAfterSeconds: number) =>
    new ApiError('rate_limited', 'Too many sign-in attempts from this address; wait and try again later.', { retryAfterSeconds });
  return {
    /** Throws 429 when this address, or this email from this address, is past its failures. */
    check(address: string, email?: string): void {
      const byIp = bucket(`ip:${address}`);
      if (byIp.c.count >= perIp) throw refuse(byIp.retryAfterSeconds);
      if (email === undefined) return;
      const byPair = bucket(pair(address, email));
      if (byPair.c.count >= perAccount) throw refuse(byPair.retryAfterSeconds);
    },
    failed(address: string, email?: string): void {
      bucket(`ip:${address}`).c.count++;
      if (email !== undefined) bucket(pair(address, email)).c.count++;
    },
    succeeded(address: string, email: string): void {
      counters.delete(pair(address, email));
    },
  };
}
