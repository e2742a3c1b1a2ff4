import type { Rect } from '@captionfarm/captions';
import { YuvaBand } from './band-yuva.ts';
import type { BandPixelFormat } from './matroska-stream.ts';
import { createCanvas } from './paint/canvas.ts';
import type { BandPainter } from './paint/types.ts';
import type { CaptionFrame } from './plan-caption-frames.ts';

/** Bytes of one band image in `format`. */
export function bandImageBytes(width: number, height: number, format: BandPixelFormat): number {
  return format === 'rgba' ? width * height * 4 : YuvaBand.bytes(width, height);
}

/**
 * The band image of each caption frame, as straight (not premultiplied) RGBA (see renderArgs for
 * why) or as yuva420p converted from it. One buffer, updated in place and yielded for each frame
 * (copy it to keep it).
 *
 * Only the part the painter says can differ from the previous image (`changed`) is painted
 * (when the painter can paint a part: `paintPart`), read back from the canvas and patched in:
 * reading pixels back (un-premultiplying, copying, and the garbage collections a 0.7 MB
 * ImageData per image causes) cost more CPU than the painting itself, and Skia rasterises only
 * inside the clip. A painter without `changed` is painted and read back whole. The canvas keeps
 * the whole current image, so a part can be read back larger than it was painted (yuva420p
 * reads whole 2x2 chroma blocks).
 */
export function* bandImages(painter: BandPainter, frames: readonly CaptionFrame[], format: BandPixelFormat = 'rgba'): Generator<Buffer, void, void> {
  const { width, height } = painter.band;
  const ctx = createCanvas(width, height).getContext('2d');
  const yuva = format === 'yuva420p' ? new YuvaBand(width, height) : null;
  const image = yuva ? yuva.image : Buffer.alloc(bandImageBytes(width, height, format));
  let previous: number | null = null;
  for (const frame of frames) {
    const changed = painter.changed ? painter.changed(previous, frame.paintAt) : { x: 0, y: 0, width, height };
    if (changed) {
      if (painter.paintPart) painter.paintPart(ctx, frame.paintAt, changed);
      else {
        ctx.clearRect(0, 0, width, height);
        ctx.save();
        painter.paint(ctx, frame.paintAt);
        ctx.restore();
      }
      const rect = yuva ? evenCover(changed) : changed;
      const part = ctx.getImageData(rect.x, rect.y, rect.width, rect.height).data;
      if (yuva) yuva.patch(part, rect);
      else {
        const src = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
        const row = rect.width * 4;
        for (let y = 0; y < rect.height; y++) src.copy(image, ((rect.y + y) * width + rect.x) * 4, y * row, (y + 1) * row);
      }
    }
    previous = frame.paintAt;
    yield image;
  }
}

/** The smallest rect with even x, y, width and height that covers `r` (inside a band of even size). */
function evenCover(r: Rect): Rect {
  const x = r.x & ~1;
  const y = r.y & ~1;
  return { x, y, width: ((r.x + r.width + 1) & ~1) - x, height: ((r.y + r.height + 1) & ~1) - y };
}
