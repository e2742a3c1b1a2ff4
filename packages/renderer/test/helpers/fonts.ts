import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { createRequire } from 'node:module';
import { sfntChecksum } from '../../src/font-file/sfnt.ts';

// Fonts for tests, made at test time from fonts installed on every renderer host (Debian's
// fonts-noto-core, installed by scripts/setup): a "brand" font and a hostile-font corpus.

/** A serif no built-in template uses: the "brand" font of the tests. */
export const BRAND_TTF = '/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf';
export const BRAND_FAMILY = 'Noto Serif';
/** An OpenType font with CFF outlines (Debian's fonts-linuxlibertine, installed by scripts/setup). */
export const BRAND_OTF = '/usr/share/fonts/opentype/linux-libertine/LinLibertine_R.otf';
export const BRAND_OTF_FAMILY = 'Linux Libertine O';

const require = createRequire(import.meta.url);

/** TTF -> WOFF2 with Google's encoder (wawoff2). */
export async function toWoff2(ttf: Uint8Array): Promise<Buffer> {
  const compress = require('wawoff2/compress.js') as (b: Uint8Array) => Promise<Uint8Array>;
  return Buffer.from(await compress(ttf));
}

const u16 = (b: Buffer, o: number) => b.readUInt16BE(o);
const u32 = (b: Buffer, o: number) => b.readUInt32BE(o);

interface Dir {
  tag: string;
  entry: number;
  offset: number;
  length: number;
}

function tableDirectory(b: Buffer): Dir[] {
  const n = u16(b, 4);
  return Array.from({ length: n }, (_, i) => {
    const e = 12 + 16 * i;
    return { tag: b.toString('latin1', e, e + 4), entry: e, offset: u32(b, e + 8), length: u32(b, e + 12) };
  });
}

const table = (b: Buffer, tag: string) => tableDirectory(b).find((t) => t.tag === tag)!;

/** Recomputes every table checksum and head.checkSumAdjustment: the lie is then only structural. */
function fixChecksums(b: Buffer): Buffer {
  const out = Buffer.from(b);
  const dir = tableDirectory(out);
  const head = dir.find((t) => t.tag === 'head');
  if (head) out.writeUInt32BE(0, head.offset + 8);
  for (const t of dir) {
    if (t.offset + t.length <= out.length) out.writeUInt32BE(sfntChecksum(out, t.offset, t.length), t.entry + 4);
  }
  if (head) out.writeUInt32BE((0xb1b0afba - sfntChecksum(out, 0, out.length)) >>> 0, head.offset + 8);
  return out;
}

/** A copy of `font` changed by `edit`, with its checksums made right again. */
function edited(font: Buffer, edit: (b: Buffer) => void): Buffer {
  const b = Buffer.from(font);
  edit(b);
  return fixChecksums(b);
}

/** Deterministic PRNG (mulberry32): the corpus is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface HostileFont {
  name: string;
  bytes: Buffer;
  ext: 'ttf' | 'otf' | 'woff2';
}

/** A WOFF2 whose header declares a decoded size far over the limit (a zip bomb's claim). */
function woff2DeclaringHugeSize(woff2: Buffer): Buffer {
  const b = Buffer.from(woff2);
  b.writeUInt32BE(1024 * 1024 * 1024, 16);
  return b;
}

/**
 * A real zip bomb: a valid WOFF2 header and table directory with a plausible declared size, whose
 * Brotli stream unpacks to 256 MB of zeros (from about 200 bytes).
 */
