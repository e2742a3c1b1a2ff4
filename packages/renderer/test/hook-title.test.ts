import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import type { HookTitle } from '@captionfarm/contracts';
import { builtinTemplates, deriveTemplate, getBuiltinTemplate, type Rect, type Template } from '@captionfarm/captions';
import { bandForAnyWordsOf, registerCustomFont } from '../src/paint/index.ts';
import { paintHookTitle } from '../src/paint/hook-title.ts';
import { BRAND_TTF } from './helpers/fonts.ts';

const tpl = (id: string): Template => getBuiltinTemplate(id)!;
const hook = (text: string, style: Partial<HookTitle['style']> = {}): HookTitle => ({ text, seconds: 3, style: { size: 'medium', ...style } });

const FRAMES = [
  { name: 'portrait 1080x1920', width: 1080, height: 1920 },
  { name: 'landscape 1920x1080', width: 1920, height: 1080 },
] as const;

/** The caption band of `template` (its bottom default), or of the same look set near the top of the frame. */
function bandOf(template: Template, where: 'bottom' | 'top', frame: { width: number; height: number }): { template: Template; band: Rect } {
  const t = where === 'top' ? deriveTemplate(template, { position: { y: 0.05 } }) : template;
  return { template: t, band: bandForAnyWordsOf({ template: t, ...frame }) };
}

async function pixels(png: Buffer): Promise<{ data: Uint8ClampedArray; w: number; h: number }> {
  const img = await loadImage(png);
  const ctx = createCanvas(img.width, img.height).getContext('2d');
  ctx.drawImage(img, 0, 0);
  return { data: ctx.getImageData(0, 0, img.width, img.height).data, w: img.width, h: img.height };
}

const rgb = (c: string) => [1, 3, 5].map((i) => Number.parseInt(c.slice(i, i + 2), 16));
/** Opaque pixels within `tol` (per channel) of colour `c`. */
function count(img: { data: Uint8ClampedArray }, c: string, tol = 8): number {
  const [r, g, b] = rgb(c);
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const d = img.data;
    if (d[i + 3]! > 250 && Math.abs(d[i]! - r!) <= tol && Math.abs(d[i + 1]! - g!) <= tol && Math.abs(d[i + 2]! - b!) <= tol) n++;
  }
  return n;
}

