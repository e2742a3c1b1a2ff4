export type { BandPainter, BandPainterOptions, BandRect, PreviewFrameOptions } from './types.ts';
export { BandOverflow, bandForAnyWordsOf, createBandPainter, renderPreviewFrame } from './painter.ts';
export { createCanvasMeasurer } from './measurer.ts';
export { registerCustomFont } from './custom-fonts.ts';
export { registerCaptionFonts, missingFallbackFonts, cssFont, langFor, FALLBACK_FAMILIES } from './fonts.ts';
