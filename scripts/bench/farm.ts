/**
 * bench:farm — the issue 13 fault test in full: two control-plane processes, two agent processes
 * (2 slots each), one PostgreSQL, one real S3 server (MinIO, started by the bench: `bash
 * scripts/build-minio` first), 30 short upload jobs (every third with a webhook to an HTTPS
 * receiver on loopback, test CA); one control plane is killed with SIGKILL mid-render and started
 * again, and PostgreSQL restarts once. Checks every job succeeded, one reserve and one settle per
 * job, every webhook-id received once after deduplication, every output in the bucket and served
 * from it, every source deleted from it, nothing on the control planes' disk; prints wall time
 * and jobs per minute. Agents move video straight to and from S3.
 *
 *   CAPTIONFARM_TEST_DATABASE_URL=$(bash scripts/postgres) npm run bench:farm [-- --jobs 30] [-- --no-postgres-restart]
 */
import { parseArgs } from 'node:util';
import { runFaultFarm } from '../../agent/test/fault-farm.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '30' },
    'webhook-every': { type: 'string', default: '3' },
    'no-postgres-restart': { type: 'boolean', default: false },
  },
});
const jobs = Number(values.jobs);
const t0 = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${m}\n`);
const r = await runFaultFarm({ jobs, webhookEvery: Number(values['webhook-every']), restartPostgres: !values['no-postgres-restart'], log });
const ok =
  r.statuses.succeeded === jobs &&
  r.badLedgers.length === 0 &&
  r.webhooksMissing.length === 0 &&
  r.webhookIds === r.webhookJobs &&
  r.bucketOutputs === jobs &&
  r.downloadsNotOnS3.length === 0 &&
  r.bucketSourcesLeft.length === 0 &&
  r.controlPlaneObjects === 0 &&
  r.unexpectedExits.length === 0;
process.stdout.write(
  [
    `bench:farm  ${jobs} jobs, 2 control planes, 2 agents x 2 slots, PostgreSQL, S3 (MinIO on loopback)`,
    `  kill -9 of a control plane mid-render at: ${r.killedAt}; PostgreSQL restart at: ${r.postgresRestartedAt ?? 'not done'}`,
    `  statuses: ${JSON.stringify(r.statuses)}${r.notSucceeded.length ? ` (${r.notSucceeded.join('; ')})` : ''}`,
    `  ledger: ${jobs - r.badLedgers.length} of ${jobs} jobs with exactly one reserve and one settle${r.badLedgers.length ? ` (others: ${JSON.stringify(r.badLedgers)})` : ''}`,
    `  webhooks: ${r.webhookIds} distinct webhook-ids for ${r.webhookJobs} jobs with a webhook (${r.webhookRequests} requests in all)${r.webhooksMissing.length ? `; missing: ${r.webhooksMissing.join(', ')}` : ''}`,
    `  S3: ${r.bucketOutputs} of ${jobs} outputs in the bucket; ${jobs - r.downloadsNotOnS3.length} downloadUrls on the S3 server; ` +
      `${r.bucketSourcesLeft.length} sources left in the bucket${r.bucketSourcesLeft.length ? ` (${r.bucketSourcesLeft.join(', ')})` : ''}; ` +
      `${r.controlPlaneObjects} files in the control planes' built-in store`,
    `  processes that exited on their own: ${r.unexpectedExits.length}${r.unexpectedExits.length ? `\n${r.unexpectedExits.join('\n')}` : ''}`,
    `  wall time ${r.wallSeconds.toFixed(1)} s, ${r.jobsPerMinute.toFixed(1)} jobs/min`,
    ok ? '  PASS' : '  FAIL',
    '',
  ].join('\n'),
);
process.exit(ok ? 0 : 1);