/** Horizontal runs of rows holding text-coloured pixels: the lines of the title as drawn. */
function textRows(img: { data: Uint8ClampedArray; w: number; h: number }, c: string): number {
  const [r, g, b] = rgb(c);
  let runs = 0;
  let inRun = false;
  for (let y = 0; y < img.h; y++) {
    let hit = false;
    for (let x = 0; x < img.w && !hit; x++) {
      const i = (y * img.w + x) * 4;
      const d = img.data;
      hit = d[i + 3]! > 250 && Math.abs(d[i]! - r!) <= 24 && Math.abs(d[i + 1]! - g!) <= 24 && Math.abs(d[i + 2]! - b!) <= 24;
    }
    if (hit && !inRun) runs++;
    inRun = hit;
  }
  return runs;
}

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('paintHookTitle', () => {
  for (const frame of FRAMES) {
    for (const where of ['bottom', 'top'] as const) {
      it(`${frame.name}, captions at the ${where}: inside the frame, off the band, ${where === 'bottom' ? 'near the top' : 'above the bottom 20%'}`, async () => {
        const { template, band } = bandOf(tpl('karaoke'), where, frame);
        expect(band.y + band.height / 2 < frame.height / 2).toBe(where === 'top');
        for (const size of ['small', 'medium', 'large'] as const) {
          const t = paintHookTitle({ hook: hook('3 mistakes that kill your retention 🔥', { size }), template, fonts: new Map(), ...frame, band });
          expect(overlaps(t, band), `${size} at ${JSON.stringify(t)} overlaps the band ${JSON.stringify(band)}`).toBe(false);
          expect(t.x).toBeGreaterThanOrEqual(0);
          expect(t.y).toBeGreaterThanOrEqual(0);
          expect(t.x + t.width).toBeLessThanOrEqual(frame.width);
          expect(t.y + t.height).toBeLessThanOrEqual(frame.height);
          // Centred, even pixels (yuv420 overlays), the PNG as large as the rect.
          expect(Math.abs(t.x + t.width / 2 - frame.width / 2)).toBeLessThanOrEqual(2);
          for (const v of [t.x, t.y, t.width, t.height]) expect(v % 2).toBe(0);
          const img = await pixels(t.png);
          expect([img.w, img.h]).toEqual([t.width, t.height]);
          if (where === 'bottom') {
            // Under the platform's tabs (8% of a portrait frame), in the top 15%.
            expect(t.y).toBeGreaterThanOrEqual(frame.height * (frame.height > frame.width ? 0.08 : 0.05));
            expect(t.y).toBeLessThanOrEqual(frame.height * 0.15);
          } else {
            expect(t.y).toBeGreaterThan(frame.height / 2);
            expect(t.y + t.height).toBeLessThanOrEqual(frame.height * 0.8);
          }
        }
      });
    }
  }

  it('moves off a tall band to the side of it with room, and says so when the band leaves none', () => {
    const frame = { width: 1080, height: 1920 };
    const template = tpl('karaoke');
    // In the top half, reaching down past the middle: the title goes under it, still above the bottom 20%.
    const high = { x: 60, y: 100, width: 960, height: 1000 };
    const t1 = paintHookTitle({ hook: hook('Watch till the end'), template, ...frame, band: high });
    expect(overlaps(t1, high)).toBe(false);
    expect(t1.y).toBeGreaterThanOrEqual(high.y + high.height);
    expect(t1.y + t1.height).toBeLessThanOrEqual(frame.height * 0.8);
    // In the bottom half, reaching up over the top safe area: the title goes above it.
    const low = { x: 60, y: 300, width: 960, height: 1400 };
    const t2 = paintHookTitle({ hook: hook('Watch till the end'), template, ...frame, band: low });
    expect(overlaps(t2, low)).toBe(false);
    expect(t2.y + t2.height).toBeLessThanOrEqual(low.y);
    expect(() => paintHookTitle({ hook: hook('Watch till the end'), template, ...frame, band: { x: 0, y: 0, ...frame } })).toThrow(
      /No room for the hook title outside the caption band/,
    );
  });

  it('wraps a long title on at most 3 lines within 86% of the width, shrinking the font', async () => {
    const template = tpl('boxed-word');
    const frame = { width: 1080, height: 1920 };
    const { band } = bandOf(template, 'bottom', frame);
    const long = 'Nobody tells you these seven simple habits that quietly double your productivity every single morning before work';
    const cases = [long, 'Supercalifragilisticexpialidocious '.repeat(3).trim(), `${'Extraordinarily '.repeat(7)}long`];
    const heights: number[] = [];
    for (const text of cases) {
      expect(text.length).toBeLessThanOrEqual(120);
      const t = paintHookTitle({ hook: hook(text, { size: 'large' }), template, ...frame, band });
      expect(t.width).toBeLessThanOrEqual(frame.width * 0.86 + 2);
      const lines = textRows(await pixels(t.png), '#FFFFFF');
      expect(lines, text).toBeGreaterThanOrEqual(2);
      expect(lines, text).toBeLessThanOrEqual(3);
      expect(overlaps(t, band)).toBe(false);
      heights.push(t.height);
    }
    // Three lines of a shrunk font: not three lines of the full size.
    const oneLine = paintHookTitle({ hook: hook('Seven habits', { size: 'large' }), template, ...frame, band });
    expect(textRows(await pixels(oneLine.png), '#FFFFFF')).toBe(1);
    expect(heights[0]!).toBeGreaterThan(oneLine.height);
    expect(heights[0]!).toBeLessThan(oneLine.height * 2);
    // Japanese has no spaces: it breaks between characters.
    const ja = paintHookTitle({
      hook: hook('誰も教えてくれない朝の習慣七つで生産性が二倍になる本当の理由とその始め方を今日から', { size: 'large' }),
      template,
      ...frame,
      band,
    });
    expect(ja.width).toBeLessThanOrEqual(frame.width * 0.86 + 2);
    const jaLines = textRows(await pixels(ja.png), '#FFFFFF');
    expect(jaLines).toBeGreaterThanOrEqual(2);
    expect(jaLines).toBeLessThanOrEqual(3);
  });

  it('never cuts a title of the longest length in a built-in template; cuts one that cannot fit with an ellipsis', () => {
    const frame = { width: 1080, height: 1920 };
    const band = { x: 0, y: 1400, width: 1080, height: 200 };
    const longest = 'NOBODY TELLS YOU THESE SEVEN SIMPLE HABITS THAT QUIETLY DOUBLE YOUR PRODUCTIVITY EVERY SINGLE MORNING, BEFORE WORK!!!!';
    expect(longest.length).toBe(118);
    // A cut title paints the same whatever follows the cut: more words change nothing.
    const cut = (template: Template, text: string) =>
      paintHookTitle({ hook: hook(text, { size: 'large' }), template, ...frame, band }).png.equals(
        paintHookTitle({ hook: hook(`${text} and more`, { size: 'large' }), template, ...frame, band }).png,
      );
    for (const template of builtinTemplates) expect(cut(template, longest), template.id).toBe(false);
    expect(cut(tpl('word-pop'), 'W'.repeat(110))).toBe(true);
  });

  it("fills the box with the template's highlight colour, draws the text in its text colour", async () => {
    const frame = { width: 1080, height: 1920 };
    const cases: { id: string; box: string; text: string }[] = [
      // The violet box of the spoken word, white words.
      { id: 'boxed-word', box: '#7C3AED', text: '#FFFFFF' },
      { id: 'impact', box: '#FF3B3B', text: '#FFFFFF' },
      // The yellow of the spoken word; white on it would be unreadable: the outline's black.
      { id: 'karaoke', box: '#FFD400', text: '#000000' },
    ];
    for (const c of cases) {
      const template = tpl(c.id);
      const t = paintHookTitle({ hook: hook('Stop scrolling'), template, ...frame, band: bandOf(template, 'bottom', frame).band });
      const img = await pixels(t.png);
      // The inner area: a strip along the top padding, clear of the rounded corners and the text.
      const inset = Math.ceil(t.height / 2);
      for (const x of [inset, Math.floor(t.width / 2), t.width - inset]) {
        const i = (4 * t.width + x) * 4;
        expect([...img.data.slice(i, i + 4)], `${c.id} at x=${x}`).toEqual([...rgb(c.box), 255]);
      }
      expect(count(img, c.box), c.id).toBeGreaterThan(t.width * t.height * 0.5);
      expect(count(img, c.text), c.id).toBeGreaterThan(500);
      // Rounded: the very corner is transparent.
      expect(img.data[3]).toBe(0);
    }
  });

  it("uses the style's own colours; a template without a highlight gets a dark translucent box; boxColor null: no box, an outline", async () => {
    const frame = { width: 1920, height: 1080 };
    const template = tpl('cinematic');
    const band = bandOf(template, 'bottom', frame).band;
    const own = await pixels(paintHookTitle({ hook: hook('Own colours', { textColor: '#00FF00', boxColor: '#1020C0' }), template, ...frame, band }).png);
    expect(count(own, '#1020C0')).toBeGreaterThan(own.w * own.h * 0.5);
    expect(count(own, '#00FF00')).toBeGreaterThan(500);

    const dark = await pixels(paintHookTitle({ hook: hook('No highlight'), template, ...frame, band }).png);
    const i = (4 * dark.w + Math.floor(dark.w / 2)) * 4;
    // Straight alpha: black at 70% opacity, not premultiplied.
    expect([...dark.data.slice(i, i + 4)]).toEqual([0, 0, 0, 0xb3]);
    expect(count(dark, '#FFFFFF')).toBeGreaterThan(500);

    const bare = await pixels(paintHookTitle({ hook: hook('No box', { boxColor: null }), template: tpl('karaoke'), ...frame, band }).png);
    let transparent = 0;
    for (let k = 3; k < bare.data.length; k += 4) if (bare.data[k] === 0) transparent++;
    expect(transparent).toBeGreaterThan(bare.w * bare.h * 0.3);
    // White letters in the template's black outline.
    expect(count(bare, '#FFFFFF')).toBeGreaterThan(500);
    expect(count(bare, '#000000')).toBeGreaterThan(500);
  });

  it('draws emoji in colour', async () => {
    const frame = { width: 1080, height: 1920 };
    const template = tpl('cinematic');
    const band = bandOf(template, 'bottom', frame).band;
    const saturated = async (text: string) => {
      const img = await pixels(paintHookTitle({ hook: hook(text), template, ...frame, band }).png);
      let n = 0;
      for (let i = 0; i < img.data.length; i += 4) {
        const [r, g, b] = [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!];
        if (Math.max(r, g, b) - Math.min(r, g, b) > 80) n++;
      }
      return n;
    };
    expect(await saturated('Hot take')).toBe(0);
    expect(await saturated('Hot take 🔥')).toBeGreaterThan(300);
  });

  it("draws an uploaded font's template in that font", async () => {
    const frame = { width: 1080, height: 1920 };
    const bytes = readFileSync(BRAND_TTF);
    const fontId = randomUUID();
    const face = registerCustomFont({ bytes, sha256: createHash('sha256').update(bytes).digest('hex'), weight: 400 });
    const fonts = new Map([[fontId, face]]);
    const base = tpl('boxed-word');
    const branded = deriveTemplate(base, { font: { fontId } });
    const band = bandOf(base, 'bottom', frame).band;
    const mine = paintHookTitle({ hook: hook('Brand new look'), template: branded, fonts, ...frame, band });
    const fallback = paintHookTitle({ hook: hook('Brand new look'), template: base, fonts, ...frame, band });
    expect(mine.png.equals(fallback.png)).toBe(false);
    // Noto Serif Regular sets the words narrower than Poppins ExtraBold.
    expect(mine.width).toBeLessThan(fallback.width);
    expect(count(await pixels(mine.png), '#FFFFFF')).toBeGreaterThan(500);
    expect(() => paintHookTitle({ hook: hook('x'), template: branded, fonts: new Map(), ...frame, band })).toThrow(/not loaded/);
  });
});
