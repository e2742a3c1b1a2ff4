import { z } from 'zod';

export const PLAN_IDS = ['free', 'starter', 'pro'] as const;
export const PlanIdSchema = z.enum(PLAN_IDS);
export type PlanId = z.infer<typeof PlanIdSchema>;

export interface Plan {
  id: PlanId;
  minutesPerMonth: number;
  maxInputSeconds: number;
  uploadsPerDay: number;
  /** Largest output frame, in pixels (width x height). */
  frameBudget: number;
  maxUploadBytes: number;
  concurrentJobs: number;
  requestsPerMinute: number;
}

const MB = 1_000_000;
/** The plan table of ARCHITECTURE.md. */
export const PLANS: Readonly<Record<PlanId, Plan>> = Object.freeze({
  free: {
    id: 'free',
    minutesPerMonth: 30,
    maxInputSeconds: 180,
    uploadsPerDay: 10,
    frameBudget: 1280 * 720,
    maxUploadBytes: 500 * MB,
    concurrentJobs: 1,
    requestsPerMinute: 60,
  },
  starter: {
    id: 'starter',
    minutesPerMonth: 300,
    maxInputSeconds: 300,
    uploadsPerDay: 50,
    frameBudget: 1920 * 1080,
    maxUploadBytes: 2000 * MB,
    concurrentJobs: 3,
    requestsPerMinute: 300,
  },
  pro: {
    id: 'pro',
    minutesPerMonth: 2000,
    maxInputSeconds: 600,
    uploadsPerDay: 100,
    frameBudget: 3840 * 2160,
    maxUploadBytes: 5000 * MB,
    concurrentJobs: 10,
    requestsPerMinute: 1200,
  },
});

/** Minutes are billed as ceil(seconds / 60). */
export function billableMinutes(seconds: number): number {
  return Math.max(0, Math.ceil(seconds / 60));
}

/** Processing deadline: 15 min + 3 x the input duration (ARCHITECTURE.md). */
export function processingDeadlineMs(inputSeconds: number): number {
  return (15 * 60 + 3 * inputSeconds) * 1000;
}
