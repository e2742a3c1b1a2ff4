import type { Logger } from '@captionfarm/log';
import type { AgentHub } from '../agents/hub.ts';
import type { Metrics } from '../metrics.ts';
import type { UploadsService } from '../services/uploads.ts';
import type { Webhooks } from '../webhooks/index.ts';
import type { JobsEmitter } from './service.ts';

/** What the job events reach, each by the calls made to it. */
export interface JobEventTargets {
  /** The agents (agents/hub.ts): work for every online node; a cancel for the node that holds a job. */
  hub: Pick<AgentHub, 'push' | 'pushOnline'>;
  metrics: Pick<Metrics, 'jobEnded'>;
  /** The line each ended job logs. */
  logger: Pick<Logger, 'info'>;
  /** Where a failed follow-up is reported. */
  log: (msg: string, err: unknown) => void;
  webhooks: Pick<Webhooks, 'wake'>;
  uploads: Pick<UploadsService, 'deleteEndedSources'>;
  /** Admission of an account's jobs waiting for minutes (jobs/admission.ts). */
  admission: { admit(accountId: string): Promise<void> };
}

/**
 * What follows a job's events, in one place: a queued job tells the online agents there is work;
 * a cancelled one tells the node that held it to stop; an ended one (after the transaction that
 * ended it, and queued its webhook row, committed: finishJob) is counted and logged, wakes the
 * webhook dispatcher, takes its uploaded source with it, and lets the account's waiting jobs have
 * the minutes it gave back.
 */
export function wireJobEvents(events: JobsEmitter, to: JobEventTargets): void {
  events.on('queued', () => to.hub.pushOnline({ type: 'work-available' }));
  events.on('cancelled', (job) => {
    if (job.lease_owner) to.hub.push(job.lease_owner, { type: 'cancel', jobId: job.id });
  });
  events.on('ended', (job) => {
    to.metrics.jobEnded(job);
    to.logger.info(
      { jobId: job.id, accountId: job.account_id, nodeId: job.lease_owner ?? undefined, status: job.status, failureCode: job.failure_code ?? undefined },
      `job ${job.status}`,
    );
  });
  events.on('ended', () => to.webhooks.wake());
  // Debris: an ended job's uploaded source can never be used again.
  events.on('ended', (job) => void to.uploads.deleteEndedSources(job.id).catch((err: unknown) => to.log('deleting the source of an ended job failed', err)));
  // An ended job gave its minutes back (or settled): the account's waiting jobs may run, or fail.
  events.on('ended', (job) => void to.admission.admit(job.account_id).catch((err: unknown) => to.log('admission failed', err)));
}
