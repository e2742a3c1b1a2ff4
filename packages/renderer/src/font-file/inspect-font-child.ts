// Runs in a child process (see inspect-font.ts): everything that parses an untrusted font happens
// here, so a font that crashes, loops or exhausts memory takes down only this process.
// argv: <input path> <output path for the sfnt>. Prints one JSON line.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { GlobalFonts, createCanvas, type SKRSContext2D } from '../paint/canvas.ts';
import * as fontkit from 'fontkit';
import { decodeFontFile } from './decode.ts';
import { FontProblem, type SfntTable } from './sfnt.ts';

/** Glyphs drawn by Skia: enough to touch every kind of outline the font uses. */
const SKIA_SAMPLE = 400;
/**
 * Characters whose outline Skia reads one by one (all of them in most fonts; a CJK font's
 * tens of thousands are sampled evenly after every Latin, Greek and Cyrillic one), so a check
 * stays bounded: measured, Noto Serif's 2,838 characters took 1.7 s at load 35 on 2 cores (fontkit's pass over
 * every glyph, which the check already had, 7.3 s).
 */
const SKIA_OUTLINE_CHECKS = 4000;
/**
 * An outline reaching further than this (em) left of its origin or right of its advance, or above or
 * below the baseline, is damage, not design: real fonts stay within about 1 em of their advance and
 * 2.5 em of the baseline, and a wide glyph (Linux Biolinum's 6.3 em U+E008) has the advance to match.
 */
const MAX_OVERHANG_EM = 2;
const MAX_HEIGHT_EM = 4;
/** How far two engines' bounds of one CFF outline may differ (Skia measures at 64 px: 1 px is 1/64 em). */
const CFF_BOUNDS_TOLERANCE_EM = 0.1;
/**
 * Characters without ink by design: spaces, controls, format and default-ignorable characters (the
 * shaper hides them), and U+FFFC, which Skia's text layout keeps for embedded objects and never draws.
 */
const INKLESS = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\uFFFC]$/u;

async function main(): Promise<void> {
  const [input, output] = process.argv.slice(2);
  const { format, sfnt, info } = await decodeFontFile(readFileSync(input!));
  const buf = Buffer.from(sfnt.buffer, sfnt.byteOffset, sfnt.byteLength);

  // fontkit reads CFF outlines through offsets relative to the table's start and never checks them
  // against the table's declared length: it would follow a lie into the next table. It reads a copy
  // whose outline table is moved to the very end of the buffer, so any read past that table's
  // declared end falls off the buffer and throws.
  const parsed = fontkit.create(
    withTableAtEnd(
      buf,
      info.tables.find((t) => t.tag === 'CFF ' || t.tag === 'CFF2'),
    ),
  );
  if ('fonts' in parsed) throw new FontProblem('font collections are not accepted: upload one font');
  const font = parsed;
  if (font.numGlyphs !== info.numGlyphs) throw new FontProblem('the font engine counts a different number of glyphs than the font declares');
  const family = (font.familyName ?? '').trim();
  if (!family) throw new FontProblem('the font has no family name');
  const chars = font.characterSet.filter((c) => c > 0x20 && c !== 0x7f && c < 0x110000);
  if (chars.length === 0) throw new FontProblem('the font maps no characters');
  // Every glyph's outline and metrics, as the renderer might need them.
  for (let g = 0; g < font.numGlyphs; g++) {
    const glyph = font.getGlyph(g);
    const bbox = glyph.path.bbox;
    if (![glyph.advanceWidth, bbox.minX, bbox.maxX, bbox.minY, bbox.maxY].every((v) => Number.isFinite(v) || v === Infinity || v === -Infinity)) {
      throw new FontProblem(`glyph ${g} has no valid outline`);
    }
    if (Number.isFinite(bbox.minX) && outOfBounds(bbox, glyph.advanceWidth, font.unitsPerEm)) {
      throw new FontProblem(`glyph ${g}'s outline reaches far outside its box (${boundsText(bbox, font.unitsPerEm)}): it is damaged`);
    }
  }
  const sample = String.fromCodePoint(...chars.slice(0, 64));
  font.layout(sample);

  // Skia, which draws the captions, reads the font too.
  const alias = `cf-check-${process.pid}`;
  GlobalFonts.register(buf, alias);
  if (!GlobalFonts.has(alias)) throw new FontProblem('the renderer cannot load this font');
  const ctx = createCanvas(256, 128).getContext('2d');
  ctx.font = `64px "${alias}"`;
  checkOutlinesInSkia(ctx, font, chars, info.flavor === 'cff');
  // Then draw the first mapped characters with it.
  let ink = 0;
  for (let i = 0; i < Math.min(chars.length, SKIA_SAMPLE); i += 8) {
    ctx.clearRect(0, 0, 256, 128);
    ctx.fillStyle = '#fff';
    ctx.fillText(String.fromCodePoint(...chars.slice(i, i + 8)), 4, 90);
    const d = ctx.getImageData(0, 0, 256, 128).data;
    for (let p = 3; p < d.length; p += 4) if (d[p]! > 0) ink++;
  }
  if (ink === 0) throw new FontProblem('none of the font’s characters draws anything');

  writeFileSync(output!, buf);
  const os2 = (font as unknown as { 'OS/2'?: { usWeightClass?: number; fsSelection?: { italic?: boolean } } })['OS/2'];
  const rawWeight = os2?.usWeightClass ?? 400;
  const weight = Math.min(900, Math.max(100, Math.round((rawWeight >= 1 && rawWeight <= 9 ? rawWeight * 100 : rawWeight) / 100) * 100));
  process.stdout.write(
    `${JSON.stringify({
      ok: true,
      font: {
        format,
        outline: info.flavor,
        family: family.slice(0, 200),
        subfamily: (font.subfamilyName ?? '').trim().slice(0, 200),
        weight,
        italic: Boolean(os2?.fsSelection?.italic) || font.italicAngle !== 0,
        glyphs: font.numGlyphs,
        sfntBytes: buf.length,
        sha256: createHash('sha256').update(buf).digest('hex'),
      },
    })}\n`,
  );
}

