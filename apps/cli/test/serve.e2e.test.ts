import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@captionfarm/sdk';
import { runToEnd } from '@captionfarm/process';
import { execa, type ResultPromise } from 'execa';
import { makeClip, testModelPath } from '../../../agent/test/e2e-harness.ts';

// `npm start` exactly as the README's first line runs it (npm -> node apps/cli/bin/captionfarm.js serve): the
// embedded default answers, its in-process agent burns a job, the admin CLI works with no token
// given, and SIGTERM stops everything (no whisper-server or ffmpeg left behind).

const root = path.resolve(import.meta.dirname, '../../..');

let dir: string;
let proc: ResultPromise;
let log = '';
let url: string;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** Live processes whose command line mentions `needle`. */
async function processesMentioning(needle: string): Promise<string[]> {
  const { stdout } = await runToEnd('ps', { args: ['-eo', 'pid=,args='] });
  return stdout.split('\n').filter((l) => l.includes(needle) && !l.includes(' ps '));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-serve-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // execa itself, not the process module: npm must lead a process group of its own (detached), and
  // outlive nothing but this test (afterAll kills the group).
  proc = execa('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), CAPTIONFARM_DATA_DIR: path.join(dir, 'data'), CAPTIONFARM_WHISPER_MODEL: testModelPath() },
    stdin: 'ignore',
    buffer: false,
    reject: false,
    detached: true, // its own process group, so the test can check every process of it
  });
  proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const end = Date.now() + 90_000;
  while (!log.includes('embedded agent: node')) {
    if (Date.now() > end || proc.exitCode !== null) throw new Error(`npm start did not come up:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);
afterAll(async () => {
  try {
    if (proc?.pid) process.kill(-proc.pid, 'SIGKILL'); // whatever of the group is left, if a test failed
  } catch {
    /* the group is gone: the normal case */
  }
  await rm(dir, { recursive: true, force: true });
});

describe('npm start (captionfarm serve, the embedded default)', () => {
  it('serves the API, runs a job on its embedded agent, and the admin CLI needs no token', async () => {
    expect(log).toContain(`listening on ${url}`);
    // npm start runs on the Node the project pins (node_modules/.bin/node), a supported LTS
    // whatever node the machine has (Node 20's support ended in April 2026).
    const major = Number(/node: v(\d+)\./.exec(log)?.[1]);
    expect(major, log).toBeGreaterThanOrEqual(22);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(existsSync(path.join(dir, 'data', 'secrets.json'))).toBe(true);

    const env = { ...process.env, CAPTIONFARM_URL: url, CAPTIONFARM_DATA_DIR: path.join(dir, 'data'), CAPTIONFARM_ADMIN_TOKEN: '' };
    const cli = (...args: string[]) =>
      runToEnd(process.execPath, { args: ['--import', 'tsx', path.join(root, 'apps/cli/src/main.ts'), ...args], env, cwd: root });
    const account = JSON.parse((await cli('admin', 'accounts', 'create', '--name', 'Me', '--plan', 'starter', '--json')).stdout) as { id: string };
    const { key } = JSON.parse((await cli('admin', 'keys', 'create', '--account', account.id, '--json')).stdout) as { key: string };
    const nodes = JSON.parse((await cli('admin', 'nodes', 'list', '--json')).stdout) as { name: string; state: string }[];
    expect(nodes).toEqual([expect.objectContaining({ name: 'embedded', state: 'online' })]);

    const client = createClient({ baseUrl: url, apiKey: key });
    const clip = await makeClip(dir, 'talk.mp4', { width: 320, height: 568, seconds: 3, speech: 'Served by npm start.' });
    const { uploadId } = await client.uploadFile(clip);
    const created = await client.createJob({ uploadId, templateId: 'karaoke', language: 'en' });
    const job = await client.waitForJob(created.id, { poll: { initialDelayMs: 200, maxDelayMs: 1000 } });
    expect(job.status, `${JSON.stringify(job)}\n${log}`).toBe('succeeded');
    expect((await fetch(job.downloadUrl!)).status).toBe(200);
  });

  it('SIGTERM shuts everything down: a clean shutdown, the port closed, no child process left', async () => {
    const pgid = proc.pid!;
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => proc.once('exit', (code, signal) => r({ code, signal })));
    // To the whole group, as a terminal's Ctrl-C or a service manager's stop does.
    process.kill(-pgid, 'SIGTERM');
    // npm ends itself by the signal (its way); serve's own clean shutdown shows in its log.
    const { code, signal } = await exited;
    expect(code === 0 || signal === 'SIGTERM', `exit ${code} / ${signal}`).toBe(true);
    // npm, tsx, node, whisper-server and any ffmpeg all ran in the group it started: none is left.
    const end = Date.now() + 10_000;
    let left: string[] = [];
    do {
      const { stdout } = await runToEnd('ps', { args: ['-eo', 'pgid=,pid=,args='] });
      left = stdout.split('\n').filter((l) => l.trim().split(/\s+/)[0] === String(pgid));
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < end);
    expect(left, left.join('\n')).toEqual([]);
    expect(log).toContain('SIGTERM: shutting down');
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    expect(await processesMentioning(path.join(dir, 'data'))).toEqual([]);
  });
});
