/** IEEE 754 half <-> single conversions for model converters (Node 20 has no Float16Array). */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Half-precision bits -> number (exact). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** number -> half-precision bits, rounding to nearest even (as numpy's astype(float16)). */
export function floatToHalf(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow -> 0
    mant |= 0x800000; // subnormal half: shift the implicit bit in
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

/** Little-endian float16 buffer -> little-endian float32 buffer. */
export function f16BufferToF32(half: Buffer): Buffer {
  const out = Buffer.allocUnsafe(half.length * 2);
  for (let i = 0; i < half.length / 2; i++) out.writeFloatLE(halfToFloat(half.readUInt16LE(i * 2)), i * 4);
  return out;
}

/** Little-endian float32 buffer -> little-endian float16 buffer. */
export function f32BufferToF16(single: Buffer): Buffer {
  const out = Buffer.allocUnsafe(single.length / 2);
  for (let i = 0; i < single.length / 4; i++) out.writeUInt16LE(floatToHalf(single.readFloatLE(i * 4)), i * 2);
  return out;
}
