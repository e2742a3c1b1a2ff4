// The shapes a caption layout is made of; layout.ts runs the stages that build them.
import type { Placement, SafeAreaName, TimedBox, Word } from '@captionfarm/contracts';
import type { CustomFontFace } from './fonts.ts';
import type { FontSpec, TextMeasurer } from './measure.ts';
import type { Rect } from './safe-area.ts';
import type { Template } from './template.ts';
import type { Direction } from './text.ts';

/** One displayed unit: a word, or one character of Chinese/Japanese text. */
export interface CaptionUnit {
  /** Text as displayed (case and punctuation rules applied). */
  text: string;
  /** Index of the source word in the input array. */
  wordIndex: number;
  /** Seconds; `end` is clamped to timing.maxWordSeconds after start. */
  start: number;
  end: number;
  page: number;
  line: number;
  /** Left edge of the advance box and the baseline, frame pixels. */
  x: number;
  baseline: number;
  width: number;
  /** Font size of this unit (smaller than the template's when a single word had to shrink to fit). */
  fontPx: number;
  /** Ink of the glyphs, frame pixels. */
  ink: Rect;
  direction: Direction;
  /** Picked by the template's emphasis rule, or one of its `keywords`. */
  emphasized: boolean;
  /** Whether a space precedes this unit in reading order (false in Chinese/Japanese). */
  spaceBefore: boolean;
}

export interface CaptionLine {
  /** Indices into layout.units, reading order. */
  units: number[];
  /** Text box of the line: left/right of its words, cap height above to descender below. */
  box: Rect;
  baseline: number;
}

export interface CaptionPage {
  index: number;
  /** Which phrase (words between hard breaks: a long pause or a sentence end) the page is part of. */
  phrase: number;
  /** Seconds the page is on screen: [start, end). */
  start: number;
  end: number;
  direction: Direction;
  lines: CaptionLine[];
  /** Indices into layout.units, reading order. */
  units: number[];
  /** Union of the line boxes. */
  box: Rect;
  /** The page's emoji (template `emoji: 'auto'`), or null. */
  emoji: CaptionEmoji | null;
}

/** An emoji drawn centred above (or, without room, below) its page, appearing with its word. */
export interface CaptionEmoji {
  text: string;
  /** The unit whose word picked it (index into layout.units): the emoji appears when it is spoken. */
  unit: number;
  /** Left edge of the advance box and the baseline, frame pixels. */
  x: number;
  baseline: number;
  width: number;
  sizePx: number;
  ink: Rect;
}

export interface CaptionLayout {
  width: number;
  height: number;
  /** Frame minus platform UI. */
  safeArea: Rect;
  /** Where text may go: inside the safe area, centred on the frame, inset by box padding and outline. */
  textArea: Rect;
  font: FontSpec;
  capHeight: number;
  descender: number;
  lineHeightPx: number;
  units: CaptionUnit[];
  pages: CaptionPage[];
  /** Even-aligned rect covering every pixel any frame may paint (animations and effects included). */
  band: Rect;
}

export interface LayoutOptions {
  words: readonly Word[];
  template: Template;
  width: number;
  height: number;
  measurer: TextMeasurer;
  /**
   * Uploaded fonts the renderer registered, by font id: the template's `font.fontId` must be one
   * of them (a missing one throws).
   */
  fonts?: ReadonlyMap<string, CustomFontFace> | undefined;
  /**
   * `none` (default): the generic margins of the frame's aspect. `tiktok`, `reels`, `shorts`:
   * nothing a page may paint (text, outline, shadow, glow, boxes, emoji, animations) falls inside
   * that app's interface zones at this size (`safeAreaZones` of the contracts); pages stay centred.
   */
  safeArea?: SafeAreaName | undefined;
  /**
   * `fixed` (default): the template's position. `auto`: a page whose ink would cover one of
   * `avoid` while both are on screen moves above or below it (the template's side first), keeps
   * its place through a phrase, and comes back only when the faces have gone (page-position.ts).
   */
  placement?: Placement | undefined;
  /** What `placement: 'auto'` keeps clear of: faces, in OUTPUT pixels and OUTPUT seconds. */
  avoid?: readonly TimedBox[] | undefined;
}
