// Runs in a child process (see inspect-font.ts): everything that parses an untrusted font happens
// here, so a font that crashes, loops or exhausts memory takes down only this process.
// argv: <input path> <output path for the sfnt>. Prints one JSON line.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { GlobalFonts, createCanvas } from '@napi-rs/canvas';
import * as fontkit from 'fontkit';
import { decodeFontFile } from './decode.ts';
import { FontProblem, type SfntTable } from './sfnt.ts';

/** Glyphs drawn by Skia: enough to touch every kind of outline the font uses. */
const SKIA_SAMPLE = 400;

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
  }
  const sample = String.fromCodePoint(...chars.slice(0, 64));
  font.layout(sample);

  // Skia, which draws the captions, reads the font too: draw the first mapped characters with it.
  const alias = `cf-check-${process.pid}`;
  GlobalFonts.register(buf, alias);
  if (!GlobalFonts.has(alias)) throw new FontProblem('the renderer cannot load this font');
  const ctx = createCanvas(256, 128).getContext('2d');
  ctx.font = `64px "${alias}"`;
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
