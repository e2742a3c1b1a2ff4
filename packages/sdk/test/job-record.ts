import type { Job } from '../src/index.ts';

/** The one job-record fixture of the tests: a queued mp4 job, every field set, overridden by `over`. */
export function jobRecord(over: Partial<Job> = {}): Job {
  return {
    id: '6f1d1c4e-8a55-4a55-9c1e-1d2b3c4d5e6f',
    status: 'queued',
    phase: 'queued',
    templateId: 'karaoke',
    quotedSeconds: null,
    format: 'mp4',
    quality: 'high',
    resolution: null,
    percent: null,
    downloadUrl: null,
    outputExpiresAt: null,
    failureReason: null,
    failureCode: null,
    settledAt: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}
