import { describe, expect, it } from 'vitest';
import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import { FONT_FAMILIES, FONT_WEIGHTS, type FontSpec } from '@captionfarm/captions';
import { createCanvasMeasurer, cssFont, langFor, missingFallbackFonts, registerCaptionFonts } from '../src/paint/index.ts';
import { setFont } from '../src/paint/measurer.ts';

registerCaptionFonts();

/** Bounding box of pixels with alpha > 0, or null. */
function inkBox(ctx: ReturnType<ReturnType<typeof createCanvas>['getContext']>, w: number, h: number) {
  const d = ctx.getImageData(0, 0, w, h).data;
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (d[(y * w + x) * 4 + 3]! > 0) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1: x1 + 1, y1: y1 + 1 };
}

function render(text: string, spec: FontSpec, w = 1400, h = 300) {
  const c = createCanvas(w, h);
  const ctx = c.getContext('2d');
  setFont(ctx, spec, text);
  ctx.fillStyle = '#fff';
  ctx.fillText(text, 50, 200);
  return { ctx, box: inkBox(ctx, w, h) };
}

describe('fonts', () => {
  it('registers every template family from its npm package', () => {
    for (const f of FONT_FAMILIES) expect(GlobalFonts.has(f), f).toBe(true);
  });

  it('has the Debian Noto fallbacks (fonts-noto-core, fonts-noto-cjk, fonts-noto-color-emoji)', () => {
    expect(missingFallbackFonts()).toEqual([]);
  });

  it('draws each shipped weight differently (the weight files are really used)', () => {
    // Thin and ExtraLight both say 250 in their OS/2 table, so start at 300.
    const widths = FONT_WEIGHTS.Montserrat.filter((w) => w >= 300).map((weight) => {
      const spec: FontSpec = { family: 'Montserrat', weight, sizePx: 60, letterSpacingPx: 0 };
      return createCanvasMeasurer().measureText('Weight', spec).width;
    });
    for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeGreaterThan(widths[i - 1]!);
  });

  it.each([
    ['ひらがな', 'ja'],
    ['今日は', 'ja'],
    ['한국어', 'ko'],
    ['中文', 'zh-Hans'],
    ['مرحبا', 'ar'],
    ['שלום', 'he'],
    ['hello', 'en'],
  ])('tells the shaper the language of %s (%s): regional Han forms, host-independent output', (text, lang) => {
    expect(langFor(text)).toBe(lang);
  });

  it('Chinese and Japanese Han glyphs differ where the regions differ (locl)', () => {
    const spec: FontSpec = { family: 'Inter', weight: 400, sizePx: 80, letterSpacingPx: 0 };
    expect(cssFont(spec, '骨')).toContain('"Noto Sans CJK JP"');
    const draw = (lang: string) => {
      const c = createCanvas(120, 120);
      const ctx = c.getContext('2d');
      ctx.font = cssFont(spec, '骨');
      ctx.lang = lang;
      ctx.fillText('骨', 10, 95);
      return ctx.getImageData(0, 0, 120, 120).data;
    };
    const ja = draw('ja');
    const zh = draw('zh-Hans');
    let diff = 0;
    for (let i = 3; i < ja.length; i += 4) if (Math.abs(ja[i]! - zh[i]!) > 128) diff++;
    expect(diff).toBeGreaterThan(50);
  });
});

describe('measured metrics match rendered pixels', () => {
  const cases: [string, string, number][] = [
    ['Montserrat', 'Disputing', 800],
    ['Poppins', 'Traveler', 800],
    ['Inter', 'Quickly jumping', 600],
    ['Anton', 'STRONGER', 400],
    ['Bebas Neue', 'CLOAK', 400],
    ['Luckiest Guy', 'BOUNCE', 400],
    ['Playfair Display', 'Gently', 600],
    ['Montserrat', 'مرحبا', 800],
    ['Montserrat', 'שלום', 800],
    ['Montserrat', '天气很好', 800],
    ['Montserrat', 'fire 🔥', 800],
  ];
  it.each(cases)('%s "%s"', (family, text, weight) => {
    for (const sizePx of [40, 120]) {
      const spec: FontSpec = { family, weight, sizePx, letterSpacingPx: 0 };
      const m = createCanvasMeasurer().measureText(text, spec);
      const { box } = render(text, spec);
      expect(box).not.toBeNull();
      // Within 1.5 px, the ARCHITECTURE figure for this approach.
      expect(Math.abs(box!.x0 - (50 + m.inkLeft))).toBeLessThanOrEqual(1.5);
      expect(Math.abs(box!.x1 - (50 + m.inkRight))).toBeLessThanOrEqual(1.5);
      expect(Math.abs(box!.y0 - (200 - m.inkAscent))).toBeLessThanOrEqual(1.5);
      expect(Math.abs(box!.y1 - (200 + m.inkDescent))).toBeLessThanOrEqual(1.5);
    }
  });

  it('letter spacing is not counted after the last letter', () => {
    const measurer = createCanvasMeasurer();
    const base: FontSpec = { family: 'Montserrat', weight: 800, sizePx: 50, letterSpacingPx: 0 };
    const plain = measurer.measureText('ABCD', base).width;
    const spaced = measurer.measureText('ABCD', { ...base, letterSpacingPx: 10 }).width;
    expect(spaced - plain).toBeCloseTo(30, 0);
  });

  it('scripts render with real glyphs, not one repeated missing-glyph box', () => {
    const spec: FontSpec = { family: 'Montserrat', weight: 800, sizePx: 80, letterSpacingPx: 0 };
    for (const [a, b] of [
      ['我', '们'],
      ['ب', 'ع'],
      ['ש', 'ל'],
      ['ひ', 'カ'],
    ]) {
      const ia = render(a!, spec, 300, 300).ctx.getImageData(0, 0, 300, 300).data;
      const ib = render(b!, spec, 300, 300).ctx.getImageData(0, 0, 300, 300).data;
      let diff = 0;
      for (let i = 3; i < ia.length; i += 4) if (Math.abs(ia[i]! - ib[i]!) > 128) diff++;
      expect(diff, `${a} vs ${b}`).toBeGreaterThan(200);
    }
  });

  it('emoji are drawn in colour (Noto Color Emoji)', () => {
    const spec: FontSpec = { family: 'Montserrat', weight: 800, sizePx: 80, letterSpacingPx: 0 };
    const d = render('🔥', spec, 300, 300).ctx.getImageData(0, 0, 300, 300).data;
    let coloured = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 200 && d[i]! - d[i + 2]! > 100) coloured++;
    expect(coloured).toBeGreaterThan(500);
  });
});
