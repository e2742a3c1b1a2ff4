import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProcess } from '@captionfarm/process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane, loadConfig, type ControlPlane } from '../../apps/control-plane/src/index.ts';
import { createAgent } from '../src/agent.ts';
import { jobDirPrefix, sweepWorkDir } from '../src/work-dir.ts';

// Issue 11 item 9: each killed attempt left its work dir (351 MB in 12 dirs after about 10 kills).
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cf-workdir-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A process that makes a job dir the way the pipeline does, fills it, and is then killed -9. */
async function killedAttempt(workDir: string, jobId: string): Promise<string> {
  const script = path.join(root, `attempt-${jobId}.mts`);
  const src = new URL('../src/work-dir.ts', import.meta.url).pathname;
  await writeFile(
    script,
    `import { mkdtemp, writeFile } from 'node:fs/promises';
     import path from 'node:path';
     import { jobDirPrefix } from ${JSON.stringify(src)};
     const dir = await mkdtemp(path.join(${JSON.stringify(workDir)}, jobDirPrefix(${JSON.stringify(jobId)})));
     await writeFile(path.join(dir, 'source'), Buffer.alloc(100_000));
     console.log(dir);
     setInterval(() => {}, 1000);`,
  );
  let printed = (_: string) => {};
  const child = runProcess(process.execPath, { args: ['--import', 'tsx', script], onStdout: (d) => printed(d) });
  const dir = await new Promise<string>((resolve) => (printed = (d) => resolve(d.trim())));
  child.kill('SIGKILL');
  await child.done;
  return path.basename(dir);
}

describe('agent work dirs', () => {
  it("the sweep removes dirs of killed attempts and of our ended jobs, never a running job's or a live agent's", async () => {
    const workDir = path.join(root, 'sweep');
    await mkdir(workDir);
    const killed = await killedAttempt(workDir, 'aaaaaaaa-0000-4000-8000-000000000001');
    const legacy = 'job-bbbbbbbb-Xk2PqA'; // made before dirs carried their pid
    const ourRunning = `${jobDirPrefix('cccccccc-0000-4000-8000-000000000003')}AbCdEf`;
    const ourEnded = `${jobDirPrefix('dddddddd-0000-4000-8000-000000000004')}AbCdEf`;
    const other = runProcess('sleep', { args: ['60'] });
    const otherLive = `job-eeeeeeee-p${other.pid}-AbCdEf`;
    try {
      for (const d of [legacy, ourRunning, ourEnded, otherLive, 'models']) await mkdir(path.join(workDir, d));
      expect(existsSync(path.join(workDir, killed, 'source'))).toBe(true);
      const removed = await sweepWorkDir(workDir, ['cccccccc-0000-4000-8000-000000000003']);
      expect(removed.sort()).toEqual([killed, legacy, ourEnded].sort());
      expect((await readdir(workDir)).sort()).toEqual([ourRunning, otherLive, 'models'].sort());
    } finally {
      other.kill('SIGKILL');
      await other.done;
    }
  });

  it('an agent sweeps its work dir when it starts', async () => {
    const dataDir = path.join(root, 'cp');
    const workDir = path.join(root, 'agent');
    await mkdir(workDir);
    const killed = await killedAttempt(workDir, 'ffffffff-0000-4000-8000-000000000006');
    let cp: ControlPlane | undefined;
    const agent = { close: async () => undefined } as { close(): Promise<void> };
    try {
      cp = await createControlPlane(loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0' }));
      const url = await cp.listen(0, '127.0.0.1');
      const { token } = await cp.services.agents.createToken('sweeper');
      const a = createAgent({ controlPlaneUrl: url, token, workDir, transcriber: { transcribe: () => Promise.reject(new Error('unused')) } });
      agent.close = () => a.close();
      expect(await readdir(workDir)).toEqual([killed]);
      await a.start();
      expect(await readdir(workDir)).toEqual([]);
    } finally {
      await agent.close();
      await cp?.close();
    }
  });
});
