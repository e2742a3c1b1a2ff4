import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createS3Store } from '@captionfarm/storage';
import { runToEnd } from '@captionfarm/process';
import { execa, type Subprocess } from 'execa';
import { startTestS3Server, type TestS3Server } from '@captionfarm/storage/testing';
import { openDatabase, type Db } from '../../packages/db/src/index.ts';
import { freshTestDatabase, testDatabaseServerUrl } from '../../packages/db/src/testing.ts';
import { readAdminToken } from '../../apps/control-plane/src/secrets.ts';
import { apiFor, type Api } from '../../apps/control-plane/test/harness.ts';
import { startReceiver } from '../../packages/net/test/helpers/receiver.ts';
import { createTestCertificates } from '../../packages/net/test/helpers/test-ca.ts';
import { makeClip, submitUpload, testModelPath } from './e2e-harness.ts';

/**
 * The issue 13 fault test: two control-plane processes and two agent processes (2 slots each) on
 * one PostgreSQL and one real S3 server (MinIO, @captionfarm/storage/testing), `jobs` short
 * upload jobs (every `webhookEvery`-th with a webhook to an HTTPS receiver on loopback, test CA);
 * one control plane is killed with SIGKILL while a job renders and started again; optionally
 * PostgreSQL itself restarts once. Run in full by `npm run bench:farm` and in a shortened form by
 * the test suite (fault-farm.e2e.test.ts). Video goes straight between clients, agents and S3;
 * the control planes share the bucket and the database (the data dir only for their secrets).
 */
export interface FaultFarmOptions {
  jobs: number;
  webhookEvery: number;
  restartPostgres: boolean;
  /** SIGTERM the second agent once it holds a job (after the kill): it must finish its jobs, lease none, exit 0. */
  drainAgent?: boolean;
  /** How the S3 server, control planes and agents run; default processes on this machine (processParts). */
  parts?: FarmParts;
  log?: (msg: string) => void;
  timeoutMs?: number;
}

/**
 * How the farm's servers run: processes here (processParts), or containers from the images
 * (containers/test/farm.ts). PostgreSQL is the server CAPTIONFARM_TEST_DATABASE_URL names either way.
 * A control plane must print `listening` once it serves; its env has the database, S3, the timings
 * and PORT/HOST, to which the part adds its data dir and the way it trusts the test CA (webhooks to
 * an HTTPS receiver on 127.0.0.1).
 */
export interface FarmParts {
  s3(): Promise<TestS3Server>;
  controlPlane(o: { name: string; env: Record<string, string>; dataDir: string; caFile: string }): Subprocess;
  agent(o: { name: string; controlPlaneUrl: string; token: string; workDir: string }): Subprocess;
  /** Sends a signal: to the process, or through podman to a container. */
  signal(proc: Subprocess, name: string, signal: 'SIGKILL' | 'SIGTERM'): void;
}

const root = path.resolve(import.meta.dirname, '../..');
const cliMain = path.join(root, 'apps/cli/src/main.ts');
const cpEntry = path.join(import.meta.dirname, 'fault-farm-cp.ts');

const quiet = { stdin: 'ignore', buffer: false, reject: false, forceKillAfterDelay: false, cwd: root } as const;

/** The farm as processes on this machine: MinIO, `node --import tsx` control planes and agents. */
const processParts: FarmParts = {
  s3: () => startTestS3Server(),
  // forceKillAfterDelay off (here and for the agents): a SIGTERM stays one SIGTERM, with no SIGKILL
  // from execa 5 s later.
  controlPlane: ({ env, dataDir, caFile }) =>
    execa(process.execPath, ['--import', 'tsx', cpEntry], {
      ...quiet,
      env: { ...process.env, ...env, CAPTIONFARM_DATA_DIR: dataDir, FAULT_FARM_CA_FILE: caFile },
    }),
  agent: ({ name, controlPlaneUrl, token, workDir }) =>
    execa(
      process.execPath,
      [
        '--import',
        'tsx',
        cliMain,
        'agent',
        '--control-plane',
        controlPlaneUrl,
        '--token',
        token,
        '--name',
        name,
        '--model',
        testModelPath(),
        '--threads',
        '1',
        '--concurrency',
        '2',
        '--work-dir',
        workDir,
      ],
      { ...quiet, env: { ...process.env, CAPTIONFARM_LOG: 'silent' } },
    ),
  signal: (proc, _name, signal) => proc.kill(signal),
};

