import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectGpus } from '@captionfarm/agent';
import { runToEnd } from '@captionfarm/process';

const root = path.resolve(import.meta.dirname, '../../..');

describe('captionfarm agent --self-test (CPU path)', () => {
  // A 5 s job: the machine this runs on may be shared; the command's default is 10 s.
  it("reports the whisper build and model, NVENC or why not, x264 threads and slots, then one local job with each stage's realtime factor", async () => {
    const { stdout } = await runToEnd(path.join(root, 'node_modules/.bin/tsx'), {
      args: [path.join(root, 'apps/cli/src/main.ts'), 'agent', '--self-test', '--seconds', '5'],
      cwd: root,
      signal: AbortSignal.timeout(580_000),
    });
    const line = (key: string) => stdout.split('\n').find((l) => l.startsWith(`${key}:`)) ?? '';
    expect(line('whisper')).toMatch(/^whisper: +(CPU|CUDA) build \(whisper\.cpp \d+\.\d+\.\d+/);
    expect(stdout).toMatch(/device (CPU|GPU 0)/);
    // The model chooseModel picked from what is installed, where it was found, and why.
    expect(line('model')).toMatch(/^model: +[\w.-]+ \(\/\S*ggml-[\w.-]+\.bin\): (auto: |set by --model)/);
    if ((await detectGpus()).length === 0) {
      // This machine has no NVIDIA driver: the reason must say so, not just "no".
      expect(line('nvenc')).toMatch(/^nvenc: +missing: .*(Cannot load libcuda|no NVIDIA driver|built without h264_nvenc)/);
    }
    const cores = Number(/machine: +(\d+) cores/.exec(stdout)?.[1]);
    expect(cores).toBeGreaterThan(0);
    expect(line('x264')).toMatch(new RegExp(`^x264: +${cores} threads`));
    expect(Number(/^slots: +(\d+)/m.exec(stdout)?.[1])).toBeGreaterThanOrEqual(1);
    for (const stage of ['ingest', 'transcribe', 'render', 'upload', 'whole']) {
      const m = new RegExp(`^ +${stage} +([\\d.]+) s +([\\d.]+)x realtime`, 'm').exec(stdout);
      expect(m, `${stage} line in:\n${stdout}`).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0);
    }
    // The JFK sample has speech: whisper found words in it.
    expect(Number(/\((\d+) words\)/.exec(stdout)?.[1])).toBeGreaterThan(5);
  }, 600_000);
});
