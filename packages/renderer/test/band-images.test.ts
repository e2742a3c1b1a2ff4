import { describe, expect, it } from 'vitest';
import { createCanvas } from '@napi-rs/canvas';
import type { Word } from '@captionfarm/contracts';
import { builtinTemplates, deriveTemplate, getBuiltinTemplate, type Template } from '@captionfarm/captions';
import { bandImages } from '../src/band-images.ts';
import { YuvaBand } from '../src/band-yuva.ts';
import { createBandPainter } from '../src/paint/index.ts';
import { planCaptionFrames } from '../src/plan-caption-frames.ts';

// Uneven word lengths and gaps, an emoji word ("sun") and a pause long enough to empty the band.
const TEXT = 'The North Wind and the sun were disputing which was the stronger when a traveler came along wrapped in a warm cloak';
const words: Word[] = TEXT.split(' ').map((text, i) => {
  const start = i * 0.37 + (i > 11 ? 2.5 : 0) + (i % 3) * 0.05;
  return { text, start, end: start + 0.2 + (text.length % 4) * 0.04, confidence: 1 };
});
const duration = words.at(-1)!.end + 0.5;

const karaoke = getBuiltinTemplate('karaoke')!;
const extra: [string, Template][] = [
  ['slide-up page, fading words, emoji', deriveTemplate(karaoke, { animation: { page: 'slide-up', word: 'fade' }, emoji: 'auto' })],
  ['popping words on a background', deriveTemplate(getBuiltinTemplate('word-pop')!, { background: { color: '#000000AA' } })],
  [
    'glow, shadow, outline, box',
    deriveTemplate(getBuiltinTemplate('boxed-word')!, { glow: { color: '#00FFFF', blur: 0.3 }, shadow: { color: '#000000CC', blur: 0.2 } }),
  ],
];
const cases: [string, Template][] = [...builtinTemplates.map((t): [string, Template] => [t.id, t]), ...extra];

/** The band at t painted and read back whole: what every image sent to ffmpeg must equal. */
function fullImage(painter: ReturnType<typeof createBandPainter>, t: number): Buffer {
  const { width, height } = painter.band;
  const ctx = createCanvas(width, height).getContext('2d');
  painter.paint(ctx, t);
  const d = ctx.getImageData(0, 0, width, height).data;
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

describe('bandImages: only the changed part is read back, and every image equals a whole repaint', () => {
  it.each(cases)('%s', (_name, template) => {
    const painter = createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 });
    const frames = planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds: duration, fps: 30 });
    expect(frames.length).toBeGreaterThan(template.id === 'clean-subtitle' ? 3 : 20);
    const reference = createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 });
    let i = 0;
    let partial = 0;
    let previous: number | null = null;
    for (const image of bandImages(painter, frames)) {
      const frame = frames[i++]!;
      const want = fullImage(reference, frame.paintAt);
      // Not toEqual on 0.7 MB: the first differing pixel says where the change rect fell short.
      const at = want.equals(image) ? -1 : want.findIndex((v, k) => v !== image[k]);
      expect({ t: frame.paintAt, firstDifferentPixel: at < 0 ? null : at >> 2 }).toEqual({ t: frame.paintAt, firstDifferentPixel: null });
      const r = reference.changed!(previous, frame.paintAt);
      if (r && r.width * r.height < painter.band.width * painter.band.height) partial++;
      previous = frame.paintAt;
    }
    expect(i).toBe(frames.length);
    // Without partial reads there would be nothing to test here.
    if (template.animation.word !== 'none' || template.animation.active !== 'none') expect(partial).toBeGreaterThan(frames.length / 2);
  });

  // Glowing words and fading words at rest keep their sprite while their look stays (neon's), and
  // spare sprites are reused for the next page's words: a painter that has painted the whole clip
  // must still paint each image as one that never saw a frame before.
  it.each(['neon', 'cinematic'])('%s: kept and reused sprites paint what a fresh painter paints', (id) => {
    const template = getBuiltinTemplate(id)!;
    const painter = createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 });
    const frames = planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds: duration, fps: 30 });
    let i = 0;
    for (const image of bandImages(painter, frames)) {
      const t = frames[i++]!.paintAt;
      // Every 3rd image: a fresh painter lays the captions out again, which costs time.
      if (i % 3 !== 0) continue;
      const fresh = fullImage(createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 }), t);
      const at = fresh.equals(image) ? -1 : fresh.findIndex((v, k) => v !== image[k]);
      expect({ t, firstDifferentPixel: at < 0 ? null : at >> 2 }).toEqual({ t, firstDifferentPixel: null });
    }
    expect(i).toBe(frames.length);
  });

  // As yuva420p, parts are read back whole 2x2 blocks larger: each image must still be the
  // conversion of a whole repaint.
  it.each(cases)('%s, as yuva420p', (_name, template) => {
    const painter = createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 });
    const frames = planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds: duration, fps: 30 });
    const reference = createBandPainter({ words, template, width: 1080, height: 1920, fps: 30 });
    const { width, height } = painter.band;
    let i = 0;
    for (const image of bandImages(painter, frames, 'yuva420p')) {
      const frame = frames[i++]!;
      const want = new YuvaBand(width, height);
      want.patch(fullImage(reference, frame.paintAt), { x: 0, y: 0, width, height });
      const at = want.image.equals(image) ? -1 : want.image.findIndex((v, k) => v !== image[k]);
      expect({ t: frame.paintAt, firstDifferentByte: at < 0 ? null : at }).toEqual({ t: frame.paintAt, firstDifferentByte: null });
    }
    expect(i).toBe(frames.length);
  });

  it('reads back the whole band for a painter that cannot tell what changed', () => {
    const base = createBandPainter({ words, template: karaoke, width: 1080, height: 1920, fps: 30 });
    const plain = { band: base.band, keyAt: (t: number) => base.keyAt(t), paint: base.paint.bind(base) };
    const frames = planCaptionFrames({ keyAt: plain.keyAt, durationSeconds: duration, fps: 30 });
    let i = 0;
    for (const image of bandImages(plain, frames)) expect(image.equals(fullImage(base, frames[i++]!.paintAt))).toBe(true);
    expect(i).toBe(frames.length);
  });
});
