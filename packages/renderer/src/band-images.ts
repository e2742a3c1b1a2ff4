import { createCanvas } from '@napi-rs/canvas';
import type { BandPainter } from './paint/types.ts';
import type { CaptionFrame } from './plan-caption-frames.ts';

/**
 * The band image of each caption frame, as straight (not premultiplied) RGBA: see renderArgs
 * for why. One buffer, updated in place and yielded for each frame (copy it to keep it).
 *
 * Only the part the painter says can differ from the previous image (`changed`) is painted
 * (when the painter can paint a part: `paintPart`), read back from the canvas and patched in:
 * reading pixels back (un-premultiplying, copying, and the garbage collections a 0.7 MB
 * ImageData per image causes) cost more CPU than the painting itself, and Skia rasterises only
 * inside the clip. A painter without `changed` is painted and read back whole.
 */
export function* bandImages(painter: BandPainter, frames: readonly CaptionFrame[]): Generator<Buffer, void, void> {
  const { width, height } = painter.band;
  const ctx = createCanvas(width, height).getContext('2d');
  const image = Buffer.alloc(width * height * 4);
  let previous: number | null = null;
  for (const frame of frames) {
    const rect = painter.changed ? painter.changed(previous, frame.paintAt) : { x: 0, y: 0, width, height };
    if (rect) {
      if (painter.paintPart) painter.paintPart(ctx, frame.paintAt, rect);
      else {
        ctx.clearRect(0, 0, width, height);
        ctx.save();
        painter.paint(ctx, frame.paintAt);
        ctx.restore();
      }
      const part = ctx.getImageData(rect.x, rect.y, rect.width, rect.height).data;
      const src = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
      const row = rect.width * 4;
      for (let y = 0; y < rect.height; y++) src.copy(image, ((rect.y + y) * width + rect.x) * 4, y * row, (y + 1) * row);
    }
    previous = frame.paintAt;
    yield image;
  }
}
