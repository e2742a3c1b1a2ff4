import type { SKRSContext2D } from '@napi-rs/canvas';
import type { Rect } from './render-args.ts';

/**
 * What the renderer needs from a caption painter (the real one is `createBandPainter` in
 * ./paint/). Structural, so tests can pass a tiny painter of their own.
 */
export interface BandPainter {
  /** Even-aligned rectangle of the output frame that captions may cover, in output pixels. */
  band: Rect;
  /** Changes exactly when the band image changes: equal keys at two times mean equal images. */
  keyAt(t: number): string;
  /** Draws the band at time t; ctx is band-sized and already cleared to transparent. */
  paint(ctx: SKRSContext2D, t: number): void;
}
