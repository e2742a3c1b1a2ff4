import { mkdtemp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa, type Subprocess } from 'execa';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Api } from '../../apps/control-plane/test/harness.ts';
import { ffmpegProcesses, makeClip, startFarm, submitUpload, terminal, testModelPath, watchJob, type Farm } from './e2e-harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
const main = path.join(root, 'apps/cli/src/main.ts');

let farm: Farm;
let clip: Buffer;
const procs: Subprocess[] = [];
// The words are given, so no recognition runs: what these tests interrupt is the render, and a
// 2-core machine under load spends its time there instead of on whisper (other suites cover it).
const words = 'Two agents, one job, and minutes charged exactly once.'.split(' ').map((text, i) => ({ text, start: 0.5 + i * 0.4, end: 0.8 + i * 0.4 }));
const given = { transcript: { language: 'en', words } };

/** Each test starts from an empty queue: a job it left behind (when it failed) is cancelled, its agents killed. */
function cleanUp(api: Api, ...ids: string[]): void {
  onTestFinished(async () => {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    for (const id of ids) if (!terminal((await api('GET', `/v1/automation-jobs/${id}`)).body)) await api('POST', `/v1/automation-jobs/${id}/cancel`);
  });
}

/** Whether the agent's JSON log has the line `msg` for this job. */
function logged(log: string, jobId: string, msg: string): boolean {
  return log.split('\n').some((l) => {
    try {
      const j = JSON.parse(l) as { jobId?: string; msg?: string };
      return j.jobId === jobId && j.msg === msg;
    } catch {
      return false;
    }
  });
}