function woff2Bomb(woff2: Buffer, opts: { padTo?: number } = {}): Buffer {
  const n = u16(woff2, 12);
  // Walk the WOFF2 table directory (variable-length entries) to where the compressed stream starts.
  let o = 48;
  const base128 = () => {
    let v = 0;
    for (let i = 0; i < 5; i++) {
      const c = woff2[o++]!;
      v = v * 128 + (c & 0x7f);
      if ((c & 0x80) === 0) return v;
    }
    throw new Error('bad UIntBase128');
  };
  for (let i = 0; i < n; i++) {
    const flags = woff2[o++]!;
    if ((flags & 0x3f) === 0x3f) o += 4;
    base128();
    const tagIndex = flags & 0x3f;
    const version = (flags >> 6) & 3;
    const transformed = tagIndex === 10 || tagIndex === 11 ? version !== 3 : version !== 0;
    if (transformed) base128();
  }
  const zeros = Buffer.alloc(256 * 1024 * 1024);
  const stream = brotliCompressSync(zeros, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: zeros.length } });
  // Padding after the stream makes the size ratio look like a real font's, so the bomb gets past
  // the header check and reaches the decoder, which must stop at the declared size.
  const padded = opts.padTo && opts.padTo > stream.length ? Buffer.concat([stream, Buffer.alloc(opts.padTo - stream.length)]) : stream;
  const out = Buffer.concat([woff2.subarray(0, o), padded]);
  out.writeUInt32BE(out.length, 8);
  out.writeUInt32BE(padded.length, 20);
  return out;
}

/** A composite glyph made of itself: a font engine that follows components recurses forever. */
function selfReferencingGlyph(b: Buffer): void {
  const head = table(b, 'head');
  const loca = table(b, 'loca');
  const glyf = table(b, 'glyf');
  const long = u16(b, head.offset + 50) === 1;
  const at = (g: number) => (long ? u32(b, loca.offset + 4 * g) : u16(b, loca.offset + 2 * g) * 2);
  // The first glyph past the basic ones that is long enough to rewrite in place.
  for (let g = 30; g < 200; g++) {
    if (at(g + 1) - at(g) < 16) continue;
    const p = glyf.offset + at(g);
    b.writeInt16BE(-1, p); // composite
    b.writeUInt16BE(0x0000, p + 10); // flags: byte args, no more components
    b.writeUInt16BE(g, p + 12); // component = itself
    b.writeInt8(0, p + 14);
    b.writeInt8(0, p + 15);
    return;
  }
  throw new Error('no glyph to rewrite');
}

/**
 * The hostile-font corpus: truncations, wrong and missing tables, huge glyph counts, outlines
 * pointing outside their table, a recursive glyph, WOFF2 bombs and random mutations of a real
 * font. Every one must be refused.
 */
