import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nvencAvailable } from '../src/detect-nvenc.ts';
import type { RenderError } from '../src/errors.ts';
import { renderRenditions } from '../src/render-renditions.ts';
import { renderVideo } from '../src/render-video.ts';
import { blockPainter, ffprobeJson, frameAt, makeVideo, near, tempDir } from './helpers/media.ts';

// No GPU here: an ffmpeg wrapper plays a machine whose NVENC passes the trial encode but then
// refuses the real session (as consumer cards do past their session limit). Everything else is
// the real ffmpeg. This file has its own module state, so FFMPEG_PATH is read fresh.
const FAKE_FFMPEG = `#!/bin/sh
case "$*" in
  *-encoders*) echo " V....D h264_nvenc           NVIDIA NVENC H.264 encoder (codec h264)"; exit 0 ;;
  *lavfi*h264_nvenc*) exit 0 ;;
  *h264_nvenc*) echo "[h264_nvenc @ 0x1] OpenEncodeSessionEx failed: out of memory (10)" >&2; exit 1 ;;
esac
exec ffmpeg "$@"
`;

let dir: string;
let cleanup: () => Promise<void>;
let input: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  await mkdir(join(dir, 'bin'));
  const fake = join(dir, 'bin', 'ffmpeg');
  await writeFile(fake, FAKE_FFMPEG);
  await chmod(fake, 0o755);
  process.env.FFMPEG_PATH = fake;
  input = await makeVideo(dir, 'in.mp4', { width: 160, height: 120, fps: 25, seconds: 1, audio: true });
});
afterAll(async () => {
  delete process.env.FFMPEG_PATH;
  await cleanup();
});

describe('NVENC', () => {
  it('is detected by listing plus a trial encode', async () => {
    expect(await nvencAvailable()).toBe(true);
  });

  it("falls back to CPU under 'auto' when the NVENC session fails, with progress still only growing", async () => {
    const out = join(dir, 'auto.mp4');
    const progress: number[] = [];
    const result = await renderVideo({
      input,
      output: out,
      painter: blockPainter({ width: 160, height: 120 }),
      format: 'mp4',
      quality: 'medium',
      onProgress: (p) => progress.push(p),
    });
    expect(result.encoder).toBe('cpu');
    const probe = await ffprobeJson(out);
    expect(probe.streams.map((s: any) => s.codec_name)).toEqual(['h264', 'aac']);
    expect(progress.at(-1)).toBe(100);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
  });

  it('replays a caption stream for the CPU attempt: the parts the NVENC attempt took are not lost', async () => {
    const out = join(dir, 'streamed.mp4');
    const painter = blockPainter({ width: 160, height: 120 });
    let asked = 0;
    // Red is final first (until 0.9 s), then everything (green from 1.0 s).
    const parts = [
      { painter, until: 0.9 },
      { painter, until: Infinity },
    ];
    const result = await renderVideo({
      input,
      output: out,
      captionStream: () => ({ band: painter.band, next: async () => parts[asked++]! }),
      format: 'mp4',
      quality: 'medium',
    });
    expect(result.encoder).toBe('cpu');
    // Each part was asked of the stream once, whatever the failed attempt had taken.
    expect(asked).toBe(2);
    const mid = (await frameAt(out, 0.6)).rgb(80, 90);
    const late = (await frameAt(out, 0.96)).rgb(80, 90);
    expect(near(mid, [255, 0, 0]), `red at 0.6 s: ${mid}`).toBe(true);
    expect(near(late, [255, 0, 0]), `still red at 0.96 s: ${late}`).toBe(true);
  });

  it('redoes the whole run of several renditions on the CPU when its NVENC session fails', async () => {
    const outs = [join(dir, 'r0.mp4'), join(dir, 'r1.webm'), join(dir, 'r2.mp4')];
    const results = await renderRenditions({
      input,
      quality: 'low',
      renditions: [
        { output: outs[0]!, format: 'mp4', painter: blockPainter({ width: 160, height: 120 }) },
        { output: outs[1]!, format: 'webm', resolution: { width: 120, height: 120 }, painter: blockPainter({ width: 120, height: 120 }) },
        { output: outs[2]!, format: 'mp4', resolution: { width: 64, height: 120 }, painter: null },
      ],
    });
    expect(results.map((r) => [r.width, r.height, r.encoder])).toEqual([
      [160, 120, 'cpu'],
      [120, 120, 'cpu'],
      [64, 120, 'cpu'],
    ]);
    for (const out of outs) expect((await ffprobeJson(out)).streams).toHaveLength(2);
    // The red caption of the first rendition survived the retry.
    expect(near((await frameAt(outs[0]!, 0.6)).rgb(80, 90), [255, 0, 0])).toBe(true);
  });

  it("fails with render-failed and ffmpeg's reason when 'nvenc' is forced", async () => {
    const err = await renderVideo({
      input,
      output: join(dir, 'forced.mp4'),
      painter: blockPainter({ width: 160, height: 120 }),
      format: 'mp4',
      quality: 'medium',
      encoder: 'nvenc',
    }).catch((e: unknown) => e);
    expect((err as RenderError).code).toBe('render-failed');
    expect((err as RenderError).message).toContain('OpenEncodeSessionEx failed');
  });

  it('is never used for webm (no VP9 NVENC encoder)', async () => {
    const result = await renderVideo({
      input,
      output: join(dir, 'a.webm'),
      painter: blockPainter({ width: 160, height: 120 }),
      format: 'webm',
      quality: 'low',
    });
    expect(result.encoder).toBe('cpu');
  });
});
