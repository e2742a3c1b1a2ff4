import { createRequire } from 'node:module';
import { FontProblem, checkSfnt, checkWoff2Header, sniffFontFormat, type SfntInfo } from './sfnt.ts';

const require = createRequire(import.meta.url);

export type FontFileFormat = 'ttf' | 'otf' | 'woff2';

/**
 * The checks that need no font engine: format, table directory, checksums, counts (TTF/OTF), or
 * the WOFF2 header's sizes. Pure bounds-checked reads, safe to run in any process; most damaged
 * or hostile files stop here. Throws FontProblem.
 */
export function precheckFontFile(bytes: Uint8Array): FontFileFormat {
  const format = sniffFontFormat(bytes);
  if (format === 'woff') throw new FontProblem('WOFF 1.0 is not accepted: upload the TTF, OTF or WOFF2 file');
  if (format === 'collection') throw new FontProblem('font collections (.ttc) are not accepted: upload one font');
  if (format === null) throw new FontProblem('not a font file (accepted: TTF, OTF, WOFF2)');
  if (format === 'woff2') checkWoff2Header(bytes);
  else checkSfnt(bytes);
  return format;
}

/**
 * Any accepted font file -> checked sfnt bytes. WOFF2 is decoded by Google's reference decoder
 * (wawoff2, WebAssembly: its memory is bounded and a fault is an exception, not a crash) after
 * the header passed the size checks, and the result is checked like an uploaded TTF.
 */
export async function decodeFontFile(bytes: Uint8Array): Promise<{ format: FontFileFormat; sfnt: Uint8Array; info: SfntInfo }> {
  const format = precheckFontFile(bytes);
  if (format !== 'woff2') return { format, sfnt: bytes, info: checkSfnt(bytes) };
  const header = checkWoff2Header(bytes);
  const decompress = require('wawoff2/decompress.js') as (b: Uint8Array) => Promise<Uint8Array>;
  let sfnt: Uint8Array;
  try {
    sfnt = await decompress(bytes);
  } catch (cause) {
    throw new FontProblem(`the WOFF2 data does not decode (${cause instanceof Error ? cause.message : 'decoder error'})`);
  }
  if (sfnt.length > header.totalSfntSize + 4096) throw new FontProblem('the WOFF2 data decodes to more than its header declares');
  const info = checkSfnt(sfnt);
  return { format: 'woff2', sfnt, info };
}