export async function hostileFontCorpus(opts: { mutants?: number } = {}): Promise<HostileFont[]> {
  const ttf = readFileSync(BRAND_TTF);
  const woff2 = await toWoff2(ttf);
  const out: HostileFont[] = [];
  const add = (name: string, bytes: Buffer, ext: HostileFont['ext'] = 'ttf') => out.push({ name, bytes, ext });

  for (const n of [0, 3, 11, 100, 2000, Math.floor(ttf.length / 2), ttf.length - 1]) add(`truncated to ${n} bytes`, ttf.subarray(0, n));
  for (const n of [47, 200, Math.floor(woff2.length / 2), woff2.length - 1]) add(`WOFF2 truncated to ${n} bytes`, woff2.subarray(0, n), 'woff2');
  add('random bytes named .ttf', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24)));
  add('a PNG named .otf', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(500)]), 'otf');

  const ttfEdits: [name: string, edit: (b: Buffer) => void][] = [
    // Wrong tables: a renamed one, a missing required one, a table outside the file, overlapping tables.
    ['unknown table tag (cmap renamed)', (b) => b.write('cmaq', table(b, 'cmap').entry, 'latin1')],
    ['glyph table missing', (b) => b.write('glyF', table(b, 'glyf').entry, 'latin1')],
    ['table offset past the end of the file', (b) => b.writeUInt32BE(ttf.length + 1000, table(b, 'GSUB').entry + 8)],
    ['glyph index overlapping the glyph table', (b) => b.writeUInt32BE(table(b, 'glyf').offset, table(b, 'loca').entry + 8)],
    ['head with a wrong magic number', (b) => b.writeUInt32BE(0xdeadbeef, table(b, 'head').offset + 12)],
    // Huge glyph counts: maxp claims 65535 glyphs; hhea claims more metrics than glyphs.
    ['maxp claims 65535 glyphs', (b) => b.writeUInt16BE(65535, table(b, 'maxp').offset + 4)],
    ['hhea claims 65535 metrics', (b) => b.writeUInt16BE(65535, table(b, 'hhea').offset + 34)],
    ['maxp claims 0 glyphs', (b) => b.writeUInt16BE(0, table(b, 'maxp').offset + 4)],
    [
      'glyph offset outside the glyph table',
      (b) => {
        const l = table(b, 'loca');
        if (u16(b, table(b, 'head').offset + 50) === 1) b.writeUInt32BE(0x7ffffff0, l.offset + 4 * 5);
        else b.writeUInt16BE(0xfff0, l.offset + 2 * 5);
      },
    ],
    ['self-referencing composite glyph', selfReferencingGlyph],
  ];
  for (const [name, edit] of ttfEdits) add(name, edited(ttf, edit));
  add('WOFF2 declaring 1 GB decoded', woff2DeclaringHugeSize(woff2), 'woff2');
  add('WOFF2 zip bomb (256 MB of zeros in the Brotli stream)', woff2Bomb(woff2), 'woff2');
  add('WOFF2 zip bomb padded to a plausible compression ratio', woff2Bomb(woff2, { padTo: Math.ceil(ttf.length / 50) }), 'woff2');
  {
    const garbage = Buffer.from(woff2);
    const r = prng(7);
    for (let i = garbage.length - 2000; i < garbage.length; i++) garbage[i] = Math.floor(r() * 256);
    add('WOFF2 with a garbled Brotli stream', garbage, 'woff2');
  }
  {
    const flavour = Buffer.from(woff2);
    flavour.write('ttcf', 4, 'latin1');
    add('WOFF2 of a font collection', flavour, 'woff2');
  }

  {
    // CFF (OTF) fonts: the same kinds of lies in the other outline format.
    const otf = readFileSync(BRAND_OTF);
    for (const n of [12, 1000, Math.floor(otf.length / 2)]) add(`OTF truncated to ${n} bytes`, otf.subarray(0, n), 'otf');
    const otfEdits: [name: string, edit: (b: Buffer) => void][] = [
      [
        'OTF whose CFF name index claims 65535 entries',
        (b) => {
          const cff = table(b, 'CFF ');
          b.writeUInt16BE(65535, cff.offset + b[cff.offset + 2]!);
        },
      ],
      ['OTF whose CFF table is cut to 64 bytes (wrong table length)', (b) => b.writeUInt32BE(64, table(b, 'CFF ').entry + 12)],
      ['OTF whose maxp claims 65535 glyphs', (b) => b.writeUInt16BE(65535, table(b, 'maxp').offset + 4)],
    ];
    for (const [name, edit] of otfEdits) add(name, edited(otf, edit), 'otf');
  }

  const rand = prng(16);
  for (let i = 0; i < (opts.mutants ?? 40); i++) {
    const m = Buffer.from(ttf);
    const flips = 1 + Math.floor(rand() * 8);
    for (let k = 0; k < flips; k++) {
      const at = Math.floor(rand() * m.length);
      m[at] = (m[at]! ^ (1 + Math.floor(rand() * 255))) & 0xff;
    }
    add(`random mutation #${i} (${flips} bytes)`, m);
  }
  return out;
}

/** A CFF INDEX at `p`: its items' absolute byte ranges and where the INDEX ends. */
function cffIndex(b: Buffer, p: number): { items: { start: number; end: number }[]; end: number } {
  const count = u16(b, p);
  if (count === 0) return { items: [], end: p + 2 };
  const offSize = b[p + 2]!;
  const off = (i: number) => b.readUIntBE(p + 3 + i * offSize, offSize);
  const data = p + 3 + (count + 1) * offSize - 1; // offsets are 1-based
  const items = Array.from({ length: count }, (_, i) => ({ start: data + off(i), end: data + off(i + 1) }));
  return { items, end: data + off(count) };
}

