import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlobalFonts, createCanvas } from '@napi-rs/canvas';
import { registerCaptionFonts } from '@captionfarm/renderer';
import { BRAND_OTF, BRAND_TTF } from '../../packages/renderer/test/helpers/fonts.ts';
import type { Api } from '../../apps/control-plane/test/harness.ts';
import { makeClip, rawFrame, run, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

// Issue 16 through the public API and a real agent: a job styled with an uploaded font burns
// that font's glyphs; an overlay job's output has alpha and composites back into the burned
// video; emoji: "auto" burns the same pixels on every run.

let farm: Farm;
let api: Api;
let flat: Buffer;
let textured: Buffer;
let texturedPath: string;

const W = 960;
const H = 540;

beforeAll(async () => {
  farm = await startFarm();
  ({ api } = await farm.account('pro'));
  // A flat dark source for glyph comparisons, a moving test pattern for compositing.
  const flatPath = await makeClip(farm.dir, 'flat.mp4', { width: W, height: H, seconds: 2, video: `color=c=black:s=${W}x${H}:r=25:d=2`, silentAudio: true });
  flat = await readFile(flatPath);
  texturedPath = await makeClip(farm.dir, 'textured.mp4', { width: 640, height: 360, seconds: 2, silentAudio: true });
  textured = await readFile(texturedPath);
  await farm.startAgent();
}, 240_000);
afterAll(() => farm?.close());

/** POST /v1/fonts, PUT, complete: a ready font's id. */
async function uploadFont(file: string): Promise<string> {
  const bytes = await readFile(file);
  const created = await api('POST', '/v1/fonts', { fileName: path.basename(file), sizeBytes: bytes.length });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await fetch(created.body.uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': created.body.contentType } })).status).toBe(200);
  const done = await api('POST', `/v1/fonts/${created.body.fontId}/complete`);
  expect(done.body.status, JSON.stringify(done.body)).toBe('ready');
  return created.body.fontId;
}

/** Creates a job on an uploaded clip, waits for success, downloads the output. */
async function burn(source: Buffer, job: Record<string, unknown>, name: string): Promise<string> {
  const created = await submitUpload(api, source, job);
  const { job: done } = await watchJob(api, created.id, terminal);
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  const res = await fetch(done.downloadUrl);
  expect(res.status).toBe(200);
  const file = path.join(farm.dir, name);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

/** One frame as 8-bit luma. */
async function grayFrame(file: string, t: number, w: number, h: number): Promise<Uint8Array> {
  const out = await rawFrame(file, t, 'gray');
  expect(out.length).toBe(w * h);
  return out;
}

interface Mask {
  w: number;
  h: number;
  on: (x: number, y: number) => boolean;
}

/** The ink (luma over half) cropped to its bounding box. */
function inkMask(gray: Uint8Array, w: number, h: number): Mask {
  let [x0, y0, x1, y1] = [w, h, -1, -1];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (gray[y * w + x]! < 128) continue;
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
  }
  expect(x1, 'no ink at all').toBeGreaterThan(x0);
  return { w: x1 - x0 + 1, h: y1 - y0 + 1, on: (x, y) => x >= 0 && y >= 0 && x <= x1 - x0 && y <= y1 - y0 && gray[(y + y0) * w + x + x0]! >= 128 };
}

/** Intersection over union of two ink masks, best of the alignments within a pixel. */
function iou(a: Mask, b: Mask): number {
  let best = 0;
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) {
      let both = 0;
      let either = 0;
      for (let y = -1; y <= Math.max(a.h, b.h); y++) {
        for (let x = -1; x <= Math.max(a.w, b.w); x++) {
          const p = a.on(x, y);
          const q = b.on(x + dx, y + dy);
          if (p && q) both++;
          if (p || q) either++;
        }
      }
      best = Math.max(best, both / either);
    }
  }
  return best;
}

/** The word drawn white on black by Skia straight from a font file (or a family): the reference. */
function referenceMask(word: string, fontPx: number, font: { file: string } | { family: string; weight: number }): Mask {
  let css: string;
  if ('file' in font) {
    const alias = `ref-${createHash('sha1').update(font.file).digest('hex').slice(0, 12)}`;
    if (!GlobalFonts.has(alias)) GlobalFonts.registerFromPath(font.file, alias);
    css = `${fontPx}px "${alias}"`;
  } else {
    registerCaptionFonts();
    css = `${font.weight} ${fontPx}px "${font.family}"`;
  }
  const c = createCanvas(W, H);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, W, H);
  ctx.fillStyle = '#fff';
  ctx.font = css;
  ctx.fillText(word, 40, H / 2);
  const rgba = ctx.getImageData(0, 0, W, H).data;
  const gray = new Uint8Array(W * H);
  for (let i = 0; i < gray.length; i++) gray[i] = rgba[i * 4]!;
  return inkMask(gray, W, H);
}

const WORD = 'Handgloves';

