import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import { getBuiltinTemplate, deriveTemplate } from '@captionfarm/captions';
import { createBandPainter } from '../src/paint/painter.ts';
import { runToEnd } from '@captionfarm/process';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { probeMedia } from '../src/probe-media.ts';
import { renderVideo, type OutputFrame } from '../src/render-video.ts';
import { RenderError } from '../src/errors.ts';
import { ffmpeg, ffprobeJson, makeVideo, psnrOfComposite, tempDir } from './helpers/media.ts';

// Transparent overlay output: only the captions, on transparent frames, for editors to composite.

let dir: string;
let cleanup: () => Promise<void>;
let source: string;

const words: Word[] = 'Captions for every editor out there today'
  .split(' ')
  .map((text, i) => ({ text, start: 0.1 + i * 0.25, end: 0.3 + i * 0.25, confidence: 1 }));
// Outline, soft shadow and a translucent box: semi-transparent edges are where alpha goes wrong.
const template = deriveTemplate(getBuiltinTemplate('karaoke')!, { active: { box: { color: '#7C3AEDCC' } }, shadow: { color: '#00000099', blur: 0.2 } });
const painter = (f: OutputFrame) => createBandPainter({ words, template, width: f.width, height: f.height, fps: f.fps });

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  source = await makeVideo(dir, 'source.mp4', { width: 640, height: 360, fps: 25, seconds: 2, audio: true });
});
afterAll(() => cleanup());

/** The pixel format ffmpeg decodes to (libvpx for VP9, which keeps the alpha plane). */
async function decodedPixFmt(path: string): Promise<string> {
  const dec = path.endsWith('.webm') ? ['-c:v', 'libvpx-vp9'] : [];
  const stderr = await ffmpeg(['-loglevel', 'info', ...dec, '-i', path, '-frames:v', '1', '-vf', 'showinfo', '-f', 'null', '-']);
  return /fmt:(\w+)/.exec(stderr)![1]!;
}

describe.each([
  ['webm', 'vp9', 'yuva420p'],
  ['mov', 'prores', 'yuva444p10le'],
] as const)('overlay %s', (format, codec, pixFmt) => {
  let overlay: string;
  let burned: string;

  beforeAll(async () => {
    overlay = join(dir, `overlay.${format}`);
    burned = join(dir, `burned-for-${format}.mp4`);
    await renderVideo({ input: source, output: overlay, painter, format, quality: 'high', encoder: 'cpu', overlay: true });
    await renderVideo({ input: source, output: burned, painter, format: 'mp4', quality: 'high', encoder: 'cpu' });
  });

  it(`has an alpha channel (${pixFmt}), the source's size, frame rate and duration, and no audio`, async () => {
    const probe = await ffprobeJson(overlay);
    const video = probe.streams.find((s: any) => s.codec_type === 'video');
    expect(probe.streams.filter((s: any) => s.codec_type === 'audio')).toHaveLength(0);
    expect(video).toMatchObject({ codec_name: codec, width: 640, height: 360, avg_frame_rate: '25/1' });
    if (format === 'webm') expect(video.tags.alpha_mode ?? video.tags.ALPHA_MODE).toBe('1');
    else expect(video.profile).toBe('4444');
    expect(await decodedPixFmt(overlay)).toMatch(/^yuva/);
    const src = await probeMedia(source);
    expect((await probeMedia(overlay)).durationSeconds).toBeCloseTo(src.durationSeconds, 1);
    const frames = await ffprobeJson(overlay, ['-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames']);
    expect(Number(frames.streams[0].nb_read_frames)).toBe(50);
  });

  it('is transparent outside the captions and opaque on them', async () => {
    const dec = format === 'webm' ? ['-c:v', 'libvpx-vp9'] : [];
    const { stdout: rgba } = await runToEnd(ffmpegPaths().ffmpeg, {
      args: ['-v', 'error', ...dec, '-ss', '1.5', '-i', overlay, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgba', '-'],
      encoding: 'buffer',
    });
    let opaque = 0;
    let clear = 0;
    for (let i = 3; i < rgba.length; i += 4) {
      if (rgba[i]! >= 250) opaque++;
      else if (rgba[i]! <= 5) clear++;
    }
    const n = rgba.length / 4;
    expect(clear / n).toBeGreaterThan(0.8);
    expect(opaque).toBeGreaterThan(500);
  });

  it('composited over the source with ffmpeg overlay, matches the burned render (PSNR >= 40 dB)', async () => {
    const db = await psnrOfComposite(source, overlay, burned);
    console.log(`overlay ${format}: composite vs burned PSNR ${db.toFixed(2)} dB`);
    expect(db).toBeGreaterThanOrEqual(40);
  });
});

describe('mov', () => {
  it('is refused without overlay', async () => {
    await expect(renderVideo({ input: source, output: join(dir, 'x.mov'), painter, format: 'mov', quality: 'high', encoder: 'cpu' })).rejects.toBeInstanceOf(
      RenderError,
    );
  });
});
