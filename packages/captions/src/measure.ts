import { hasNoSpaceScript, isNoSpaceChar, graphemes } from './text.ts';

/** What the layout asks the font engine. Sizes in pixels. */
export interface FontSpec {
  family: string;
  weight: number;
  sizePx: number;
  letterSpacingPx: number;
}

export interface TextBox {
  /** Advance width: where the next word may start. */
  width: number;
  /** Ink extents relative to the pen position at the baseline (left edge, positive = right/up/down). */
  inkLeft: number;
  inkRight: number;
  inkAscent: number;
  inkDescent: number;
}

export interface FontMetrics {
  /** Height of capital letters above the baseline (lines are centred on it). */
  capHeight: number;
  /** How far descenders (g, p, y) reach below the baseline. */
  descender: number;
}

/**
 * Font measuring, kept behind this interface so layout stays pure: the renderer implements it
 * with the canvas it draws with (same shaping, same fallback fonts); tests use `createApproxMeasurer`.
 */
export interface TextMeasurer {
  measureText(text: string, font: FontSpec): TextBox;
  fontMetrics(font: FontSpec): FontMetrics;
}

/**
 * A deterministic stand-in for tests and sizing estimates: 0.6 em per Latin character, 1 em per
 * CJK character, caps 0.7 em, descenders 0.2 em.
 */
export function createApproxMeasurer(opts: { charEm?: number } = {}): TextMeasurer {
  const charEm = opts.charEm ?? 0.6;
  return {
    measureText(text, font) {
      let w = 0;
      const gs = graphemes(text);
      for (const g of gs) w += (isNoSpaceChar(g) ? 1 : charEm) * font.sizePx + font.letterSpacingPx;
      const asc = (hasNoSpaceScript(text) ? 0.88 : 0.72) * font.sizePx;
      return { width: w, inkLeft: 0, inkRight: w, inkAscent: asc, inkDescent: 0.2 * font.sizePx };
    },
    fontMetrics(font) {
      return { capHeight: 0.7 * font.sizePx, descender: 0.2 * font.sizePx };
    },
  };
}
