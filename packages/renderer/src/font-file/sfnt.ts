// Structural checks of a TrueType/OpenType file, done before any font engine reads it. A font
// engine trusts these structures (offsets, lengths, counts); a file that lies about them is what
// crashes or stalls one. Pure functions of the bytes.

/** Why a font file is refused: the message is shown to the client as is. */
export class FontProblem extends Error {
  override name = 'FontProblem';
}

type SfntFlavor = 'truetype' | 'cff';

export interface SfntTable {
  tag: string;
  offset: number;
  length: number;
}

export interface SfntInfo {
  flavor: SfntFlavor;
  numGlyphs: number;
  unitsPerEm: number;
  tables: SfntTable[];
}

/** Largest font we accept after decompression (WOFF2 fonts are decoded to this format). */
export const MAX_SFNT_BYTES = 30 * 1024 * 1024;

/**
 * Tags of the OpenType, TrueType (Apple) and Graphite specifications, plus the few tool tables
 * found in shipped fonts. A table with any other tag is refused: a real font has none, and a
 * damaged directory usually shows first as a garbled tag.
 */
const KNOWN_TAGS = new Set(
  (
    'BASE CBDT CBLC CFF  CFF2 COLR CPAL DSIG EBDT EBLC EBSC GDEF GPOS GSUB HVAR JSTF LTSH MATH MERG MVAR OS/2 PCLT STAT SVG  ' +
    'VDMX VORG VVAR avar cmap cvar cvt  fpgm fvar gasp glyf gvar hdmx head hhea hmtx kern loca maxp meta name post prep sbix ' +
    'vhea vmtx acnt ankr bdat bhed bloc bsln fdsc feat fmtx fond gcid just lcar ltag mort morx opbd prop trak xref Zapf ' +
    'Feat Glat Gloc Silf Sill FFTM TSI0 TSI1 TSI2 TSI3 TSI5 TSIV TSIP TSID TSIJ TSIB TSIS TSIC'
  )
    .match(/.{4}(?: |$)/g)!
    .map((t) => t.slice(0, 4)),
);

const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;
const u32 = (b: Uint8Array, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

/** The OpenType checksum: the sum of big-endian uint32 words, the last one zero-padded. */
export function sfntChecksum(b: Uint8Array, offset: number, length: number): number {
  let sum = 0;
  const end = offset + length;
  let o = offset;
  for (; o + 4 <= end; o += 4) sum = (sum + u32(b, o)) >>> 0;
  if (o < end) {
    let last = 0;
    for (let i = 0; i < 4; i++) last = (last << 8) | (o + i < end ? b[o + i]! : 0);
    sum = (sum + (last >>> 0)) >>> 0;
  }
  return sum;
}

/**
 * Checks the table directory, the tables every font engine reads first (head, maxp, hhea, hmtx,
 * loca), and every checksum: each table's and the whole file's (`head.checkSumAdjustment`).
 * The whole-file checksum covers every byte, so any change to a font after it was built is
 * refused. Throws FontProblem.
 */
export function checkSfnt(b: Uint8Array): SfntInfo {
  if (b.length < 12) throw new FontProblem('the file is too short to be a font');
  if (b.length > MAX_SFNT_BYTES) throw new FontProblem(`the font is larger than ${MAX_SFNT_BYTES} bytes`);
  const version = u32(b, 0);
  const flavor: SfntFlavor | null = version === 0x00010000 || version === 0x74727565 ? 'truetype' : version === 0x4f54544f ? 'cff' : null;
  if (!flavor) throw new FontProblem('not a TrueType or OpenType font (unknown sfnt version)');
  const numTables = u16(b, 4);
  if (numTables < 1 || numTables > 64) throw new FontProblem(`implausible table count ${numTables}`);
  const dirEnd = 12 + 16 * numTables;
  if (dirEnd > b.length) throw new FontProblem('the table directory is cut off (truncated file)');

  const tables: SfntTable[] = [];
  let prevTag = '';
  for (let i = 0; i < numTables; i++) {
    const o = 12 + 16 * i;
    const tag = String.fromCharCode(b[o]!, b[o + 1]!, b[o + 2]!, b[o + 3]!);
    if (!KNOWN_TAGS.has(tag)) throw new FontProblem(`unknown table ${JSON.stringify(tag)}`);
    if (tag <= prevTag) throw new FontProblem('the table directory is not sorted or repeats a table');
    prevTag = tag;
    const checksum = u32(b, o + 4);
    const offset = u32(b, o + 8);
    const length = u32(b, o + 12);
    if (offset < dirEnd || offset + length > b.length) throw new FontProblem(`table ${tag.trim()} lies outside the file (truncated or damaged)`);
    const sum = tag === 'head' && length >= 12 ? (sfntChecksum(b, offset, length) - u32(b, offset + 8)) >>> 0 : sfntChecksum(b, offset, length);
    if (sum !== checksum) throw new FontProblem(`table ${tag.trim()} does not match its checksum (damaged or modified file)`);
    tables.push({ tag, offset, length });
  }
  const sorted = [...tables].sort((x, y) => x.offset - y.offset);
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    if (a.offset + a.length > sorted[i]!.offset) throw new FontProblem(`tables ${a.tag.trim()} and ${sorted[i]!.tag.trim()} overlap`);
  }
  const get = (tag: string) => tables.find((t) => t.tag === tag);
  const need = (tag: string, minLength: number) => {
    const t = get(tag);
    if (!t) throw new FontProblem(`the required table ${tag.trim()} is missing`);
    if (t.length < minLength) throw new FontProblem(`table ${tag.trim()} is too short`);
    return t;
  };

  const head = need('head', 54);
  if (u32(b, head.offset + 12) !== 0x5f0f3cf5) throw new FontProblem('head table has a wrong magic number');
  const unitsPerEm = u16(b, head.offset + 18);
  if (unitsPerEm < 16 || unitsPerEm > 16384) throw new FontProblem(`implausible unitsPerEm ${unitsPerEm}`);
  const locFormat = u16(b, head.offset + 50);
  // The whole file sums to 0xB1B0AFBA (head.checkSumAdjustment makes it so).
  if (sfntChecksum(b, 0, b.length) !== 0xb1b0afba) throw new FontProblem('the file does not match its checksum (damaged or modified file)');

  const maxp = need('maxp', 6);
  const numGlyphs = u16(b, maxp.offset + 4);
  if (numGlyphs < 1) throw new FontProblem('the font has no glyphs');
  need('cmap', 4);
  need('name', 6);
  const hhea = need('hhea', 36);
  const hMetrics = u16(b, hhea.offset + 34);
  if (hMetrics < 1 || hMetrics > numGlyphs) throw new FontProblem(`hhea declares ${hMetrics} metrics for ${numGlyphs} glyphs`);
  const hmtx = need('hmtx', 4 * hMetrics + 2 * (numGlyphs - hMetrics));
  void hmtx;

  if (flavor === 'truetype') {
    if (locFormat > 1) throw new FontProblem(`unknown glyph index format ${locFormat}`);
    const glyf = need('glyf', 0);
    const entry = locFormat === 0 ? 2 : 4;
    // A glyph count larger than the glyph index: what "huge glyph count" fonts do.
    const loca = need('loca', (numGlyphs + 1) * entry);
    let prev = 0;
    for (let i = 0; i <= numGlyphs; i++) {
      const at = loca.offset + i * entry;
      const off = entry === 2 ? u16(b, at) * 2 : u32(b, at);
      if (off < prev || off > glyf.length) throw new FontProblem(`glyph ${Math.max(0, i - 1)} points outside the glyph table`);
      prev = off;
    }
  } else if (!get('CFF ') && !get('CFF2')) {
    throw new FontProblem('an OpenType (CFF) font without a CFF table');
  }
  return { flavor, numGlyphs, unitsPerEm, tables };
}

