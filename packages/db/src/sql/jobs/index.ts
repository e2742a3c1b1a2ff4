export * from './lease-next-job.ts';
export * from './extend-leases.ts';
export * from './report-progress.ts';
export * from './release-lease.ts';
export * from './fail-jobs.ts';
