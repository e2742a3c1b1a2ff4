import { createCanvas, type SKRSContext2D } from './canvas.ts';
import type { FontMetrics, FontSpec, TextBox, TextMeasurer } from '@captionfarm/captions';
import { cssFont, langFor, registerCaptionFonts } from './fonts.ts';
import { hasRtl } from '@captionfarm/captions';

/**
 * Measures with the same canvas, shaping and fallback fonts that paint the text, so a word's
 * measured box is where its pixels land.
 */
export function createCanvasMeasurer(): TextMeasurer {
  registerCaptionFonts();
  const ctx = createCanvas(8, 8).getContext('2d');
  const boxes = new Map<string, TextBox>();
  const metrics = new Map<string, FontMetrics>();
  return {
    measureText(text: string, spec: FontSpec): TextBox {
      const key = `${spec.family}|${spec.weight}|${spec.sizePx}|${spec.letterSpacingPx}|${text}`;
      let box = boxes.get(key);
      if (!box) {
        box = measure(ctx, text, spec);
        boxes.set(key, box);
      }
      return box;
    },
    fontMetrics(spec: FontSpec): FontMetrics {
      const key = `${spec.family}|${spec.weight}|${spec.sizePx}`;
      let m = metrics.get(key);
      if (!m) {
        setFont(ctx, spec, 'H');
        const cap = ctx.measureText('H').actualBoundingBoxAscent;
        const desc = ctx.measureText('gjpqy').actualBoundingBoxDescent;
        m = { capHeight: cap, descender: desc };
        metrics.set(key, m);
      }
      return m;
    },
  };
}

export function setFont(ctx: SKRSContext2D, spec: FontSpec, text: string): void {
  ctx.font = cssFont(spec, text);
  ctx.lang = langFor(text);
  ctx.letterSpacing = `${Math.round(spec.letterSpacingPx * 100) / 100}px`;
  ctx.direction = hasRtl(text) ? 'rtl' : 'ltr';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
}

function measure(ctx: SKRSContext2D, text: string, spec: FontSpec): TextBox {
  setFont(ctx, spec, text);
  const m = ctx.measureText(text);
  // Canvas adds the letter spacing after the last letter too; the visible word ends before it.
  const width = Math.max(0, m.width - Math.max(spec.letterSpacingPx, 0));
  const box = {
    width,
    inkLeft: -m.actualBoundingBoxLeft,
    inkRight: m.actualBoundingBoxRight,
    inkAscent: m.actualBoundingBoxAscent,
    inkDescent: m.actualBoundingBoxDescent,
  };
  // Colour emoji are bitmaps whose pixels do not match the bounds Skia reports (20 px off at
  // 120 px): find their real ink by drawing them once.
  return EMOJI_RE.test(text) ? rasterInk(text, spec, box) : box;
}

const EMOJI_RE = /\p{Extended_Pictographic}/u;

function rasterInk(text: string, spec: FontSpec, box: TextBox): TextBox {
  const pad = Math.ceil(spec.sizePx);
  const w = Math.ceil(Math.max(box.width, box.inkRight) + 2 * pad);
  const h = Math.ceil(3 * spec.sizePx);
  const ctx = createCanvas(w, h).getContext('2d');
  setFont(ctx, spec, text);
  ctx.fillStyle = '#fff';
  const baseline = 2 * spec.sizePx;
  ctx.fillText(text, pad, baseline);
  const d = ctx.getImageData(0, 0, w, h).data;
  let x0 = w;
  let x1 = -1;
  let y0 = h;
  let y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (d[(y * w + x) * 4 + 3]! === 0) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (x1 < 0) return box;
  return {
    width: box.width,
    inkLeft: x0 - pad,
    inkRight: x1 + 1 - pad,
    inkAscent: baseline - y0,
    inkDescent: y1 + 1 - baseline,
  };
}