export interface FaultFarmResult {
  wallSeconds: number;
  jobsPerMinute: number;
  statuses: Record<string, number>;
  /** Each job that did not succeed: "id status/phase: failure code and reason". */
  notSucceeded: string[];
  /** Jobs whose ledger is not exactly one reserve and one settle, with what they have. */
  badLedgers: { jobId: string; kinds: Record<string, number> }[];
  webhookJobs: number;
  /** Distinct webhook-ids received (after deduplication) and requests in all. */
  webhookIds: number;
  webhookRequests: number;
  /** Jobs with a webhook whose job id no received webhook names. */
  webhooksMissing: string[];
  killedAt: string | null;
  postgresRestartedAt: string | null;
  /** With drainAgent: when agent-2 was sent SIGTERM (jobs ended, jobs it held), and its exit code. */
  drainedAt: string | null;
  drainedExitCode: number | null;
  /** Rendered outputs in the bucket, and jobs whose downloadUrl is not on the S3 server. */
  bucketOutputs: number;
  downloadsNotOnS3: string[];
  /** Sources and upload objects still in the bucket once every job ended (their ends delete them). */
  bucketSourcesLeft: string[];
  /** Files the control planes stored on their own disk (the built-in store): none with S3. */
  controlPlaneObjects: number;
  /** Processes that exited on their own (not the planned kill -9), with the tail of their output. */
  unexpectedExits: string[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until<T>(check: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check().catch((err: unknown) => {
      // A process that exited ends the wait; anything else (PostgreSQL restarting) is retried.
      if (err instanceof Error && err.message.includes('exited')) throw err;
      return undefined;
    });
    if (v) return v;
    if (Date.now() > end) throw new Error(`fault farm: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Restarts the Debian PostgreSQL cluster that serves `url` (found by its port). Needs root. */
async function restartPostgres(url: string): Promise<void> {
  const port = new URL(url).port || '5432';
  const line = (await runToEnd('pg_lsclusters', { args: ['--no-header'] })).stdout
    .trim()
    .split('\n')
    .find((l) => l.split(/\s+/)[2] === port);
  if (!line) throw new Error(`no local PostgreSQL cluster on port ${port} to restart`);
  const [version, cluster] = line.split(/\s+/);
  await runToEnd('pg_ctlcluster', { args: [version!, cluster!, 'restart'], stdout: 'ignore' });
}

export async function runFaultFarm(o: FaultFarmOptions): Promise<FaultFarmResult> {
  const log = o.log ?? (() => undefined);
  const parts = o.parts ?? processParts;
  if (!testDatabaseServerUrl()) throw new Error('the fault farm needs PostgreSQL: set CAPTIONFARM_TEST_DATABASE_URL (bash scripts/postgres prints one)');
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-fault-farm-'));
  const dataDir = path.join(dir, 'data');
  const certs = await createTestCertificates();
  const caFile = path.join(dir, 'ca.pem');
  await writeFile(caFile, certs.ca);
  const testDb = await freshTestDatabase();
  let s3: TestS3Server | undefined;
  // execa itself, not the process module, for the control planes and agents: the farm signals them
  // and reads their exit as a ChildProcess's.
  const procs: Subprocess[] = [];
  const unexpectedExits: string[] = [];
  let stopping = false;
  const planned = new Set<Subprocess>();
  /** Any exit but the planned kill and the teardown is a failure, reported with what the process said. */
  const watchExit = (proc: Subprocess, name: string, out: () => string) =>
    proc.once('exit', (code, signal) => {
      if (stopping || planned.has(proc)) return;
      const what = `${name} exited (${signal ?? `code ${code}`}); its last output:\n${out().slice(-3000)}`;
      unexpectedExits.push(what);
      log(what);
    });
  const received = new Map<string, string>();
  let requests = 0;
  const receiver = await startReceiver(certs, (req, res) => {
    requests++;
    const id = String(req.headers['webhook-id'] ?? '');
    // Deduplication by webhook-id, as the spec's receivers do: a repeat is acknowledged, not processed.
    if (id && !received.has(id)) received.set(id, req.body);
    res.writeHead(204).end();
  });
  let db: Db | undefined;

  const cps: { name: string; port: number; url: string; proc?: Subprocess; out: string }[] = [];
  async function startCp(cp: (typeof cps)[number]): Promise<void> {
    cp.out = '';
    const proc = parts.controlPlane({
      name: cp.name,
      dataDir,
      caFile,
      env: {
        ...testDb.env,
        ...s3!.env,
        CAPTIONFARM_LOG: 'info',
        CAPTIONFARM_EMBEDDED_AGENT: '0',
        CAPTIONFARM_SWEEP_SECONDS: '1',
        CAPTIONFARM_LEASE_SECONDS: '10',
        CAPTIONFARM_AGENT_GRACE_SECONDS: '5',
        PORT: String(cp.port),
        HOST: '127.0.0.1',
      },
    });
    // The last 20 KB: requests and errors are logged (the level has no errors-only), crashes print their stack.
    const keep = (d: Buffer) => (cp.out = (cp.out + d.toString()).slice(-20_000));
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    procs.push(proc);
    watchExit(proc, cp.name, () => cp.out);
    cp.proc = proc;
    await until(
      async () => cp.out.includes('listening') || (proc.exitCode !== null && Promise.reject(new Error(`${cp.name} exited:\n${cp.out}`))),
      90_000,
      `${cp.name} to listen`,
    );
  }

  try {
    s3 = await parts.s3();
    for (const name of ['cp-a', 'cp-b']) {
      const port = await freePort();
      cps.push({ name, port, url: `http://127.0.0.1:${port}`, out: '' });
    }
    // One after the other: the first migrates the database and writes the shared secrets.
    for (const cp of cps) await startCp(cp);
    db = await openDatabase({ url: testDb.url!, poolSize: 2 });
    const admin = (cp: (typeof cps)[number]) => apiFor(cp.url, readAdminToken(dataDir));
    const acc = await admin(cps[0]!)('POST', '/admin/v1/accounts', { name: 'fault-farm', plan: 'pro' });
    const key = (await admin(cps[0]!)('POST', `/admin/v1/accounts/${acc.body.id}/keys`)).body.key as string;
    const api: Api[] = cps.map((cp) => apiFor(cp.url, key));

    // Two agents, two slots each, one on each control plane.
    const agents: { name: string; proc: Subprocess }[] = [];
    for (const [i, cp] of cps.entries()) {
      const name = `agent-${i + 1}`;
      const token = (await admin(cp)('POST', '/admin/v1/agents/tokens', { name })).body.token as string;
      const workDir = await mkdtemp(path.join(dir, `${name}-`));
      let out = '';
      const proc = parts.agent({ name, controlPlaneUrl: cp.url, token, workDir });
      agents.push({ name, proc });
      proc.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
      proc.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
      procs.push(proc);
      watchExit(proc, `agent-${i + 1}`, () => out);
      await until(
        async () =>
          (await db!
            .selectFrom('agent_nodes')
            .select('id')
            .where('name', '=', `agent-${i + 1}`)
            .executeTakeFirst()) ??
          (proc.exitCode !== null && Promise.reject(new Error(`agent ${i + 1} exited:\n${out}`))),
        90_000,
        `agent ${i + 1} to register`,
      );
    }

    const clip = await readFile(await makeClip(dir, 'clip.mp4', { width: 320, height: 568, seconds: 2, speech: 'Nothing is lost when a process dies.' }));
    const started = performance.now();
    const jobIds: string[] = [];
    const webhookJobs = new Set<string>();
    for (let i = 0; i < o.jobs; i++) {
      const hook = i % o.webhookEvery === 0;
      const job = await submitUpload(api[i % 2]!, clip, { language: 'en', ...(hook ? { webhookUrl: `https://127.0.0.1:${receiver.port}/hook/${i}` } : {}) });
      jobIds.push(job.id);
      if (hook) webhookJobs.add(job.id);
    }
    log(`${o.jobs} jobs submitted (${webhookJobs.size} with a webhook)`);

    const terminalCount = async () =>
      Number(
        (
          await db!
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', 'in', ['succeeded', 'failed', 'cancelled'])
            .executeTakeFirstOrThrow()
        ).n,
      );
    // kill -9 the first control plane while a job renders, then start it again on the same port.
    await until(
      async () => (await db!.selectFrom('jobs').select('id').where('phase', '=', 'rendering').where('status', '=', 'running').executeTakeFirst()) ?? undefined,
      300_000,
      'a job to render',
    );
    const victim = cps[0]!;
    planned.add(victim.proc!);
    parts.signal(victim.proc!, victim.name, 'SIGKILL');
    const killedAt = `${await terminalCount()} of ${o.jobs} jobs ended`;
    log(`kill -9 ${victim.name} while rendering (${killedAt})`);
    await new Promise((r) => victim.proc!.once('exit', r));
    await new Promise((r) => setTimeout(r, 2000));
    await startCp(victim);
    log(`${victim.name} restarted`);

    // SIGTERM to the second agent once it holds a job: it finishes what it holds, leases nothing
    // more, and exits 0; the other agent does the rest.
    let drainedAt: string | null = null;
    let drainedExitCode: number | null = null;
    let drained: Promise<void> | undefined;
    if (o.drainAgent) {
      const drainee = agents[1]!;
      const node = await db.selectFrom('agent_nodes').select('id').where('name', '=', drainee.name).executeTakeFirstOrThrow();
      const held = async () => (await db!.selectFrom('jobs').select('id').where('lease_owner', '=', node.id).where('status', '=', 'running').execute()).length;
      await until(async () => (await held()) > 0 || (await terminalCount()) === o.jobs, o.timeoutMs ?? 900_000, `${drainee.name} to hold a job`);
      planned.add(drainee.proc);
      drainedAt = `${await terminalCount()} of ${o.jobs} jobs ended, ${await held()} held by ${drainee.name}`;
      drained = new Promise<void>((resolve) =>
        drainee.proc.once('exit', (code) => {
          drainedExitCode = code;
          resolve();
        }),
      );
      parts.signal(drainee.proc, drainee.name, 'SIGTERM');
      log(`SIGTERM to ${drainee.name} (${drainedAt})`);
    }

    let postgresRestartedAt: string | null = null;
    if (o.restartPostgres) {
      await until(async () => (await terminalCount()) >= Math.floor(o.jobs / 2), o.timeoutMs ?? 900_000, 'half of the jobs to end');
      postgresRestartedAt = `${await terminalCount()} of ${o.jobs} jobs ended`;
      await restartPostgres(testDb.url!);
      log(`PostgreSQL restarted (${postgresRestartedAt})`);
    }

    await until(async () => (await terminalCount()) === o.jobs, o.timeoutMs ?? 900_000, 'every job to end');
    // The drained agent exits once its last job is reported (within its grace, here a minute).
    if (drained) await Promise.race([drained, new Promise((r) => setTimeout(r, 60_000))]);
    const wallSeconds = (performance.now() - started) / 1000;
    log(`all ${o.jobs} jobs ended in ${wallSeconds.toFixed(1)} s`);
    // Webhooks go out after the job ends: give the dispatchers time to deliver (retries included).
    await until(async () => [...webhookJobs].every((id) => [...received.values()].some((b) => b.includes(id))), 120_000, 'every webhook').catch(
      () => undefined,
    );

    const statusRows = await db
      .selectFrom('jobs')
      .select(['status'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy('status')
      .execute();
    // What any job that did not succeed ended with: the assertion's message then says why.
    const notSucceeded = (
      await db.selectFrom('jobs').select(['id', 'status', 'phase', 'failure_code', 'failure_reason']).where('status', '!=', 'succeeded').execute()
    ).map((j) => `${j.id} ${j.status}/${j.phase}: ${j.failure_code ?? ''} ${j.failure_reason ?? ''}`.trim());
    const ledger = await db
      .selectFrom('minutes_ledger')
      .select(['job_id', 'kind'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('job_id', 'is not', null)
      .groupBy(['job_id', 'kind'])
      .execute();
    const kindsOf = new Map<string, Record<string, number>>();
    for (const r of ledger) kindsOf.set(r.job_id!, { ...kindsOf.get(r.job_id!), [r.kind]: Number(r.n) });
    const badLedgers = jobIds.map((jobId) => ({ jobId, kinds: kindsOf.get(jobId) ?? {} })).filter(({ kinds }) => kinds.reserve !== 1 || kinds.settle !== 1);
    const bodies = [...received.values()];

    // Storage, seen on the S3 server itself: every output there, every source gone with its job
    // (the sealed copy and the upload's own key), and nothing on the control planes' disk.
    const bucket = createS3Store(s3);
    const sourcesLeft = async () => {
      const left: string[] = [];
      for (const u of await db!.selectFrom('uploads').select(['id', 'object_key']).execute())
        for (const key of new Set([u.object_key, `uploads/${u.id}.mp4`])) if (await bucket.head(key)) left.push(key);
      return left;
    };
    // A job's end deletes its source just after the job is marked ended (and each sweep again).
    await until(async () => (await sourcesLeft()).length === 0, 30_000, 'the sources to leave the bucket').catch(() => undefined);
    const bucketSourcesLeft = await sourcesLeft();
    let bucketOutputs = 0;
    for (const j of await db.selectFrom('jobs').select('output_key').execute()) if (j.output_key && (await bucket.head(j.output_key))) bucketOutputs++;
    const s3Origin = new URL(s3.endpoint).origin;
    const downloadsNotOnS3: string[] = [];
    // Through a control plane still serving (one that died is reported in unexpectedExits).
    const live = api.filter((_, i) => cps[i]!.proc!.exitCode === null && cps[i]!.proc!.signalCode === null);
    for (const [i, id] of jobIds.entries()) {
      if (!live.length) throw new Error(`no control plane left serving:\n${unexpectedExits.join('\n')}`);
      const job = (await live[i % live.length]!('GET', `/v1/automation-jobs/${id}`)).body;
      if (!job.downloadUrl || new URL(job.downloadUrl).origin !== s3Origin) downloadsNotOnS3.push(id);
    }
    const objectsDir = path.join(dataDir, 'objects');
    const controlPlaneObjects = existsSync(objectsDir) ? (await readdir(objectsDir, { recursive: true })).length : 0;
    return {
      wallSeconds,
      jobsPerMinute: o.jobs / (wallSeconds / 60),
      statuses: Object.fromEntries(statusRows.map((r) => [r.status, Number(r.n)])),
      notSucceeded,
      badLedgers,
      webhookJobs: webhookJobs.size,
      webhookIds: received.size,
      webhookRequests: requests,
      webhooksMissing: [...webhookJobs].filter((id) => !bodies.some((b) => b.includes(id))),
      killedAt,
      postgresRestartedAt,
      drainedAt,
      drainedExitCode,
      bucketOutputs,
      downloadsNotOnS3,
      bucketSourcesLeft,
      controlPlaneObjects,
      unexpectedExits,
    };
  } finally {
    stopping = true;
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
    await db?.destroy();
    await receiver.close();
    await testDb.drop().catch(() => undefined);
    await s3?.close();
    certs.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}
