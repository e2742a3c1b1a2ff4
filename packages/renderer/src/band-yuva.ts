import type { Rect } from '@captionfarm/captions';

/**
 * The caption band as yuva420p, ffmpeg's rawvideo layout (the Y, U, V and A planes back to
 * back), kept up to date by converting only the part of the band that changed. ffmpeg's overlay
 * blends yuva420p onto yuv420p video, so a band sent this way needs no conversion in ffmpeg:
 * there swscale converted every caption image whole, for any change (4.9 M instructions a
 * 802x164 image, callgrind), and the image is 2.5 bytes a pixel on the pipe instead of 4.
 *
 * BT.601 limited range, what swscale uses for a band that carries no colour tags. Chroma is
 * the alpha-weighted mean of each 2x2 block: ffmpeg blends chroma with the block's mean alpha, so
 * that is the colour compositing the four pixels in RGB and then subsampling would give (an
 * unweighted mean pulls the colour of a glyph's edge towards that of the transparent pixels
 * beside it).
 */
export class YuvaBand {
  /** The planes back to back: what is sent for each image. */
  readonly image: Buffer;
  private readonly u: Uint8Array;
  private readonly v: Uint8Array;
  /** The Y and A planes two pixels a 16-bit word (both start at an even offset; the first pixel in the low byte, LITTLE_ENDIAN). */
  private readonly y2: Uint16Array;
  private readonly a2: Uint16Array;

  /** Bytes of the four planes of a width x height band. */
  static bytes(width: number, height: number): number {
    return (width * height * 5) / 2;
  }

