import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEAP_MALLOC_TUNABLES } from '@captionfarm/process';
import { renderVideo } from '../src/render-video.ts';
import { blockPainter, makeVideo, tempDir } from './helpers/media.ts';

// A wrapper in front of the real ffmpeg notes the GLIBC_TUNABLES each run starts with. This file
// has its own module state, so FFMPEG_PATH is read fresh.
let dir: string;
let cleanup: () => Promise<void>;
let input: string;
const seen = (): Promise<string[]> => readFile(join(dir, 'tunables.log'), 'utf8').then((s) => s.trim().split('\n'));

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  await mkdir(join(dir, 'bin'));
  const wrapper = join(dir, 'bin', 'ffmpeg');
  await writeFile(wrapper, `#!/bin/sh\necho "$GLIBC_TUNABLES" >> '${join(dir, 'tunables.log')}'\nexec ffmpeg "$@"\n`);
  await chmod(wrapper, 0o755);
  process.env.FFMPEG_PATH = wrapper;
  input = await makeVideo(dir, 'in.mp4', { width: 160, height: 120, fps: 25, seconds: 1, audio: true });
});
afterAll(async () => {
  delete process.env.FFMPEG_PATH;
  delete process.env.GLIBC_TUNABLES;
  await cleanup();
});

describe("ffmpeg's environment", () => {
  it("runs every ffmpeg of a render with glibc's malloc taking frame-sized blocks from the heap, and an operator's own tunables after ours", async () => {
    const render = (output: string) =>
      renderVideo({ input, output: join(dir, output), painter: blockPainter({ width: 160, height: 120 }), format: 'mp4', quality: 'low', encoder: 'cpu' });
    await render('a.mp4');
    expect(HEAP_MALLOC_TUNABLES).toBe('glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864');
    const first = await seen();
    expect(first.length).toBeGreaterThan(0);
    for (const line of first) expect(line).toBe(HEAP_MALLOC_TUNABLES);

    process.env.GLIBC_TUNABLES = 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1048576';
    await render('b.mp4');
    const second = (await seen()).slice(first.length);
    expect(second.length).toBeGreaterThan(0);
    // glibc applies tunables left to right: the operator's come last, so theirs win.
    for (const line of second) expect(line).toBe(`${HEAP_MALLOC_TUNABLES}:glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1048576`);
  });
});
