import type { TRPCClient } from '@trpc/client';
import type { AgentRouter, LeasedJob } from '@captionfarm/contracts';
import { JobAborted } from './errors.ts';
import type { JobChannel, LeaseAnswer } from './pipeline.ts';
import type { Report } from './report.ts';

/**
 * One job's calls to the control plane, bound to its lease: every report but percent through
 * `report` (sent again when unanswered); an answer that the lease is gone aborts the job.
 */
export function createJobChannel(o: {
  client: TRPCClient<AgentRouter>;
  job: LeasedJob;
  nodeId: string;
  controller: AbortController;
  report: Report;
  abortJob: (why: 'lease-lost' | 'job-ended') => void;
  /** Called as complete goes out: a heartbeat racing it must not report the lease gone. */
  completing: () => void;
  /** Minimum spacing of percent reports (phase changes go at once). */
  progressEveryMs: number;
  log: (msg: string) => void;
}): JobChannel {
  const { client, job, controller } = o;
  const ref = { nodeId: o.nodeId, jobId: job.jobId, leaseId: job.leaseId };
  const sendAgain = <T>(what: string, send: () => Promise<T>) => o.report(send, controller.signal, what, job.jobId);
  const check = (answer: LeaseAnswer) => {
    if (!answer.ok) o.abortJob(answer.reason);
    return answer;
  };
  let lastSent = 0;
  let pending: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const every = o.progressEveryMs;
  const send = (percent: number) => {
    lastSent = Date.now();
    pending = undefined;
    client.progress.mutate({ ...ref, phase: 'rendering', percent }).then(check, (err: unknown) => o.log(`progress: ${(err as Error).message}`));
  };
  controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return {
    async phase(phase, percent) {
      check(await sendAgain('phase', () => client.progress.mutate({ ...ref, phase, percent })));
      if (controller.signal.aborted) throw controller.signal.reason;
    },
    percent(p) {
      // Throttled: a report at most every `every` ms, the latest value always sent.
      if (Date.now() - lastSent >= every || p === 100) {
        clearTimeout(timer);
        send(p);
        return;
      }
      pending = p;
      timer ??= setTimeout(
        () => {
          timer = undefined;
          if (pending !== undefined) send(pending);
        },
        every - (Date.now() - lastSent),
      );
    },
    async ingested(info) {
      return check(await sendAgain('ingested', () => client.ingested.mutate({ ...ref, ...info })));
    },
    async transcribed(transcript) {
      return check(await sendAgain('transcribed', () => client.transcribed.mutate({ ...ref, ...transcript })));
    },
    async outputUploadUrl(sizeBytes, what = {}) {
      const r = await sendAgain('output upload URL', () => client.outputUploadUrl.mutate({ ...ref, sizeBytes, ...what }));
      if (!r.ok) {
        check(r);
        throw new JobAborted(r.reason);
      }
      return r.url;
    },
    async complete(result) {
      o.completing();
      return check(await sendAgain('complete', () => client.complete.mutate({ ...ref, ...result })));
    },
  };
}
