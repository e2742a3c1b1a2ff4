/** Pieces of whisper.cpp's legacy ggml model files, shared by our model converters. */
import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';

export const GGML_MAGIC = 0x67676d6c;

/** Little-endian int32 values. */
export function int32s(...values: number[]): Buffer {
  const buf = Buffer.alloc(values.length * 4);
  for (const [i, v] of values.entries()) buf.writeInt32LE(v, i * 4);
  return buf;
}

/** A length-prefixed (int32) UTF-8 string. */
export function lengthPrefixed(text: string | Buffer): Buffer[] {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return [int32s(bytes.length), bytes];
}

/**
 * One tensor record: int32 n_dims, name length, ftype (0 = f32, 1 = f16); the dims reversed
 * (PyTorch order in, ggml's ne[] order out); the name; the data.
 */
export function tensorRecord(name: string, torchDims: number[], ftype: 0 | 1, data: Buffer): Buffer[] {
  const nameBytes = Buffer.from(name, 'utf8');
  return [int32s(torchDims.length, nameBytes.length, ftype, ...[...torchDims].reverse()), nameBytes, data];
}

/** Writes `chunks` to `path` through a temporary file renamed at the end; returns size and sha1. */
export async function writeFileAtomic(path: string, chunks: Buffer[]): Promise<{ sha1: string; bytes: number }> {
  const tmp = `${path}.tmp-${process.pid}`;
  const hash = createHash('sha1');
  let bytes = 0;
  const fh = await open(tmp, 'w');
  try {
    for (const c of chunks) {
      hash.update(c);
      bytes += c.length;
      await fh.write(c);
    }
    await fh.close();
    await rename(tmp, path);
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  return { sha1: hash.digest('hex'), bytes };
}