  /** A transparent band; `width` and `height` even. */
  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    if (width % 2 !== 0 || height % 2 !== 0) throw new RangeError(`A yuva420p band needs an even size, not ${width}x${height}`);
    if (!LITTLE_ENDIAN) throw new Error('YuvaBand reads RGBA pixels as little-endian 32-bit words');
    const luma = width * height;
    const chroma = luma / 4;
    this.image = Buffer.alloc(YuvaBand.bytes(width, height));
    this.image.fill(16, 0, luma);
    this.u = this.image.subarray(luma, luma + chroma).fill(128);
    this.v = this.image.subarray(luma + chroma, luma + 2 * chroma).fill(128);
    this.y2 = new Uint16Array(this.image.buffer, this.image.byteOffset, luma / 2);
    this.a2 = new Uint16Array(this.image.buffer, this.image.byteOffset + luma + 2 * chroma, luma / 2);
  }

  /**
   * Converts `rect` of the band (x, y, width and height even) from `rgba`: its straight-alpha
   * pixels, row after row, `rect.width * 4` bytes a row.
   */
  patch(rgba: Uint8Array | Uint8ClampedArray, rect: Rect): void {
    const { x: x0, y: y0, width: w, height: h } = rect;
    if ((x0 | y0 | w | h) & 1 || x0 < 0 || y0 < 0 || x0 + w > this.width || y0 + h > this.height) {
      throw new RangeError(`Not an even-aligned part of the ${this.width}x${this.height} band: ${JSON.stringify(rect)}`);
    }
    const { u: U, v: V, y2: Y2, a2: A2, width } = this;
    // One 32-bit load a pixel, R in the low byte (little-endian): a view when the rows are aligned, else a copy.
    const px = rgba.byteOffset % 4 === 0 ? new Uint32Array(rgba.buffer, rgba.byteOffset, w * h) : new Uint32Array(new Uint8Array(rgba).buffer);
    // The last block of one colour and what it converted to: most of a band is transparent, or
    // the inside of a glyph or of its outline (a block of one colour is its own weighted mean).
    let same = 0;
    let sameY = 16 * 0x101;
    let sameU = 128;
    let sameV = 128;
    let sameA = 0;
    const half = width >> 1;
    for (let j = 0; j < h; j += 2) {
      let s0 = j * w;
      let s1 = s0 + w;
      // Two pixels a 16-bit store (x0 and width even): d0, d1 index pairs.
      let d0 = ((y0 + j) * width + x0) >> 1;
      let d1 = d0 + half;
      let c = ((y0 + j) >> 1) * half + (x0 >> 1);
      for (let i = 0; i < w; i += 2, s0 += 2, s1 += 2, d0++, d1++, c++) {
        const p0 = px[s0]!;
        const p1 = px[s0 + 1]!;
        const p2 = px[s1]!;
        const p3 = px[s1 + 1]!;
        if (p0 === p1 && p0 === p2 && p0 === p3) {
          if (p0 !== same) {
            same = p0;
            const a = p0 >>> 24;
            sameA = a * 0x101;
            if (a === 0) {
              // What swscale writes for (0, 0, 0, 0).
              sameY = 16 * 0x101;
              sameU = sameV = 128;
            } else {
              sameY = luma(p0) * 0x101;
              const k = INV_WEIGHT[4 * a]!;
              const r = 4 * a * (p0 & 255);
              const g = 4 * a * ((p0 >> 8) & 255);
              const b = 4 * a * ((p0 >> 16) & 255);
              sameU = chromaU(r, g, b, k);
              sameV = chromaV(r, g, b, k);
            }
          }
          Y2[d0] = Y2[d1] = sameY;
          A2[d0] = A2[d1] = sameA;
          U[c] = sameU;
          V[c] = sameV;
          continue;
        }
        const a0 = p0 >>> 24;
        const a1 = p1 >>> 24;
        const a2 = p2 >>> 24;
        const a3 = p3 >>> 24;
        A2[d0] = a0 | (a1 << 8);
        A2[d1] = a2 | (a3 << 8);
        const sum = a0 + a1 + a2 + a3;
        if (sum === 0) {
          Y2[d0] = Y2[d1] = 16 * 0x101;
          U[c] = V[c] = 128;
          continue;
        }
        Y2[d0] = luma(p0) | (luma(p1) << 8);
        Y2[d1] = luma(p2) | (luma(p3) << 8);
        const sr = a0 * (p0 & 255) + a1 * (p1 & 255) + a2 * (p2 & 255) + a3 * (p3 & 255);
        const sg = a0 * ((p0 >> 8) & 255) + a1 * ((p1 >> 8) & 255) + a2 * ((p2 >> 8) & 255) + a3 * ((p3 >> 8) & 255);
        const sb = a0 * ((p0 >> 16) & 255) + a1 * ((p1 >> 16) & 255) + a2 * ((p2 >> 16) & 255) + a3 * ((p3 >> 16) & 255);
        const k = INV_WEIGHT[sum]!;
        U[c] = chromaU(sr, sg, sb, k);
        V[c] = chromaV(sr, sg, sb, k);
      }
    }
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** 1 / (255 x the block's summed alpha), for every sum a 2x2 block can have. */
const INV_WEIGHT = Float64Array.from({ length: 4 * 255 + 1 }, (_, sum) => (sum === 0 ? 0 : 1 / (255 * sum)));

/** BT.601 limited-range luma of an RGBA pixel read as a little-endian 32-bit word, rounded (16 for black, 235 for white): 16-bit coefficients. */
function luma(p: number): number {
  return ((16829 * (p & 255) + 33039 * ((p >> 8) & 255) + 6416 * ((p >> 16) & 255) + 32768) >> 16) + 16;
}

/**
 * Cb and Cr of a 2x2 block from its alpha-weighted channel sums (sr = the sum of alpha x red...)
 * and k = INV_WEIGHT[its summed alpha]: the weighted mean through the matrix, rounded (16-240).
 */
function chromaU(sr: number, sg: number, sb: number, k: number): number {
  return (128.5 + (-37.797 * sr - 74.203 * sg + 112 * sb) * k) | 0;
}

function chromaV(sr: number, sg: number, sb: number, k: number): number {
  return (128.5 + (112 * sr - 93.786 * sg - 18.214 * sb) * k) | 0;
}
