import { ApiError } from '@captionfarm/contracts';

export interface AuthFailureLimiter {
  /** An ApiError (429 with Retry-After) when this address is blocked, else null. Check before the credential. */
  blocked(ip: string): ApiError | null;
  /** Counts one failed authentication of `ip` and logs it (never the credential itself). */
  failed(ip: string, what: { kind: 'api-key' | 'admin-token' | 'agent-token'; reason: string; requestId?: string; path?: string }): void;
}

const WINDOW_MS = 60_000;

/**
 * Failed authentications per client address, in fixed one-minute windows (in memory, per
 * process). Past `perMinute` failures the address gets 429 `rate_limited` for every authenticated
 * route until the window ends, whatever credential it sends next, so guessing keys costs a minute
 * per `perMinute` guesses. The address is the TCP peer: behind a reverse proxy that is the proxy.
 */
export function createAuthFailureLimiter(o: { perMinute: number; now: () => Date; log: (msg: string, extra?: unknown) => void }): AuthFailureLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const windowOf = (ip: string, t: number) => {
    const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
    const w = windows.get(ip);
    return w && w.start === start ? w : null;
  };
  return {
    blocked(ip) {
      const t = o.now().getTime();
      const w = windowOf(ip, t);
      if (!w || w.count < o.perMinute) return null;
      return new ApiError(
        'rate_limited',
        `Too many failed authentications from this address (more than ${o.perMinute} a minute); check the credential and retry after the Retry-After delay.`,
        {
          retryAfterSeconds: Math.max(1, Math.ceil((w.start + WINDOW_MS - t) / 1000)),
        },
      );
    },
    failed(ip, what) {
      const t = o.now().getTime();
      const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
      let w = windowOf(ip, t);
      if (!w) {
        if (windows.size >= 10_000) for (const [k, v] of windows) if (v.start !== start) windows.delete(k);
        w = { start, count: 0 };
        windows.set(ip, w);
      }
      w.count++;
      o.log('authentication failed', { ip, ...what, failuresThisMinute: w.count });
    },
  };
}
