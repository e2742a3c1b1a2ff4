import { describe, expect, it } from 'vitest';
import { createCanvas, loadImage, type Canvas } from '@napi-rs/canvas';
import { safeAreaZones, type SafeAreaName, type TimedBox, type Word } from '@captionfarm/contracts';
import { deriveTemplate, getBuiltinTemplate, type Rect, type Template } from '@captionfarm/captions';
import { bandForAnyWordsOf, createBandPainter } from '../src/paint/index.ts';
import { paintHookTitle } from '../src/paint/hook-title.ts';

// Issue 43: captions (and the hook title) keep out of an app's interface zones, and with
// placement 'auto' off faces, checked on the pixels the real painter paints.

const STORY =
  'The North Wind and the Sun were disputing which was the stronger, when a traveler came along wrapped in a warm cloak. ' +
  'Money and fire! They agreed that the one who first succeeded in making the traveler take his cloak off should be ' +
  'considered stronger, and won 100 dollars with love. Pneumonoultramicroscopicsilicovolcanoconiosis is a long word.';

function speak(text: string, step = 0.4): Word[] {
  return text.split(' ').map((t, i) => ({ text: t, start: i * step, end: i * step + step * 0.9, confidence: 1 }));
}
const words = speak(STORY);

const tpl = (id: string): Template => getBuiltinTemplate(id)!;
/** The looks the issue names: karaoke, a boxed one, one with emoji and a bounce, and pops (word, active, page), glows. */
const LOOKS: Template[] = [
  tpl('karaoke'),
  tpl('boxed-word'),
  deriveTemplate(tpl('bounce'), { emoji: 'auto' }),
  deriveTemplate(tpl('word-pop'), { emoji: 'auto' }),
  tpl('keyword-emphasis'),
  tpl('neon'),
  tpl('typewriter'),
];

type Painter = ReturnType<typeof createBandPainter>;

/** Times worth painting on a page: just after it appears, and each word's pop (0.08 s) and bounce (0.105 s) at their peaks. */
function timesOf(p: Painter, page: number): number[] {
  const pg = p.layout.pages[page]!;
  const out = [pg.start + 0.04, pg.start + 0.09];
  for (const ui of pg.units) {
    const u = p.layout.units[ui]!;
    for (const dt of [0.08, 0.105]) if (u.start + dt < pg.end) out.push(u.start + dt);
  }
  return out;
}

/** One band-sized canvas per painter, cleared and painted again for each time. */
const canvases = new WeakMap<Painter, Canvas>();

/** Painted pixels (alpha > 0) of the band at time t that fall inside any of `boxes` (frame pixels); only those parts are read back. */
function paintedInside(p: Painter, t: number, boxes: readonly Rect[]): number {
  const { band } = p;
  let c = canvases.get(p);
  if (!c) {
    c = createCanvas(band.width, band.height);
    canvases.set(p, c);
  }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, band.width, band.height);
  p.paint(ctx, t);
  let n = 0;
  for (const b of boxes) {
    const x0 = Math.max(0, Math.floor(b.x) - band.x);
    const y0 = Math.max(0, Math.floor(b.y) - band.y);
    const x1 = Math.min(band.width, Math.ceil(b.x + b.width) - band.x);
    const y1 = Math.min(band.height, Math.ceil(b.y + b.height) - band.y);
    if (x1 <= x0 || y1 <= y0) continue;
    const data = ctx.getImageData(x0, y0, x1 - x0, y1 - y0).data;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
  }
  return n;
}

/** Every painted pixel of the band at time t, counted (to know the frame was not blank). */
function painted(p: Painter, t: number): number {
  return paintedInside(p, t, [p.band]);
}

const CASES: [Exclude<SafeAreaName, 'none'>, number, number][] = [
  ['tiktok', 1080, 1920],
  ['tiktok', 720, 1280],
  ['tiktok', 1920, 1080],
  ['reels', 1080, 1920],
  ['shorts', 1080, 1920],
];

