import { createRequire } from 'node:module';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GlobalFonts } from './canvas.ts';
import { FONT_FAMILIES, hasHangul, hasKana, hasNoSpaceScript, type FontFamily, type FontSpec } from '@captionfarm/captions';

// Template fonts come from npm packages carrying TTF files (@fontsource ships only woff2, which
// canvas cannot load); other scripts fall back per glyph to Debian's Noto fonts.

const PACKAGES: Readonly<Record<FontFamily, string>> = {
  Montserrat: '@expo-google-fonts/montserrat',
  Poppins: '@expo-google-fonts/poppins',
  Inter: '@expo-google-fonts/inter',
  Anton: '@expo-google-fonts/anton',
  'Bebas Neue': '@expo-google-fonts/bebas-neue',
  'Luckiest Guy': '@expo-google-fonts/luckiest-guy',
  'Playfair Display': '@expo-google-fonts/playfair-display',
};

/**
 * Debian packages: fonts-noto-core (Arabic, Hebrew, Noto Sans), fonts-noto-cjk, fonts-noto-color-emoji.
 * Skia exposes only the first face of NotoSansCJK-*.ttc ("JP"); it holds every Han, kana and
 * Hangul glyph, and `ctx.lang` picks the Simplified Chinese / Korean forms through OpenType locl.
 */
export const FALLBACK_FAMILIES = ['Noto Sans Arabic', 'Noto Sans Hebrew', 'Noto Sans CJK JP', 'Noto Sans', 'Noto Color Emoji'] as const;

const DEBIAN_FONT_DIRS = ['/usr/share/fonts/truetype/noto', '/usr/share/fonts/opentype/noto'];

let registered = false;

/**
 * Registers every template family (all upright weights) and makes sure Debian's Noto fonts are
 * loaded. Idempotent; call before measuring or painting.
 */
export function registerCaptionFonts(): void {
  if (registered) return;
  const require = createRequire(import.meta.url);
  for (const family of FONT_FAMILIES) {
    const dir = dirname(require.resolve(`${PACKAGES[family]}/package.json`));
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      // Folders are named like "800ExtraBold" / "800ExtraBold_Italic"; italics are not used.
      if (!entry.isDirectory() || !/^\d{3}[A-Za-z]+$/.test(entry.name)) continue;
      for (const f of readdirSync(join(dir, entry.name))) {
        if (f.endsWith('.ttf')) GlobalFonts.registerFromPath(join(dir, entry.name, f), family);
      }
    }
  }
  for (const d of DEBIAN_FONT_DIRS) {
    if (FALLBACK_FAMILIES.every((f) => GlobalFonts.has(f))) break;
    if (existsSync(d)) GlobalFonts.loadFontsFromDir(d);
  }
  registered = true;
}

/** Fallback families this machine lacks (install fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji). */
export function missingFallbackFonts(): string[] {
  registerCaptionFonts();
  return FALLBACK_FAMILIES.filter((f) => !GlobalFonts.has(f));
}

/** The CSS font shorthand for a unit of text: the template family, then per-script fallbacks. */
export function cssFont(spec: FontSpec, _text: string): string {
  return (
    `${spec.weight} ${round(spec.sizePx)}px "${spec.family}", "Noto Sans Arabic", "Noto Sans Hebrew", ` +
    `"Noto Sans CJK JP", "Noto Sans", "Noto Color Emoji", "Noto Sans Symbols", "Noto Sans Symbols2"`
  );
}

/**
 * The language the shaper is told (`ctx.lang`): it picks regional glyph forms (Japanese vs
 * Simplified Chinese Han) and, set explicitly, keeps output independent of the host locale.
 */
export function langFor(text: string): string {
  if (hasKana(text)) return 'ja';
  if (hasHangul(text)) return 'ko';
  if (hasNoSpaceScript(text)) return 'zh-Hans';
  if (/\p{Script=Arabic}/u.test(text)) return 'ar';
  if (/\p{Script=Hebrew}/u.test(text)) return 'he';
  return 'en';
}

const round = (v: number) => Math.round(v * 100) / 100;
