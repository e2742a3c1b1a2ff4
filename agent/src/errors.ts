import type { FailureCode } from '@captionfarm/contracts';
import { RenderError } from '@captionfarm/renderer';

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

/** The foreign part a call went to: the same error means a different failure from each. */
export type FailureSource = 'probe' | 'transcriber' | 'renderer';

/**
 * The one table from an error to the job's failure code and reason. Without `from` (the agent, once
 * the job has ended): a JobFailure as thrown, anything else `internal`. With `from` (where a stage
 * calls a foreign part): whatever the transcriber throws is `transcription-failed`; a RenderError
 * keeps its code from the renderer, and from the probe is `source-unreadable` or `ingest-failed`;
 * any other error comes back as it is (an abort, or a render that must start over, which the
 * pipeline handles itself). The caller checks its signal first: an aborted call is no failure.
 */
export function failureOf(err: unknown): JobFailure;
export function failureOf(err: unknown, from: FailureSource): unknown;
export function failureOf(err: unknown, from?: FailureSource): unknown {
  if (from === 'transcriber') return new JobFailure('transcription-failed', firstLine((err as Error).message));
  if (err instanceof JobFailure) return err;
  if (err instanceof RenderError && from === 'probe') {
    return new JobFailure(err.code === 'source-unreadable' ? 'source-unreadable' : 'ingest-failed', firstLine(err.message));
  }
  if (err instanceof RenderError && from === 'renderer') return new JobFailure(err.code, firstLine(err.message));
  if (from) return err;
  return new JobFailure('internal', `Unexpected agent error: ${(err as Error).message ?? String(err)}`);
}

/** A reason's first line, at most 500 characters (a RenderError's message goes on with ffmpeg's stderr tail). */
export function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 500);
}