export interface Woff2Header {
  flavor: number;
  numTables: number;
  totalSfntSize: number;
  totalCompressedSize: number;
}

/**
 * Checks a WOFF2 header before anything is decompressed: the decoded size is capped and must be
 * plausible for the compressed size, so a small file cannot unpack into gigabytes (a zip bomb).
 */
export function checkWoff2Header(b: Uint8Array): Woff2Header {
  if (b.length < 48) throw new FontProblem('the WOFF2 file is too short');
  if (u32(b, 0) !== 0x774f4632) throw new FontProblem('not a WOFF2 file');
  const flavor = u32(b, 4);
  if (flavor === 0x74746366) throw new FontProblem('font collections are not accepted: upload one font');
  if (u32(b, 8) !== b.length) throw new FontProblem('the WOFF2 header length does not match the file (truncated file)');
  const numTables = u16(b, 12);
  if (numTables < 1 || numTables > 64) throw new FontProblem(`implausible table count ${numTables}`);
  const totalSfntSize = u32(b, 16);
  const totalCompressedSize = u32(b, 20);
  if (totalCompressedSize > b.length) throw new FontProblem('the compressed data is larger than the file (truncated file)');
  if (totalSfntSize > MAX_SFNT_BYTES) throw new FontProblem(`the font would decompress to ${totalSfntSize} bytes; at most ${MAX_SFNT_BYTES} are accepted`);
  // Brotli on font tables gets about 3-5x; 100x is what only a bomb claims.
  if (totalSfntSize > 100 * Math.max(1, totalCompressedSize) + 65536)
    throw new FontProblem('implausible compression ratio (refused as a possible decompression bomb)');
  return { flavor, numTables, totalSfntSize, totalCompressedSize };
}

/** The file's format from its first bytes. */
export function sniffFontFormat(b: Uint8Array): 'ttf' | 'otf' | 'woff2' | 'woff' | 'collection' | null {
  if (b.length < 4) return null;
  const v = u32(b, 0);
  if (v === 0x00010000 || v === 0x74727565) return 'ttf';
  if (v === 0x4f54544f) return 'otf';
  if (v === 0x774f4632) return 'woff2';
  if (v === 0x774f4646) return 'woff';
  if (v === 0x74746366) return 'collection';
  return null;
}
