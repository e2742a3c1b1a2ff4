import { largerThanSource, PLANS, type PlanId } from '@captionfarm/contracts';
import type { AgentTimings } from '../agents/timings.ts';
import type { Ending } from './finish.ts';
import type { UploadProbe } from './probe-upload.ts';
import type { Rendition } from './renditions.ts';

/**
 * The job's decisions that more than one path takes (a create that probed its upload, an agent's
 * ingest report, admission), each written once, pure: the same inputs give the same ending, in the
 * same words, whichever path asks.
 */

/** A source longer than the plan accepts fails `source-too-long`; null when it fits. */
export function sourceTooLong(plan: PlanId, durationSeconds: number): Extract<Ending, { status: 'failed' }> | null {
  const max = PLANS[plan].maxInputSeconds;
  if (durationSeconds <= max) return null;
  return {
    status: 'failed',
    failureCode: 'source-too-long',
    failureReason: `The video is ${Math.ceil(durationSeconds)} s long; the ${plan} plan accepts up to ${max} s. Trim it or upgrade.`,
  };
}

/**
 * What a create's probe of its upload decides: bytes that are not a video fail `source-unreadable`,
 * a source longer than the plan accepts fails `source-too-long`; null when the job goes on (or the
 * probe could not run: ingest probes again).
 */
export function probeEnding(plan: PlanId, probe: Awaited<ReturnType<UploadProbe>>): Ending | null {
  if (!probe) return null;
  if ('unreadable' in probe) return { status: 'failed', failureCode: 'source-unreadable', failureReason: probe.unreadable };
  return sourceTooLong(plan, probe.durationSeconds);
}

/**
 * A requested resolution larger than the source fails `output-larger-than-source` (videos are never
 * upscaled), any rendition's (issue 43); null when every one fits or none was asked.
 */
export function outputLargerThanSource(
  renditions: readonly Rendition[],
  source: { width: number; height: number },
): Extract<Ending, { status: 'failed' }> | null {
  const i = renditions.findIndex((r) => r.width !== null && r.height !== null && largerThanSource({ width: r.width, height: r.height }, source));
  if (i === -1) return null;
  const r = renditions[i]!;
  const which = renditions.length > 1 ? `outputs[${i}].resolution ` : '';
  return {
    status: 'failed',
    failureCode: 'output-larger-than-source',
    failureReason: `The requested ${which}${r.width}x${r.height} is larger than the ${source.width}x${source.height} source; videos are never upscaled.`,
  };
}

/**
 * After ingest: the job's own `edit.keep` must lie within the source, like a given transcript
 * (1 ms of slack for times rounded to the millisecond). A range past the end fails the job with
 * `edit-out-of-range` (not retryable: the same request would fail again); null when every range
 * fits, or the job has no ranges of its own.
 */
export function editOutOfRange(job: { edit_json: string | null }, durationSeconds: number): Extract<Ending, { status: 'failed' }> | null {
  if (job.edit_json === null) return null;
  const keep = (JSON.parse(job.edit_json) as { keep: { start: number; end: number }[] | null }).keep ?? [];
  const i = keep.findIndex((r) => r.end > durationSeconds + 0.001);
  if (i === -1) return null;
  const r = keep[i]!;
  return {
    status: 'failed',
    failureCode: 'edit-out-of-range',
    failureReason:
      `Range ${i} (${r.start}..${r.end} s) of edit.keep ends after the end of the ${Math.round(durationSeconds * 1000) / 1000} s video; ` +
      'fix the ranges and create the job again.',
  };
}

/** A job the account's minutes cannot cover fails `automation-minutes-exhausted`. `needs`: "3 minutes", "at least 1 minute". */
export function minutesExhausted(needs: string, balance: number): Extract<Ending, { status: 'failed' }> {
  return {
    status: 'failed',
    failureCode: 'automation-minutes-exhausted',
    failureReason: `The video needs ${needs} of automation and the account has ${balance} left; add minutes, then retry.`,
  };
}

/** "1 minute", "3 minutes". */
export function minutesText(n: number): string {
  return `${n} minute${n === 1 ? '' : 's'}`;
}

/**
 * When a job must be done (ISO time): its first lease + base + perInputSecond x the input's
 * seconds (ARCHITECTURE.md: 15 min + 3x). Before ingest the input's length is the plan's maximum.
 */
export function deadlineAt(startedMs: number, timings: Pick<AgentTimings, 'deadlineBaseMs' | 'deadlinePerInputSecond'>, inputSeconds: number): string {
  return new Date(startedMs + timings.deadlineBaseMs + timings.deadlinePerInputSecond * inputSeconds * 1000).toISOString();
}
