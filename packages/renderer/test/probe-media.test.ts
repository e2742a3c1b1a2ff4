import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderError } from '../src/errors.ts';
import { parseProbeOutput, probeMedia } from '../src/probe-media.ts';
import { ffmpeg, makeVideo, tempDir } from './helpers/media.ts';

const video = (extra: Record<string, unknown> = {}) => ({
  codec_type: 'video',
  codec_name: 'h264',
  width: 1920,
  height: 1080,
  avg_frame_rate: '30000/1001',
  r_frame_rate: '30000/1001',
  ...extra,
});
const probe = (streams: unknown[], format: Record<string, unknown> = { duration: '12.5' }) => JSON.stringify({ streams, format });

describe('parseProbeOutput', () => {
  it('reads duration, size, frame rate and streams', () => {
    expect(parseProbeOutput(probe([video(), { codec_type: 'audio', codec_name: 'aac' }]))).toEqual({
      durationSeconds: 12.5,
      width: 1920,
      height: 1080,
      rotation: 0,
      fps: 30000 / 1001,
      hasVideo: true,
      hasAudio: true,
      videoCodec: 'h264',
      audioCodec: 'aac',
    });
  });

  it.each([
    [{ side_data_list: [{ side_data_type: 'Display Matrix', rotation: -90 }] }, 270, 1080, 1920],
    [{ side_data_list: [{ side_data_type: 'Display Matrix', rotation: 90 }] }, 90, 1080, 1920],
    [{ side_data_list: [{ side_data_type: 'Display Matrix', rotation: 180 }] }, 180, 1920, 1080],
    [{ tags: { rotate: '90' } }, 90, 1080, 1920],
    [{ tags: { rotate: '-270' } }, 90, 1080, 1920],
  ])('applies rotation %o', (extra, rotation, width, height) => {
    expect(parseProbeOutput(probe([video(extra)]))).toMatchObject({ rotation, width, height });
  });

  it('skips cover art and falls back to the stream duration and r_frame_rate', () => {
    const info = parseProbeOutput(
      probe(
        [
          { codec_type: 'video', codec_name: 'mjpeg', width: 600, height: 600, disposition: { attached_pic: 1 } },
          video({ duration: '3.2', avg_frame_rate: '0/0', r_frame_rate: '25/1' }),
        ],
        {},
      ),
    );
    expect(info).toMatchObject({ width: 1920, durationSeconds: 3.2, fps: 25, hasAudio: false, audioCodec: null });
  });

  it.each([
    ['not a container', JSON.stringify({ error: { code: -1094995529, string: 'Invalid data found when processing input' } }), 'source-unreadable'],
    ['truncated', JSON.stringify({ error: { code: -541478725, string: 'End of file' } }), 'source-unreadable'],
    ['audio only', probe([{ codec_type: 'audio', codec_name: 'mp3' }]), 'source-unreadable'],
    ['only cover art', probe([{ codec_type: 'video', width: 600, height: 600, disposition: { attached_pic: 1 } }]), 'source-unreadable'],
    ['a still image', probe([video()], { format_name: 'png_pipe' }), 'source-unreadable'],
    ['missing file', JSON.stringify({ error: { code: -2, string: 'No such file or directory' } }), 'ingest-failed'],
    ['permission denied', JSON.stringify({ error: { code: -13, string: 'Permission denied' } }), 'ingest-failed'],
    ['ffprobe crashed', '{"streams": [', 'ingest-failed'],
  ])('%s -> %s', (_name, json, code) => {
    expect(() => parseProbeOutput(json)).toThrow(expect.objectContaining({ code }));
  });
});

describe('probeMedia', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir()));
  afterAll(() => cleanup());

  it('probes a clip with speech', async () => {
    const file = await makeVideo(dir, 'a.mp4', { width: 160, height: 120, fps: 25, seconds: 1, audio: true });
    const info = await probeMedia(file);
    expect(info).toMatchObject({ width: 160, height: 120, fps: 25, rotation: 0, hasAudio: true, audioCodec: 'aac', videoCodec: 'h264' });
    expect(info.durationSeconds).toBeGreaterThan(0.9);
    expect(info.durationSeconds).toBeLessThan(1.2);
  });

  it('probes a rotated phone clip as portrait', async () => {
    const file = await makeVideo(dir, 'r.mp4', { width: 160, height: 90, fps: 30, seconds: 0.5, rotate: 270 });
    expect(await probeMedia(file)).toMatchObject({ width: 90, height: 160, hasAudio: false });
  });

  it('probes webm', async () => {
    const file = join(dir, 'v.webm');
    await ffmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=64x48:r=10:d=1', '-c:v', 'libvpx-vp9', '-deadline', 'realtime', file]);
    expect(await probeMedia(file)).toMatchObject({ width: 64, height: 48, fps: 10, videoCodec: 'vp9' });
  });

  it.each([
    ['text.mp4', 'just some notes\n', 'source-unreadable'],
    ['empty.mp4', '', 'source-unreadable'],
    ['speech.wav', null, 'source-unreadable'],
  ])('classifies %s as %s', async (name, content, code) => {
    const file = join(dir, name);
    if (content === null) await ffmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'sine=d=0.5', file]);
    else await writeFile(file, content);
    const err = await probeMedia(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe(code);
  });

  it('reports a missing or unreadable file as ingest-failed', async () => {
    await expect(probeMedia(join(dir, 'nope.mp4'))).rejects.toMatchObject({ code: 'ingest-failed' });
    const locked = join(dir, 'locked.mp4');
    await writeFile(locked, 'x');
    await chmod(locked, 0);
    // root reads anything: then the bytes decide (not media).
    await expect(probeMedia(locked)).rejects.toMatchObject({ code: process.getuid?.() === 0 ? 'source-unreadable' : 'ingest-failed' });
  });

  it('rejects with AbortError when aborted', async () => {
    const file = await makeVideo(dir, 'b.mp4', { width: 64, height: 48, fps: 10, seconds: 0.5 });
    const err = await probeMedia(file, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
  });
});