describe('safeArea: no caption pixel inside the zones', () => {
  it.each(CASES)('%s at %sx%s: every look, pages and animation peaks', (app, width, height) => {
    const zones = safeAreaZones(app, { width, height });
    for (const template of LOOKS) {
      const p = createBandPainter({ words, template, width, height, safeArea: app });
      const n = p.layout.pages.length;
      const pages = [...new Set([0, 1, 2, 3, Math.floor(n / 2), n - 2, n - 1])].filter((i) => i >= 0 && i < n);
      for (const i of pages) {
        for (const t of timesOf(p, i)) expect(paintedInside(p, t, zones), `${template.id} page ${i} t=${t.toFixed(2)}`).toBe(0);
      }
      expect(painted(p, p.layout.pages[1]!.start + 0.2), template.id).toBeGreaterThan(0);
      if (template.emoji === 'auto') expect(p.layout.pages.some((pg) => pg.emoji !== null)).toBe(true);
      // Centred on the frame.
      const first = p.layout.pages[0]!.box;
      expect(Math.abs(first.x + first.width / 2 - width / 2)).toBeLessThan(0.02 * width);
    }
  });

  it("without it, TikTok's button column gets painted (the check above can fail)", () => {
    const zones = safeAreaZones('tiktok', { width: 1080, height: 1920 });
    let inside = 0;
    for (const template of LOOKS) {
      const p = createBandPainter({ words, template, width: 1080, height: 1920 });
      for (const [i] of p.layout.pages.entries()) for (const t of timesOf(p, i).slice(0, 3)) inside += paintedInside(p, t, zones);
    }
    expect(inside).toBeGreaterThan(0);
  });

  it("the band before the words are known, with tiktok, holds the words' own (a render that starts early keeps it)", () => {
    for (const template of LOOKS) {
      for (const [app, width, height] of CASES) {
        const band = bandForAnyWordsOf({ template, width, height, safeArea: app });
        expect(() => createBandPainter({ words, template, width, height, safeArea: app, band }), `${template.id} ${app} ${width}x${height}`).not.toThrow();
      }
    }
  });
});

describe("placement 'auto': no caption pixel on a face", () => {
  it.each(LOOKS.map((t) => [t.id, t] as const))('%s at 1080x1920 with tiktok zones', (_id, template) => {
    const fixed = createBandPainter({ words, template, width: 1080, height: 1920, safeArea: 'tiktok' });
    // A 320x380 face where every other page would go, for that page's time.
    const avoid: TimedBox[] = fixed.layout.pages
      .filter((_p, i) => i % 2 === 0)
      .map((pg) => ({
        start: pg.start,
        end: pg.end,
        box: { x: pg.box.x + pg.box.width / 2 - 160, y: pg.box.y + pg.box.height / 2 - 190, width: 320, height: 380 },
      }));
    // The fixed captions would cover them.
    const covered = avoid.slice(0, 3).reduce((n, f) => n + paintedInside(fixed, f.start + 0.2, [f.box]), 0);
    expect(covered).toBeGreaterThan(0);
    const p = createBandPainter({ words, template, width: 1080, height: 1920, safeArea: 'tiktok', placement: 'auto', avoid });
    const zones = safeAreaZones('tiktok', { width: 1080, height: 1920 });
    p.layout.pages.forEach((pg, i) => {
      if (i > 6 && i < p.layout.pages.length - 3) return;
      const faces = avoid.filter((f) => f.start < pg.end && f.end > pg.start).map((f) => f.box);
      for (const t of timesOf(p, i)) {
        expect(paintedInside(p, t, faces), `page ${i} t=${t.toFixed(2)} on a face`).toBe(0);
        expect(paintedInside(p, t, zones), `page ${i} t=${t.toFixed(2)} in a zone`).toBe(0);
      }
    });
  });
});

async function opaqueIn(png: Buffer, at: { x: number; y: number }, boxes: readonly Rect[]): Promise<number> {
  const img = await loadImage(png);
  const ctx = createCanvas(img.width, img.height).getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data;
  let n = 0;
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (data[(y * img.width + x) * 4 + 3]! === 0) continue;
      const fx = x + at.x;
      const fy = y + at.y;
      if (boxes.some((b) => fx >= b.x && fx < b.x + b.width && fy >= b.y && fy < b.y + b.height)) n++;
    }
  }
  return n;
}

describe('the hook title with safeArea', () => {
  const hook = { text: 'Three mistakes that kill your retention on every platform 🔥', seconds: 3, style: { size: 'large' as const } };
  for (const [app, width, height] of CASES) {
    for (const where of ['bottom', 'top'] as const) {
      it(`${app} ${width}x${height}, captions at the ${where}: no title pixel in a zone, none on the band`, async () => {
        const template = where === 'top' ? deriveTemplate(tpl('karaoke'), { position: { y: 0.05 } }) : tpl('karaoke');
        const band = bandForAnyWordsOf({ template, width, height, safeArea: app });
        const t = paintHookTitle({ hook, template, width, height, band, safeArea: app });
        expect(await opaqueIn(t.png, t, safeAreaZones(app, { width, height })), JSON.stringify({ ...t, png: undefined })).toBe(0);
        expect(await opaqueIn(t.png, t, [band])).toBe(0);
        expect(Math.abs(t.x + t.width / 2 - width / 2)).toBeLessThanOrEqual(2);
      });
    }
  }

  it("without it, a large title reaches TikTok's button column", async () => {
    const band = bandForAnyWordsOf({ template: tpl('karaoke'), width: 1080, height: 1920 });
    const t = paintHookTitle({ hook, template: tpl('karaoke'), width: 1080, height: 1920, band });
    expect(await opaqueIn(t.png, t, safeAreaZones('tiktok', { width: 1080, height: 1920 }))).toBeGreaterThan(0);
  });
});
