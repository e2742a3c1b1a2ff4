import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess, runToEnd } from '@captionfarm/process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeVideo, tempDir } from './helpers/media.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

/** pids of running processes whose command line contains `needle`. */
async function pidsWith(needle: string): Promise<number[]> {
  return (await runToEnd('ps', { args: ['-eo', 'pid=,args='] })).stdout
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('child processes', () => {
  // Issue 11 item 10: after kill -9 of the server, its ffmpeg kept rendering as an orphan.
  it.skipIf(process.platform !== 'linux')('ffmpeg dies with a process that is killed (kill -9) in the middle of a render', async () => {
    // Long enough that the render is still running when we kill its parent.
    const input = await makeVideo(dir, 'long.mp4', { width: 640, height: 360, fps: 25, seconds: 60 });
    const output = join(dir, `orphan-${Date.now()}.mp4`);
    const script = join(dir, 'render.mts');
    const src = new URL('../src/index.ts', import.meta.url).pathname;
    const helpers = new URL('./helpers/media.ts', import.meta.url).pathname;
    await writeFile(
      script,
      `import { renderVideo } from ${JSON.stringify(src)};
       import { blockPainter } from ${JSON.stringify(helpers)};
       let told = false;
       await renderVideo({ input: ${JSON.stringify(input)}, output: ${JSON.stringify(output)}, painter: blockPainter({ width: 640, height: 360 }),
         format: 'mp4', quality: 'high', encoder: 'cpu',
         onProgress: (p) => { if (!told) { told = true; console.log('rendering'); } } });`,
    );
    // node itself with tsx's loader: the tsx CLI would put a wrapper process in between.
    let rendering = () => {};
    const parent = runProcess(process.execPath, { args: ['--import', 'tsx', script], onStdout: (d) => d.includes('rendering') && rendering() });
    await new Promise<void>((resolve, reject) => {
      rendering = resolve;
      parent.done.then((r) => reject(new Error(`the render exited early (${r.exitCode}): ${r.stderrTail}`)), reject);
    });
    // The partial output's name carries the output's name.
    const ffmpegs = async () => (await pidsWith(`orphan-`)).filter((pid) => pid !== parent.pid);
    expect((await ffmpegs()).length).toBeGreaterThanOrEqual(1);
    parent.kill('SIGKILL');
    await waitFor(async () => (await ffmpegs()).length === 0, 5000, 'the orphaned ffmpeg to die');
  });
});
