/**
 * The farm in containers (issue 44), run by containers/test/run once the images are built: the
 * fault farm's test (agent/test/fault-farm.ts, the same checks as `npm run bench:farm`) with every
 * server a container from the images:
 *
 *   PostgreSQL   localhost/captionfarm-test-postgres (Debian's postgresql-15 on the images' base)
 *   S3           MinIO (scripts/build-minio's binary, mounted) in the images' base
 *   2 x          localhost/captionfarm        control planes on that database and bucket
 *   2 x          localhost/captionfarm-agent  agents, 2 slots each, one on each control plane
 *
 * All on the host's network (podman --network host), as the servers of one machine; the client
 * (this script), the webhook receiver (HTTPS, a test CA) and the checks run on the host. The
 * control planes reach the receiver on 127.0.0.1 because CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS
 * says so, and trust its CA through NODE_EXTRA_CA_CERTS: an operator's settings, nothing test-only.
 * Mid-job, one control plane is killed (podman kill -s KILL) and started again, and the second
 * agent is sent SIGTERM (podman kill -s TERM): it drains and exits 0. Nothing may be lost.
 *
 * Prints one `ok - ...` or `not ok - ...` line per check (containers/test/run counts them); exit 1
 * on any failure. Needs root podman, the images, MinIO and the test model (scripts/setup).
 */
import { chownSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { execa, type Subprocess } from 'execa';
import { testS3ServerBinary, startTestS3Server } from '@captionfarm/storage/testing';
import { runFaultFarm, type FarmParts, type FaultFarmResult } from '../../agent/test/fault-farm.ts';
import { testModelPath } from '../../agent/test/e2e-harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
const BASE = 'localhost/captionfarm-base:bookworm';
const POSTGRES = 'localhost/captionfarm-test-postgres:latest';
/** Every container this script starts, removed at the end whatever happened. */
const NAMES = ['cf-farm-pg', 'cf-farm-s3', 'cf-farm-cp-a', 'cf-farm-cp-b', 'cf-farm-agent-1', 'cf-farm-agent-2'];
/** The image's user: a bind-mounted data dir must be its. */
const IMAGE_UID = 10001;

let failed = 0;
const ok = (name: string) => console.log(`ok - ${name}`);
const no = (name: string, why: string) => {
  failed++;
  console.log(`not ok - ${name}\n    ${why.replaceAll('\n', '\n    ')}`);
};
const check = (name: string, pass: boolean, why: () => string) => (pass ? ok(name) : no(name, why()));
const podman = (...args: string[]) => execa('podman', args, { reject: false, stdin: 'ignore' });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const env = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
const run = (name: string, args: string[]): Subprocess =>
  // forceKillAfterDelay off: a SIGTERM stays one (the agent's drain); podman run proxies signals.
  execa('podman', ['run', '--rm', '--name', `cf-farm-${name}`, '--network', 'host', ...args], {
    stdin: 'ignore',
    buffer: false,
    reject: false,
    forceKillAfterDelay: false,
  });

const containerParts: FarmParts = {
  s3: () => startTestS3Server({ container: { image: BASE, name: 'cf-farm-s3' } }),
  controlPlane: ({ name, env: vars, dataDir, caFile }) => {
    mkdirSync(dataDir, { recursive: true });
    chownSync(dataDir, IMAGE_UID, IMAGE_UID);
    return run(name, [
      '-v',
      `${dataDir}:/data`,
      '-v',
      `${caFile}:/run/farm/ca.pem:ro`,
      ...env({ ...vars, CAPTIONFARM_DATA_DIR: '/data', CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: '127.0.0.1/32', NODE_EXTRA_CA_CERTS: '/run/farm/ca.pem' }),
      'localhost/captionfarm:latest',
    ]);
  },
  agent: ({ name, controlPlaneUrl, token }) =>
    run(name, [
      '-v',
      `${testModelPath()}:/models/ggml-base.bin:ro`,
      ...env({
        CAPTIONFARM_CONTROL_PLANE: controlPlaneUrl,
        CAPTIONFARM_AGENT_TOKEN: token,
        CAPTIONFARM_AGENT_NAME: name,
        CAPTIONFARM_AGENT_CONCURRENCY: '2',
        CAPTIONFARM_WHISPER_MODEL: '/models/ggml-base.bin',
        // Two agents on one network: the probes on a port each picks.
        CAPTIONFARM_AGENT_HEALTH_LISTEN: '127.0.0.1:0',
        CAPTIONFARM_LOG: 'info',
      }),
      'localhost/captionfarm-agent:latest',
      '--threads',
      '1',
    ]),
  // To the container itself: podman kill -s KILL is a kill -9 of its processes (killing the podman
  // client would leave the container running).
  signal: (_proc, name, signal) => void podman('kill', '--signal', signal === 'SIGKILL' ? 'KILL' : 'TERM', `cf-farm-${name}`),
};

async function main(): Promise<void> {
  await podman('rm', '-f', '--ignore', ...NAMES);
  let started = Date.now();
  const build = await podman(
    'build',
    '--quiet',
    '--network',
    'host',
    '--layers',
    '--build-arg',
    `BASE=${BASE}`,
    '--file',
    'containers/test/postgres.Containerfile',
    '--tag',
    POSTGRES,
    path.join(root, 'containers/test'),
  );
  if (build.exitCode !== 0) return no('the PostgreSQL image builds', String(build.stderr).slice(-2000));
  ok(`the PostgreSQL image builds (${Date.now() - started} ms)`);
  if (!testS3ServerBinary()) return no('MinIO is built', 'bash scripts/build-minio (scripts/setup --s3)');

  const pgPort = await freePort();
  started = Date.now();
  const pg = await podman('run', '-d', '--rm', '--name', 'cf-farm-pg', '--network', 'host', '-e', `PGPORT=${pgPort}`, POSTGRES);
  if (pg.exitCode !== 0) return no('PostgreSQL starts in its container', String(pg.stderr));
  const deadline = Date.now() + 60_000;
  while ((await podman('exec', 'cf-farm-pg', 'pg_isready', '-q', '-h', '127.0.0.1', '-p', String(pgPort))).exitCode !== 0) {
    if (Date.now() > deadline) return no('PostgreSQL accepts connections', String((await podman('logs', 'cf-farm-pg')).stderr).slice(-2000));
    await new Promise((r) => setTimeout(r, 200));
  }
  ok(`PostgreSQL accepts connections ${Date.now() - started} ms after podman run`);
  // The fault farm makes its database on the server this names (packages/db/src/testing.ts).
  process.env.CAPTIONFARM_TEST_DATABASE_URL = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;

  const jobs = 6;
  let r: FaultFarmResult;
  try {
    r = await runFaultFarm({
      jobs,
      webhookEvery: 2,
      restartPostgres: false,
      drainAgent: true,
      parts: containerParts,
      timeoutMs: 600_000,
      log: (m) => console.log(`# ${m}`),
    });
  } catch (err) {
    return no('the farm in containers runs its jobs', String((err as Error).stack ?? err));
  }
  const show = (x: unknown) => JSON.stringify(x);
  check(
    `all ${jobs} jobs succeeded (${r.wallSeconds.toFixed(1)} s; the kill at ${r.killedAt}, the drain at ${r.drainedAt})`,
    r.statuses.succeeded === jobs && r.notSucceeded.length === 0,
    () => show({ statuses: r.statuses, notSucceeded: r.notSucceeded }),
  );
  check('each job has exactly one reserve and one settle in the ledger', r.badLedgers.length === 0, () => show(r.badLedgers));
  check(
    `every webhook arrived once after deduplication (${r.webhookIds} ids, ${r.webhookRequests} requests, ${r.webhookJobs} jobs with one)`,
    r.webhooksMissing.length === 0 && r.webhookIds === r.webhookJobs && r.webhookJobs === jobs / 2,
    () => show({ missing: r.webhooksMissing, ids: r.webhookIds, jobs: r.webhookJobs }),
  );
  check(
    `the video went through S3: ${r.bucketOutputs} outputs in the bucket, every download on it, no source left, nothing on the control planes' disk`,
    r.bucketOutputs === jobs && r.downloadsNotOnS3.length === 0 && r.bucketSourcesLeft.length === 0 && r.controlPlaneObjects === 0,
    () => show({ outputs: r.bucketOutputs, notOnS3: r.downloadsNotOnS3, sourcesLeft: r.bucketSourcesLeft, onDisk: r.controlPlaneObjects }),
  );
  check('the drained agent finished what it held and exited 0', r.drainedAt !== null && r.drainedExitCode === 0, () =>
    show({ at: r.drainedAt, exit: r.drainedExitCode }),
  );
  check('no container exited but the ones killed and drained on purpose', r.unexpectedExits.length === 0, () => r.unexpectedExits.join('\n'));
}

try {
  await main();
} finally {
  await podman('rm', '-f', '--ignore', ...NAMES);
}
process.exit(failed ? 1 : 0);
