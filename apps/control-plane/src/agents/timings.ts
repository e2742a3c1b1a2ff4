export interface AgentTimings {
  /** A lease lasts this long without a heartbeat. */
  leaseMs: number;
  /** Attempts before a job that keeps losing its agent fails with `internal`. */
  maxAttempts: number;
  /** Deadline = first lease + base + perInputSecond x input seconds (ARCHITECTURE: 15 min + 3x). */
  deadlineBaseMs: number;
  deadlinePerInputSecond: number;
  /** A node whose last websocket closed loses its leases after this grace (a reconnect within it keeps them). */
  disconnectGraceMs: number;
}

export const DEFAULT_AGENT_TIMINGS: AgentTimings = {
  leaseMs: 30_000,
  maxAttempts: 3,
  deadlineBaseMs: 15 * 60_000,
  deadlinePerInputSecond: 3,
  disconnectGraceMs: 5_000,
};

/** Answer to a write by a lease holder. */
export type { LeaseCheck } from '@captionfarm/contracts';

export const OUTPUT_TTL_SECONDS = 7 * 24 * 3600;
