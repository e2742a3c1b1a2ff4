import { CaptionfarmApiError, CaptionfarmNetworkError } from './errors.ts';
import { isTerminal, type Job } from './job.ts';
import { sleep } from './util.ts';

/** How waitForJob spaces its polls. */
export interface PollPolicy {
  /** Delay after a poll that saw the job change (phase, status or percent). */
  initialDelayMs: number;
  /** Ceiling of the delay while nothing changes. */
  maxDelayMs: number;
  /** Growth of the delay per poll that saw no change. */
  multiplier: number;
  /** Fraction (0..1) of the delay that is randomised away, so many clients do not poll in step. */
  jitter: number;
}

/**
 * 1 s after a change, then x1.5 per unchanged poll up to 10 s, each minus up to 20% jitter. A
 * rendering job whose percent moves is polled about every second; a job queued behind others
 * backs off to one request per 8-10 s (6-7 requests a minute, far under any plan's rate limit).
 */
export const DEFAULT_POLL_POLICY: Readonly<PollPolicy> = Object.freeze({ initialDelayMs: 1000, maxDelayMs: 10_000, multiplier: 1.5, jitter: 0.2 });

/**
 * The delay before the next poll: a pure function of how many polls in a row saw no change,
 * a random number in [0, 1), and a server Retry-After (a floor: never poll sooner than asked).
 */
export function nextPollDelay(args: {
  unchangedPolls: number;
  random: number;
  retryAfterMs?: number | undefined;
  policy?: Readonly<PollPolicy> | undefined;
}): number {
  const p = args.policy ?? DEFAULT_POLL_POLICY;
  const grown = p.initialDelayMs * p.multiplier ** Math.max(0, args.unchangedPolls);
  const base = Math.min(p.maxDelayMs, grown);
  const jitter = Math.min(1, Math.max(0, p.jitter)) * Math.min(1, Math.max(0, args.random));
  return Math.max(Math.round(base * (1 - jitter)), args.retryAfterMs ?? 0);
}

export interface WaitForJobOptions {
  /** Aborting rejects the wait with the signal's reason at once (the job itself is not cancelled). */
  signal?: AbortSignal | undefined;
  /** Called with every job record polled, including the first and the terminal one. */
  onUpdate?: ((job: Job) => void) | undefined;
  poll?: Partial<PollPolicy> | undefined;
  /**
   * Polls in a row that may fail with a transient error (network, 5xx, 429 rate_limited) before
   * the error is thrown; other errors (401, 404, ...) are thrown at once. Default 5.
   */
  maxConsecutiveErrors?: number | undefined;
  /** For tests: the source of jitter. */
  random?: (() => number) | undefined;
}

function isTransient(err: unknown): boolean {
  if (err instanceof CaptionfarmNetworkError) return true;
  return err instanceof CaptionfarmApiError && (err.code === 'rate_limited' || err.status >= 500);
}

/** Polls `getJob` until the job is terminal; returns the terminal record (succeeded, failed or cancelled). */
export async function pollUntilTerminal(getJob: (signal?: AbortSignal) => Promise<Job>, opts: WaitForJobOptions = {}): Promise<Job> {
  const policy: PollPolicy = { ...DEFAULT_POLL_POLICY, ...opts.poll };
  const random = opts.random ?? Math.random;
  const maxErrors = opts.maxConsecutiveErrors ?? 5;
  let unchanged = 0;
  let errors = 0;
  let lastKey: string | undefined;
  for (;;) {
    opts.signal?.throwIfAborted();
    let retryAfterMs: number | undefined;
    try {
      const job = await getJob(opts.signal);
      errors = 0;
      opts.onUpdate?.(job);
      if (isTerminal(job)) return job;
      const key = `${job.status}/${job.phase}/${job.percent}`;
      unchanged = key === lastKey ? unchanged + 1 : 0;
      lastKey = key;
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (!isTransient(err) || ++errors >= maxErrors) throw err;
      unchanged++;
      if (err instanceof CaptionfarmApiError && err.retryAfterSeconds !== undefined) retryAfterMs = err.retryAfterSeconds * 1000;
    }
    await sleep(nextPollDelay({ unchangedPolls: unchanged, random: random(), retryAfterMs, policy }), opts.signal);
  }
}