/**
 * Each character's outline as Skia reads it (FreeType, the engine that draws the captions): a
 * damaged outline whose table still parses, with checksums fixed, must not reach a video as an odd
 * glyph. Refused: a character fontkit finds ink for that Skia draws as nothing (FreeType gave up on
 * its outline), bounds far outside the glyph's box (see outOfBounds), and, in CFF fonts, bounds that differ between the two
 * engines (fontkit's control box against FreeType's, which CFF outlines, lacking composite glyphs,
 * give identically in a sound font). Damage that both engines read as the same plausible outline, or
 * as the same empty one, cannot be told from design (Linux Libertine Italic ships an empty U+012F),
 * and is accepted.
 */
function checkOutlinesInSkia(ctx: SKRSContext2D, font: fontkit.Font, chars: number[], cff: boolean): void {
  const em = 64; // ctx.font's size in px
  const scale = em / font.unitsPerEm;
  const hex = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const c of outlineSample(chars.filter((ch) => !INKLESS.test(String.fromCodePoint(ch))))) {
    const cbox = font.glyphForCodePoint(c).path.cbox;
    const inked = Number.isFinite(cbox.minX) && (cbox.maxX > cbox.minX || cbox.maxY > cbox.minY);
    const m = ctx.measureText(String.fromCodePoint(c));
    const sk = { minX: -m.actualBoundingBoxLeft, maxX: m.actualBoundingBoxRight, minY: -m.actualBoundingBoxDescent, maxY: m.actualBoundingBoxAscent };
    const values = Object.values(sk);
    if (!values.every(Number.isFinite)) throw new FontProblem(`the renderer cannot measure ${hex(c)}: its outline is damaged`);
    const drawn = sk.maxX > sk.minX || sk.maxY > sk.minY;
    if (inked && !drawn) throw new FontProblem(`the renderer draws ${hex(c)} as nothing although it has an outline: the outline is damaged`);
    if (drawn && outOfBounds(sk, m.width, em)) {
      throw new FontProblem(`the renderer draws ${hex(c)} far outside its box (${boundsText(sk, em)}): its outline is damaged`);
    }
    if (cff && inked && drawn) {
      const off = Math.max(
        Math.abs(cbox.minX * scale - sk.minX),
        Math.abs(cbox.maxX * scale - sk.maxX),
        Math.abs(cbox.minY * scale - sk.minY),
        Math.abs(cbox.maxY * scale - sk.maxY),
      );
      if (off > CFF_BOUNDS_TOLERANCE_EM * em)
        throw new FontProblem(`two font engines read ${hex(c)}'s outline differently (by ${(off / em).toFixed(2)} em): the outline is damaged`);
    }
  }
}

interface Bounds {
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

/** Bounds (in units of `em` per em) beyond MAX_OVERHANG_EM of the [0, advance] span, or MAX_HEIGHT_EM of the baseline. */
function outOfBounds(b: Bounds, advance: number, em: number): boolean {
  const over = MAX_OVERHANG_EM * em;
  const high = MAX_HEIGHT_EM * em;
  return b.minX < -over || b.maxX > Math.max(0, advance) + over || b.minY < -high || b.maxY > high;
}

const boundsText = (b: Bounds, em: number) => `${[b.minX, b.minY, b.maxX, b.maxY].map((v) => (v / em).toFixed(1)).join(', ')} em`;

/** At most SKIA_OUTLINE_CHECKS characters: every one below U+0530 (Latin, Greek, Cyrillic), then an even spread of the rest. */
function outlineSample(chars: number[]): number[] {
  if (chars.length <= SKIA_OUTLINE_CHECKS) return chars;
  const first = chars.filter((c) => c < 0x530).slice(0, SKIA_OUTLINE_CHECKS / 2);
  const rest = chars.filter((c) => c >= 0x530);
  const room = SKIA_OUTLINE_CHECKS - first.length;
  return [...first, ...Array.from({ length: room }, (_, i) => rest[Math.floor((i * rest.length) / room)]!)];
}

/** A copy of the sfnt whose `table` is re-pointed to a copy of itself at the end of the buffer. */
function withTableAtEnd(b: Buffer, table: SfntTable | undefined): Buffer {
  if (!table) return b;
  const at = Math.ceil(b.length / 4) * 4;
  const out = Buffer.alloc(at + table.length);
  b.copy(out, 0);
  b.copy(out, at, table.offset, table.offset + table.length);
  const n = b.readUInt16BE(4);
  for (let i = 0; i < n; i++) {
    const e = 12 + 16 * i;
    if (b.toString('latin1', e, e + 4) === table.tag) out.writeUInt32BE(at, e + 8);
  }
  return out;
}

main().catch((err: unknown) => {
  const reason =
    err instanceof FontProblem ? err.message : `the font could not be read (${err instanceof Error ? err.message.slice(0, 200) : 'unknown error'})`;
  process.stdout.write(`${JSON.stringify({ ok: false, reason })}\n`);
  process.exitCode = 0;
});
