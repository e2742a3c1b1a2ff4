export {
  TemplateSchema,
  TemplateIdSchema,
  ColorSchema,
  FontSchema,
  TextSchema,
  OutlineSchema,
  ShadowSchema,
  GlowSchema,
  BoxSchema,
  BackgroundSchema,
  PositionSchema,
  LayoutSchema,
  TimingSchema,
  WordStateSchema,
  ActiveSchema,
  EmphasisSchema,
  AnimationSchema,
  parseTemplate,
  deriveTemplate,
  applyStyle,
  emphasisOf,
  StyleSchema,
  type StyleInput,
  type Template,
  type TemplateInput,
  type Color,
} from './template.ts';
export { builtinTemplates, getBuiltinTemplate } from './builtin-templates.ts';
export { FONT_FAMILIES, FONT_WEIGHTS, FontFamilySchema, nearestWeight, fontFaceFor, type FontFamily, type CustomFontFace } from './fonts.ts';
export { EMOJI_TABLE, emojiForWord, pickPageEmoji } from './emoji.ts';
export { createApproxMeasurer, type TextMeasurer, type FontSpec, type TextBox, type FontMetrics } from './measure.ts';
export { layoutCaptions, bandForAnyWords, REFERENCE_SIDE } from './layout.ts';
export { settledUntil } from './page-timing.ts';
export { inkBounds, backgroundRects } from './band.ts';
export { baseFontPx } from './placement.ts';
export { EMOJI_EM, EMOJI_FAMILY } from './page-emoji.ts';
export type { CaptionEmoji, CaptionLayout, CaptionPage, CaptionLine, CaptionUnit, LayoutOptions } from './layout-types.ts';
export {
  captionFrameAt,
  pageAt,
  restWordScales,
  animationRate,
  quantizeTime,
  type CaptionFrame,
  type WordFrame,
  type WordState,
  type FrameOptions,
} from './timeline.ts';
export { safeArea, captionArea, aspectClass, SAFE_MARGINS, containsRect, unionRect, type Rect, type AspectClass } from './safe-area.ts';
export {
  graphemes,
  textDirection,
  baseDirection,
  visualOrder,
  splitNoSpaceWord,
  hasNoSpaceScript,
  hasRtl,
  hasKana,
  hasHangul,
  type Direction,
} from './text.ts';
export {
  subtitleCues,
  toSrt,
  toVtt,
  formatSubtitleTime,
  displayWidth,
  type SubtitleCue,
  type SubtitleOptions,
  type SubtitleWord,
} from './subtitles.ts';
