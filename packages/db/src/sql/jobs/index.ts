export * from './lease-next-job.ts';
