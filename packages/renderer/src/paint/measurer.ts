import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import type { FontMetrics, FontSpec, TextBox, TextMeasurer } from '@captionfarm/captions';
import { cssFont, registerCaptionFonts } from './fonts.ts';
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
  ctx.letterSpacing = `${Math.round(spec.letterSpacingPx * 100) / 100}px`;
  ctx.direction = hasRtl(text) ? 'rtl' : 'ltr';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
}

function measure(ctx: SKRSContext2D, text: string, spec: FontSpec): TextBox {
  setFont(ctx, spec, text);
  const m = ctx.measureText(text);
  // Canvas adds the letter spacing after the last letter too; the visible word ends before it.
  const width = Math.max(0, m.width - (spec.letterSpacingPx > 0 ? spec.letterSpacingPx : 0));
  return {
    width,
    inkLeft: -m.actualBoundingBoxLeft,
    inkRight: m.actualBoundingBoxRight,
    inkAscent: m.actualBoundingBoxAscent,
    inkDescent: m.actualBoundingBoxDescent,
  };
}