describe('a job styled with an uploaded font', () => {
  // clean-subtitle is Inter 600 on a bar: the style keeps only the glyphs (no bar, no outline).
  const SIZE = 12;
  const fontPx = (SIZE / 100) * Math.min(W, H);

  it.each([
    ['TTF', BRAND_TTF],
    ['OTF (CFF outlines)', BRAND_OTF],
  ])(
    '%s: the burned glyphs are the font file’s, not the template’s family',
    async (_kind, file) => {
      const fontId = await uploadFont(file);
      const out = await burn(
        flat,
        {
          templateId: 'clean-subtitle',
          style: { font: { fontId, size: SIZE }, background: null, position: { y: 0.5 } },
          transcript: { language: 'en', words: [{ text: WORD, start: 0.1, end: 1.9 }] },
        },
        `font-${path.basename(file)}.mp4`,
      );
      const burned = inkMask(await grayFrame(out, 1.0, W, H), W, H);
      const same = iou(burned, referenceMask(WORD, fontPx, { file }));
      const template = iou(burned, referenceMask(WORD, fontPx, { family: 'Inter', weight: 600 }));
      console.log(
        `${path.basename(file)}: ink IoU with the uploaded font ${same.toFixed(3)}, with the template's ` +
          `Inter ${template.toFixed(3)}; ink ${burned.w}x${burned.h}`,
      );
      expect(same).toBeGreaterThan(0.8);
      expect(same - template).toBeGreaterThan(0.2);
    },
    300_000,
  );
});

describe('overlay output and emoji, through an agent', () => {
  const words = 'We love these brand new captions today'.split(' ').map((text, i) => ({ text, start: 0.1 + i * 0.25, end: 0.3 + i * 0.25 }));
  // Outline, soft shadow, a translucent word box and an emoji: the semi-transparent edges are where alpha goes wrong.
  const job = {
    templateId: 'karaoke',
    style: { emoji: 'auto', keywords: ['captions'], active: { box: { color: '#7C3AEDCC' } }, shadow: { color: '#00000099', blur: 0.2 } },
    transcript: { language: 'en', words },
  };
  let burned: string;

  beforeAll(async () => {
    burned = await burn(textured, job, 'burned.mp4');
  }, 300_000);

  /** PSNR of `overlay` laid over the source with ffmpeg's overlay filter, against the burned job. */
  async function compositePsnr(overlay: string): Promise<number> {
    const dec = overlay.endsWith('.webm') ? ['-c:v', 'libvpx-vp9'] : [];
    const { stderr } = await run('ffmpeg', [
      '-hide_banner',
      '-nostdin',
      '-i',
      texturedPath,
      ...dec,
      '-i',
      overlay,
      '-i',
      burned,
      '-filter_complex',
      '[0:v][1:v]overlay=format=yuv420[c];[c][2:v]psnr',
      '-f',
      'null',
      '-',
    ]);
    const m = /PSNR .*average:(\S+)/.exec(stderr);
    if (!m) throw new Error(stderr);
    return m[1] === 'inf' ? Infinity : Number(m[1]);
  }

  it.each([
    ['webm', 'vp9', /^yuva420p$/],
    // ProRes 4444 is 10-bit; Debian's ffmpeg 5.1 decodes it to 12-bit.
    ['mov', 'prores', /^yuva444p1[02]le$/],
  ] as const)(
    'overlay %s: %s with alpha (%s), the source size and frame count, composites into the burned output at >= 40 dB',
    async (format, codec, pixFmt) => {
      const overlay = await burn(textured, { ...job, format, overlay: true }, `overlay.${format}`);
      const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', '-of', 'json', overlay]);
      const streams = JSON.parse(stdout).streams as any[];
      expect(streams.filter((s) => s.codec_type === 'audio')).toHaveLength(0);
      const v = streams.find((s) => s.codec_type === 'video');
      expect(v).toMatchObject({ codec_name: codec, width: 640, height: 360, avg_frame_rate: '25/1', nb_read_frames: '50' });
      if (format === 'webm') expect(v.tags.alpha_mode ?? v.tags.ALPHA_MODE).toBe('1');
      else expect(v.profile).toBe('4444');
      const dec = format === 'webm' ? ['-c:v', 'libvpx-vp9'] : [];
      const shown = await run('ffmpeg', ['-hide_banner', ...dec, '-i', overlay, '-frames:v', '1', '-vf', 'showinfo', '-f', 'null', '-']);
      expect(/fmt:(\w+)/.exec(shown.stderr)![1]).toMatch(pixFmt);
      const db = await compositePsnr(overlay);
      console.log(`agent overlay ${format}: composite vs burned PSNR ${db.toFixed(2)} dB`);
      expect(db).toBeGreaterThanOrEqual(40);
    },
    300_000,
  );

  it('emoji "auto" burns the same frames on every run, and the emoji is there', async () => {
    const again = await burn(textured, job, 'burned-again.mp4');
    const frames = async (f: string) =>
      (await run('ffmpeg', ['-v', 'error', '-i', f, '-map', '0:v', '-f', 'framemd5', '-'])).stdout.split('\n').filter((l) => !l.startsWith('#'));
    const [a, b] = [await frames(burned), await frames(again)];
    expect(a.length).toBeGreaterThan(40);
    expect(b).toEqual(a);
    // And the emoji is really drawn: without it, the frames differ once "love" is spoken.
    const off = await frames(await burn(textured, { ...job, style: { ...job.style, emoji: 'off' } }, 'burned-no-emoji.mp4'));
    const differing = off.filter((l, i) => l !== a[i]).length;
    expect(differing).toBeGreaterThan(10);
  }, 300_000);
});
