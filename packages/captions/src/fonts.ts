import { z } from 'zod';

/**
 * Font families a template may name. The renderer ships each one from an npm package carrying
 * TTF files (@expo-google-fonts/*) and falls back per glyph to Debian's Noto fonts for other
 * scripts (Arabic, Hebrew, CJK, ...) and to Noto Color Emoji.
 */
export const FONT_FAMILIES = ['Montserrat', 'Poppins', 'Inter', 'Anton', 'Bebas Neue', 'Luckiest Guy', 'Playfair Display'] as const;

export const FontFamilySchema = z.enum(FONT_FAMILIES);
export type FontFamily = z.infer<typeof FontFamilySchema>;

/** Weights each family ships; the renderer picks the nearest one for others. */
export const FONT_WEIGHTS: Readonly<Record<FontFamily, readonly number[]>> = {
  Montserrat: [100, 200, 300, 400, 500, 600, 700, 800, 900],
  Poppins: [100, 200, 300, 400, 500, 600, 700, 800, 900],
  Inter: [100, 200, 300, 400, 500, 600, 700, 800, 900],
  Anton: [400],
  'Bebas Neue': [400],
  'Luckiest Guy': [400],
  'Playfair Display': [400, 500, 600, 700, 800, 900],
};

/** The shipped weight closest to `weight` (ties go to the heavier one). */
export function nearestWeight(family: FontFamily, weight: number): number {
  let best = FONT_WEIGHTS[family][0]!;
  for (const w of FONT_WEIGHTS[family]) {
    if (Math.abs(w - weight) < Math.abs(best - weight) || (Math.abs(w - weight) === Math.abs(best - weight) && w > best)) best = w;
  }
  return best;
}

/** An uploaded font as the renderer registered it: the family name it answers to, and its weight. */
export interface CustomFontFace {
  family: string;
  weight: number;
}

/**
 * The family and weight a template's text is drawn with: its uploaded font when `fontId` is set
 * (which must be among `fonts`), else its built-in family at the nearest shipped weight.
 */
export function fontFaceFor(font: { family: FontFamily; weight: number; fontId?: string | null }, fonts?: ReadonlyMap<string, CustomFontFace>): CustomFontFace {
  if (font.fontId) {
    const face = fonts?.get(font.fontId);
    if (!face) throw new Error(`font ${font.fontId} is not loaded: fetch and register it before laying out`);
    return face;
  }
  return { family: font.family, weight: nearestWeight(font.family, font.weight) };
}
