import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderError } from '../src/errors.ts';
import { renderVideo } from '../src/render-video.ts';
import { blockPainter, makeVideo, tempDir } from './helpers/media.ts';
import { mountTinyDisk } from './helpers/tiny-disk.ts';

// Issue 11 item 15: a render that hit ENOSPC said only "ffmpeg failed (exit 1)".
// A real small file system (tmpfs) for the output: mounting needs root; without it this skips
// and says why, except on CI, where it fails.
const disk = mountTinyDisk('64k');

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(async () => {
  await cleanup();
  disk.unmount();
});

describe.skipIf(disk.missing)(`a render onto a full disk${disk.missing ? ` - skipped: ${disk.missing}` : ''}`, () => {
  it('fails with render-failed saying the disk is full, and leaves no partial output', async () => {
    const mountPoint = disk.path!;
    const input = await makeVideo(dir, 'noisy.mp4', { width: 640, height: 360, fps: 25, seconds: 3 });
    const err = await renderVideo({
      input,
      output: join(mountPoint, 'out.mp4'),
      painter: blockPainter({ width: 640, height: 360 }),
      format: 'mp4',
      quality: 'high',
      encoder: 'cpu',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe('render-failed');
    expect((err as RenderError).message.split('\n')[0]).toMatch(
      /^ffmpeg (failed \(exit \d+\)|finished but its output is not readable): the disk is full \(\d+ bytes free in .*\); free space on the agent and retry$/,
    );
    expect(readdirSync(mountPoint)).toEqual([]);
  });
});