/** The operand of `op` in a CFF DICT (integers only, which is all the offsets are). */
function cffDictOperand(b: Buffer, start: number, end: number, op: number): number | undefined {
  const stack: number[] = [];
  for (let p = start; p < end; ) {
    const b0 = b[p]!;
    if (b0 <= 21) {
      const operator = b0 === 12 ? 1200 + b[p + 1]! : b0;
      if (operator === op) return stack.at(-1);
      stack.length = 0;
      p += b0 === 12 ? 2 : 1;
    } else if (b0 === 28) {
      stack.push(b.readInt16BE(p + 1));
      p += 3;
    } else if (b0 === 29) {
      stack.push(b.readInt32BE(p + 1));
      p += 5;
    } else if (b0 === 30) {
      p++;
      while (p < end && (b[p]! & 0x0f) !== 0x0f && (b[p]! & 0xf0) !== 0xf0) p++;
      p++;
      stack.push(0);
    } else if (b0 >= 32 && b0 <= 246) {
      stack.push(b0 - 139);
      p++;
    } else if (b0 >= 247 && b0 <= 250) {
      stack.push((b0 - 247) * 256 + b[p + 1]! + 108);
      p += 2;
    } else {
      stack.push(-(b0 - 251) * 256 - b[p + 1]! - 108);
      p += 2;
    }
  }
  return undefined;
}

/** Where each glyph's Type 2 charstring lies in an OTF (absolute byte ranges, by glyph id). */
export function cffCharStrings(otf: Buffer): { start: number; end: number }[] {
  const cff = table(otf, 'CFF ');
  const names = cffIndex(otf, cff.offset + otf[cff.offset + 2]!);
  const topDict = cffIndex(otf, names.end).items[0]!;
  const at = cffDictOperand(otf, topDict.start, topDict.end, 17); // CharStrings
  if (at === undefined) throw new Error('no CharStrings in the CFF table');
  return cffIndex(otf, cff.offset + at).items;
}

/**
 * A CFF font with damaged outlines that still parses: bytes inside the charstrings of `glyphs`
 * changed, every checksum fixed, so only the outlines are wrong.
 */
export function damageCharStrings(otf: Buffer, edits: { glyph: number; at: number; byte: number }[]): Buffer {
  const out = Buffer.from(otf);
  const strings = cffCharStrings(out);
  for (const e of edits) {
    const cs = strings[e.glyph]!;
    out[cs.start + (e.at % (cs.end - cs.start))] = e.byte;
  }
  return fixChecksums(out);
}

/**
 * Deterministic random charstring damage of BRAND_OTF: 1 to 4 bytes in the outlines of glyphs
 * `glyphs` (ids) per font, checksums fixed.
 */
export function damagedCffCorpus(glyphs: number[], count: number, seed = 17): HostileFont[] {
  const otf = readFileSync(BRAND_OTF);
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i) => {
    const edits = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({
      glyph: glyphs[Math.floor(rand() * glyphs.length)]!,
      at: Math.floor(rand() * 1_000_000),
      byte: Math.floor(rand() * 256),
    }));
    return { name: `CFF outline damage #${i} (${edits.map((e) => `glyph ${e.glyph}`).join(', ')})`, bytes: damageCharStrings(otf, edits), ext: 'otf' as const };
  });
}

/**
 * A small TrueType font made only of composite glyphs that double: glyph 1 is a triangle, glyph
 * k (up to `depth`) places glyph k-1 twice, and `copies` more glyphs place the deepest one twice,
 * every glyph mapped to a character from U+4E00. Each mapped glyph expands to 2^depth triangles
 * (a "billion laughs" of outlines): a few KB that cost a font engine as much CPU as `depth` and
 * `copies` ask for, with every table, count and checksum sound, so only the work gives it away.
 */
