import { ApiError } from '@captionfarm/contracts';

export interface AuthFailureLimiter {
  /**
   * Counts one failed authentication of `address` and logs it (never the credential itself), and
   * returns the answer: 401 `unauthenticated` with `message`, or 429 `rate_limited` with
   * Retry-After once the address is past its failures for the minute.
   */
  refuse(
    address: string,
    what: { kind: 'api-key' | 'admin-token' | 'agent-token'; reason: string; requestId?: string; path?: string },
    message: string,
  ): ApiError;
}

const WINDOW_MS = 60_000;

/**
 * Failed authentications per client address (http/client-address.ts: the forwarded client behind
 * a trusted proxy), in fixed one-minute windows (in memory, per process). The credential is always
 * checked first: a valid one is answered whatever its address did (a client that fails cannot lock
 * its neighbours out, behind a proxy everyone's address is the same), and past `perMinute` failures
 * the address's wrong credentials get 429 instead of 401 until the window ends, so a guesser learns
 * nothing more but "slow down". Checking a credential costs a hash and an indexed read (no slow
 * hash: keys and tokens are 256-bit random). Log lines stop at the limit, plus one saying so.
 */
export function createAuthFailureLimiter(o: { perMinute: number; now: () => Date; log: (msg: string, extra?: unknown) => void }): AuthFailureLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    refuse(address, what, message) {
      const t = o.now().getTime();
      const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
      let w = windows.get(address);
      if (!w || w.start !== start) {
        if (windows.size >= 10_000) for (const [k, v] of windows) if (v.start !== start) windows.delete(k);
        w = { start, count: 0 };
        windows.set(address, w);
      }
      w.count++;
      if (w.count <= o.perMinute) o.log('authentication failed', { ip: address, ...what, failuresThisMinute: w.count });
      else if (w.count === o.perMinute + 1)
        o.log('authentication failures over the limit: further failures from this address get 429 until the minute ends', { ip: address, ...what });
      if (w.count <= o.perMinute) return new ApiError('unauthenticated', message);
      return new ApiError(
        'rate_limited',
        `Too many failed authentications from this address (more than ${o.perMinute} a minute); check the credential and retry after the Retry-After delay.`,
        { retryAfterSeconds: Math.max(1, Math.ceil((w.start + WINDOW_MS - t) / 1000)) },
      );
    },
  };
}