/** A real `captionfarm agent` process. */
async function spawnAgent(name: string, env: Record<string, string> = {}): Promise<{ proc: Subprocess; workDir: string; log: () => string }> {
  const workDir = await mkdtemp(path.join(farm.dir, `${name}-`));
  const token = await farm.agentToken();
  // One process (node --import tsx), so a signal reaches the agent itself, not a wrapper. execa
  // itself, not the process module: the tests signal it and read its exit code as a ChildProcess.
  const proc = execa(
    process.execPath,
    [
      '--import',
      'tsx',
      main,
      'agent',
      '--control-plane',
      farm.url,
      '--token',
      token,
      '--name',
      name,
      '--model',
      testModelPath(),
      '--threads',
      '2',
      '--work-dir',
      workDir,
    ],
    // forceKillAfterDelay off: a SIGTERM must stay one SIGTERM (execa would add a SIGKILL 5 s later,
    // which reads as the second signal or a crash these tests tell apart).
    { stdin: 'ignore', buffer: false, reject: false, forceKillAfterDelay: false, env: { ...process.env, CAPTIONFARM_LOG: 'info', ...env }, cwd: root },
  );
  let log = '';
  // Its log: JSON lines on stdout (the process is not on a TTY), errors on stderr.
  proc.stdout.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (log += d.toString()));
  procs.push(proc);
  const deadline = Date.now() + 30_000;
  while (!log.includes('connected to')) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`agent ${name} did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, workDir, log: () => log };
}

async function nodes(): Promise<{ id: string; name: string; state: string; lastHeartbeatAt: string; currentJobs: { id: string }[] }[]> {
  return (await farm.admin('GET', '/admin/v1/nodes')).body.nodes;
}

beforeAll(async () => {
  farm = await startFarm({ opts: { agentTimings: { leaseMs: 3000 } } });
  clip = await readFile(
    await makeClip(farm.dir, 'long.mp4', { width: 720, height: 1280, seconds: 20, fps: 30, speech: 'Two agents, one job, and minutes charged exactly once.' }),
  );
}, 120_000);
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  await farm?.close();
});

describe('agent processes', () => {
  it('kill -9 of an agent mid-render: another agent finishes the job and minutes are charged once', async () => {
    const a = await spawnAgent('alpha');
    const { api, accountId } = await farm.account('pro', 'resilient');
    const before = await farm.balance(accountId);
    const created = await submitUpload(api, clip, given);
    cleanUp(api, created.id);
    await watchJob(api, created.id, (j) => (j.phase === 'rendering' && j.percent > 0) || terminal(j));
    const current = await api('GET', `/v1/automation-jobs/${created.id}`);
    expect(
      (await nodes()).find((n) => n.name === 'alpha')!.currentJobs.map((j) => j.id),
      `${JSON.stringify(current.body)}\n${a.log()}`,
    ).toEqual([created.id]);
    const b = await spawnAgent('bravo');
    a.proc.kill('SIGKILL');
    // alpha's ffmpeg dies with its parent's pipe; the lease expires and bravo takes the job over.
    const { job, seen } = await watchJob(api, created.id, terminal);
    expect(job.status, `${JSON.stringify(job)}\n${b.log()}`).toBe('succeeded');
    expect(seen.at(-1)!.status).toBe('succeeded');
    expect(logged(b.log(), created.id, 'job leased (attempt 2)')).toBe(true);
    // The log line follows the database by a moment.
    for (let i = 0; i < 50 && !logged(b.log(), created.id, 'job succeeded'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(logged(b.log(), created.id, 'job succeeded')).toBe(true);
    expect(await farm.balance(accountId)).toBe(before - 1);
    const ledger = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === created.id);
    expect(ledger.filter((l: { kind: string }) => l.kind === 'settle')).toHaveLength(1);
    expect(ledger.filter((l: { kind: string }) => l.kind === 'reserve')).toHaveLength(1);
    expect((await ffmpegProcesses(a.workDir)).length).toBe(0);
    b.proc.kill('SIGKILL');
  });

  it('admin drain stops leasing; undrain resumes; SIGTERM finishes the current job and exits 0; the probes say each', async () => {
    // Its probes on a free port (CAPTIONFARM_AGENT_HEALTH_LISTEN), found in its log.
    const c = await spawnAgent('charlie', { CAPTIONFARM_AGENT_HEALTH_LISTEN: '127.0.0.1:0' });
    const probes = /probes on (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(c.log())![1]!;
    const probe = async (path: string) => {
      const res = await fetch(`${probes}${path}`);
      return { status: res.status, state: ((await res.json()) as { state: string }).state };
    };
    /** Polls until the probe answers `want` (the drain and undrain events reach the agent a moment after the API call). */
    const probeUntil = async (path: string, want: { status: number; state: string }) => {
      let got = await probe(path);
      for (let i = 0; i < 100 && (got.status !== want.status || got.state !== want.state); i++) {
        await new Promise((r) => setTimeout(r, 100));
        got = await probe(path);
      }
      expect(got, path).toEqual(want);
    };
    await probeUntil('/readyz', { status: 200, state: 'leasing' });
    const node = (await nodes()).find((n) => n.name === 'charlie')!;
    expect((await farm.admin('POST', `/admin/v1/nodes/${node.id}/drain`)).status).toBe(200);
    expect((await nodes()).find((n) => n.id === node.id)!.state).toBe('draining');
    // Drained by an admin: alive, not ready.
    await probeUntil('/readyz', { status: 503, state: 'drained' });
    expect(await probe('/healthz')).toEqual({ status: 200, state: 'drained' });
    const { api } = await farm.account('pro', 'patient');
    const created = await submitUpload(api, clip, given);
    cleanUp(api, created.id);
    // The drained agent keeps heartbeating (every quarter lease): after two more heartbeats it has
    // had its chances to lease, and the job must still be waiting.
    const beat = async () => (await nodes()).find((n) => n.id === node.id)!.lastHeartbeatAt;
    const since = await beat();
    for (let seen = 0, last = since, end = Date.now() + 30_000; seen < 2; ) {
      if (Date.now() > end) throw new Error('the drained agent stopped heartbeating');
      await new Promise((r) => setTimeout(r, 100));
      const now = await beat();
      if (now !== last) [seen, last] = [seen + 1, now];
    }
    expect((await api('GET', `/v1/automation-jobs/${created.id}`)).body.status).toBe('queued');
    await farm.admin('POST', `/admin/v1/nodes/${node.id}/undrain`);
    await watchJob(api, created.id, (j) => j.phase === 'transcribing' || j.phase === 'rendering' || terminal(j));
    await probeUntil('/readyz', { status: 200, state: 'leasing' });
    // SIGTERM: finish this job, take no new one. The second job is created once the agent says it
    // drains: created before, it could be leased first (a free slot), and finishing it is right.
    c.proc.kill('SIGTERM');
    const exited = new Promise<number | null>((r) => c.proc.once('exit', (code) => r(code)));
    for (let i = 0; i < 100 && !c.log().includes('SIGTERM: draining'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(c.log()).toContain('SIGTERM: draining (finishing 1 job(s), taking no new ones)');
    // Draining its last job: still alive (no restart may kill the job), no longer ready.
    expect(await probe('/readyz')).toEqual({ status: 503, state: 'draining' });
    expect(await probe('/healthz')).toEqual({ status: 200, state: 'draining' });
    const second = await submitUpload(api, clip, given);
    cleanUp(api, second.id);
    // Still finishing the first job (a 20 s render) when the second came: it had its chance to take it.
    expect(c.proc.exitCode).toBeNull();
    const { job } = await watchJob(api, created.id, terminal);
    expect(job.status, c.log()).toBe('succeeded');
    expect(await exited).toBe(0);
    expect((await api('GET', `/v1/automation-jobs/${second.id}`)).body.status).toBe('queued');
    expect(logged(c.log(), second.id, 'job leased (attempt 1)'), c.log()).toBe(false);
  });

  it('a second SIGTERM aborts the running job and gives it back at once: another agent finishes it, charged once', async () => {
    const d = await spawnAgent('delta');
    const { api, accountId } = await farm.account('pro', 'interrupted');
    const before = await farm.balance(accountId);
    const created = await submitUpload(api, clip, given);
    cleanUp(api, created.id);
    await watchJob(api, created.id, (j) => (j.phase === 'rendering' && j.percent > 0) || terminal(j));
    const exited = new Promise<number | null>((r) => d.proc.once('exit', (code) => r(code)));
    d.proc.kill('SIGTERM');
    // The second signal must find the first one handled (draining), or it would count as the first.
    for (const end = Date.now() + 30_000; !d.log().includes('SIGTERM: draining'); await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > end || d.proc.exitCode !== null) throw new Error(`the agent did not start draining:\n${d.log()}`);
    }
    d.proc.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(d.log()).toContain('aborting current jobs');
    // Given back, not left to its lease: queued again with its progress cleared.
    const back = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
    expect(back, d.log()).toMatchObject({ status: 'queued', phase: 'queued', percent: null });
    expect((await ffmpegProcesses(d.workDir)).length).toBe(0);

    const e = await spawnAgent('echo');
    const { job } = await watchJob(api, created.id, terminal);
    expect(job.status, e.log()).toBe('succeeded');
    expect(logged(e.log(), created.id, 'job leased (attempt 2)'), e.log()).toBe(true);
    expect(await farm.balance(accountId)).toBe(before - 1);
    const ledger = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === created.id);
    expect(ledger.filter((l: { kind: string }) => l.kind === 'reserve')).toHaveLength(1);
    expect(ledger.filter((l: { kind: string }) => l.kind === 'settle')).toHaveLength(1);
    e.proc.kill('SIGKILL');
  });
});