export function compositeBombTtf(o: { depth: number; copies: number; family?: string }): Buffer {
  const numGlyphs = 2 + o.depth + o.copies;
  const i16 = (v: number) => {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    return b;
  };
  const u16s = (...v: number[]) => Buffer.concat(v.map((x) => i16(x > 0x7fff ? x - 0x10000 : x)));
  const u32s = (...v: number[]) => {
    const b = Buffer.alloc(4 * v.length);
    for (const [i, x] of v.entries()) b.writeUInt32BE(x >>> 0, 4 * i);
    return b;
  };
  const bbox = [50, 0, 550, 700];
  // Glyph 0 is empty; glyph 1 a triangle; the rest composites of two copies of one glyph.
  const triangle = Buffer.concat([u16s(1, ...bbox, 2, 0), Buffer.from([1, 1, 1]), u16s(50, 250, 250, 0, 700, -700), Buffer.alloc(1)]);
  const composite = (of: number) => Buffer.concat([u16s(0xffff, ...bbox), u16s(0x0022, of), Buffer.from([0, 0]), u16s(0x0002, of), Buffer.from([0, 0])]);
  const glyphs = [Buffer.alloc(0), triangle];
  for (let k = 2; k < numGlyphs; k++) glyphs.push(composite(Math.min(k - 1, o.depth + 1)));
  const loca: number[] = [0];
  for (const g of glyphs) loca.push(loca.at(-1)! + g.length);
  const first = 0x4e00;
  const last = first + numGlyphs - 2;
  const cmap4 = u16s(4, 16 + 16, 0, 4, 4, 1, 0, last, 0xffff, 0, first, 0xffff, (1 - first) & 0xffff, 1, 0, 0);
  const cmap = Buffer.concat([u16s(0, 1, 3, 1), u32s(12), cmap4]);
  cmap.writeUInt16BE(cmap4.length, 12 + 2);
  const family = Buffer.from(
    (o.family ?? 'Composite Bomb')
      .split('')
      .map((c) => `\0${c}`)
      .join(''),
    'latin1',
  );
  const sub = Buffer.from('\0R\0e\0g\0u\0l\0a\0r', 'latin1');
  const name = Buffer.concat([u16s(0, 2, 6 + 24, 3, 1, 0x409, 1, family.length, 0, 3, 1, 0x409, 2, sub.length, family.length), family, sub]);
  const tables: [string, Buffer][] = [
    ['cmap', cmap],
    ['glyf', Buffer.concat(glyphs)],
    ['head', Buffer.concat([u32s(0x00010000, 0x00010000, 0, 0x5f0f3cf5), u16s(0x000b, 1000), Buffer.alloc(16), u16s(...bbox, 0, 8, 2, 1, 0)])],
    ['hhea', Buffer.concat([u32s(0x00010000), u16s(800, -200, 0, 600, 0, 0, 600, 1, 0, 0, 0, 0, 0, 0, 0, 1)])],
    ['hmtx', Buffer.concat([u16s(600, 0), Buffer.alloc(2 * (numGlyphs - 1))])],
    ['loca', u32s(...loca)],
    [
      'maxp',
      Buffer.concat([
        u32s(0x00010000),
        u16s(numGlyphs, 3, 1, Math.min(0xffff, 3 * 2 ** o.depth), Math.min(0xffff, 2 ** o.depth), 2, 0, 0, 0, 0, 0, 0, 2, o.depth + 2),
      ]),
    ],
    ['name', name],
    ['post', Buffer.concat([u32s(0x00030000, 0), u16s(-100, 50), u32s(0, 0, 0, 0, 0)])],
  ];
  const dirLength = 12 + 16 * tables.length;
  const parts: Buffer[] = [u32s(0x00010000), u16s(tables.length, 128, 3, tables.length * 16 - 128), Buffer.alloc(16 * tables.length)];
  let at = dirLength;
  tables.forEach(([tag, data], i) => {
    const e = parts[2]!;
    e.write(tag, 16 * i, 'latin1');
    e.writeUInt32BE(at, 16 * i + 8);
    e.writeUInt32BE(data.length, 16 * i + 12);
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
    parts.push(padded);
    at += padded.length;
  });
  return fixChecksums(Buffer.concat(parts));
}
