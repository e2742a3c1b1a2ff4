// Reading a WAV file for voicedRegions (the `@captionfarm/edit/wav` entry: the only module of the
// package that uses node:, so the main entry stays usable in the browser).
import { readFile } from 'node:fs/promises';

/**
 * The samples of a WAV file as floats in [-1, 1]: PCM (8, 16, 24, 32 bits) or float (32, 64), the first channel
 * of a multichannel file. The RIFF chunks are walked properly (LIST and other chunks skipped, odd
 * sizes padded); a data chunk whose size is unset (0 or 0xFFFFFFFF, as a streaming writer leaves
 * it) runs to the end of the file.
 */
export async function readWavSamples(path: string): Promise<{ samples: Float32Array; sampleRate: number }> {
  const buf = await readFile(path);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const tag = (at: number) => buf.toString('latin1', at, at + 4);
  if (buf.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error(`${path}: not a WAV file (no RIFF/WAVE header)`);
  let format: { code: number; channels: number; sampleRate: number; bits: number } | null = null;
  let at = 12;
  while (at + 8 <= buf.length) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      let code = view.getUint16(body, true);
      // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
      if (code === 0xfffe && size >= 26) code = view.getUint16(body + 24, true);
      format = { code, channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) };
    } else if (id === 'data') {
      if (!format) throw new Error(`${path}: the data chunk comes before the fmt chunk`);
      const end = size === 0 || size === 0xffffffff || body + size > buf.length ? buf.length : body + size;
      return { samples: decode(view, body, end, format, path), sampleRate: format.sampleRate };
    }
    at = body + size + (size % 2);
  }
  throw new Error(`${path}: no data chunk`);
}

/** One sample as a float in [-1, 1], by format (1 PCM, 3 IEEE float) and bit depth. */
const READERS: Record<string, (view: DataView, at: number) => number> = {
  '1/8': (v, at) => (v.getUint8(at) - 128) / 128,
  '1/16': (v, at) => v.getInt16(at, true) / 32768,
  '1/24': (v, at) => (v.getUint8(at) | (v.getUint8(at + 1) << 8) | (v.getInt8(at + 2) << 16)) / 8388608,
  '1/32': (v, at) => v.getInt32(at, true) / 2147483648,
  '3/32': (v, at) => v.getFloat32(at, true),
  '3/64': (v, at) => v.getFloat64(at, true),
};

function decode(view: DataView, from: number, to: number, format: { code: number; channels: number; bits: number }, path: string): Float32Array {
  const { code, channels, bits } = format;
  const read = READERS[`${code}/${bits}`];
  if (!read) throw new Error(`${path}: WAV format ${code} with ${bits}-bit samples is not supported (PCM of 8, 16, 24 or 32 bits, or 32/64-bit float)`);
  const step = (bits / 8) * Math.max(1, channels);
  const count = Math.floor((to - from) / step);
  const out = new Float32Array(count);
  for (let i = 0, at = from; i < count; i++, at += step) out[i] = read(view, at);
  return out;
}
