import type { Image, SKRSContext2D } from './canvas.ts';
import type { Placement, SafeAreaName, TimedBox, Word } from '@captionfarm/contracts';
import type { CustomFontFace, Rect, Template } from '@captionfarm/captions';

/** An even-aligned rectangle in output pixels (the captions' one Rect type). */
export type BandRect = Rect;

/** What the compositor uses: a fixed band of the frame where captions can appear. */
export interface BandPainter {
  /** Even-aligned rect in output pixels where captions can appear (constant for the whole video). */
  band: BandRect;
  /** Changes exactly when the band image changes (cheap; send a new frame only when it changes). */
  keyAt(t: number): string;
  /** Paints the captions at time t (seconds). ctx is band-sized and already cleared to transparent. */
  paint(ctx: SKRSContext2D, t: number): void;
  /**
   * Optional: a band-relative rect (whole pixels) outside which the image at `to` equals the
   * image at `from` (the whole band when `from` is null, null when nothing differs). The
   * compositor then reads back only that part of each painted image.
   */
  changed?(from: number | null, to: number): BandRect | null;
  /**
   * Optional: paints time t inside `rect` only (band pixels), leaving the canvas outside it as it
   * was. Inside `rect` the pixels equal a whole repaint; outside, the caller must not read.
   */
  paintPart?(ctx: SKRSContext2D, t: number, rect: BandRect): void;
}

export interface BandPainterOptions {
  words: Word[];
  template: Template;
  /** Output frame size, pixels. */
  width: number;
  height: number;
  /**
   * Output frame rate. Animations are sampled on this grid, divided down to at most 30 steps a
   * second (60 -> 30), so keyAt changes only on frame boundaries and a pop is 4-5 images. Default 30.
   */
  fps?: number;
  /** Uploaded fonts registered with `registerCustomFont`, by font id (for `template.font.fontId`). */
  fonts?: ReadonlyMap<string, CustomFontFace> | undefined;
  /**
   * The band, when it had to be fixed before the words were known (`bandForAnyWords`); default
   * the words' own. Words whose captions reach outside it throw BandOverflow.
   */
  band?: BandRect | undefined;
  /** `tiktok`, `reels`, `shorts`: nothing painted inside that app's interface zones; default `none` (the generic margins). */
  safeArea?: SafeAreaName | undefined;
  /** `auto`: a page that would cover a face of `avoid` moves above or below it; default `fixed`. */
  placement?: Placement | undefined;
  /** Faces to keep clear of with `placement: 'auto'`, in output pixels and output seconds. */
  avoid?: readonly TimedBox[] | undefined;
}

export interface PreviewFrameOptions extends BandPainterOptions {
  /** A still of the video (decoded image or encoded PNG/JPEG bytes), scaled to cover the frame. Transparent when absent. */
  background?: Image | Buffer;
  t: number;
}
