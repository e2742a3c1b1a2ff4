import type { FailureCode } from '@captionfarm/contracts';

/** A job failure with the spec's failure code and a reason a person can act on. */
export class JobFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'JobFailure';
  }
}

/** The job stopped because it was cancelled, its lease was lost, or the agent is shutting down. */
export class JobAborted extends Error {
  constructor(readonly why: 'cancelled' | 'lease-lost' | 'job-ended' | 'shutdown') {
    super(`job aborted: ${why}`);
    this.name = 'JobAborted';
  }
}
