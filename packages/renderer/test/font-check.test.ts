import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FontRejectedError, cpuBudgetMs, inspectFont } from '../src/font-file/inspect-font.ts';
import { checkSfnt } from '../src/font-file/sfnt.ts';
import { GlobalFonts, createCanvas } from '@napi-rs/canvas';
import * as fontkit from 'fontkit';
import {
  BRAND_FAMILY,
  BRAND_OTF,
  BRAND_OTF_FAMILY,
  BRAND_TTF,
  cffCharStrings,
  compositeBombTtf,
  damageCharStrings,
  damagedCffCorpus,
  hostileFontCorpus,
  toWoff2,
  type HostileFont,
} from './helpers/fonts.ts';
import { tempDir } from './helpers/media.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

async function inspect(bytes: Uint8Array, name: string) {
  const input = join(dir, name);
  const output = join(dir, `${name}.sfnt`);
  await writeFile(input, bytes);
  const report = await inspectFont({ input, output });
  return { report, sfnt: await readFile(output) };
}

// Each check is a child process reading every glyph: tens of seconds of wall time on a loaded 2-core machine.
describe('inspectFont accepts real fonts', { timeout: 180_000 }, () => {
  it('a TTF: family, weight, glyphs and the sha256 of its bytes', async () => {
    const ttf = await readFile(BRAND_TTF);
    const { report, sfnt } = await inspect(ttf, 'brand.ttf');
    expect(report).toMatchObject({ format: 'ttf', outline: 'truetype', family: BRAND_FAMILY, weight: 400, italic: false, sfntBytes: ttf.length });
    expect(report.glyphs).toBeGreaterThan(1000);
    expect(sfnt.equals(ttf)).toBe(true);
    expect(report.sha256).toBe(createHash('sha256').update(ttf).digest('hex'));
  });

  it('a WOFF2: decoded to a checked TTF with the same glyphs', async () => {
    const ttf = await readFile(BRAND_TTF);
    const { report, sfnt } = await inspect(await toWoff2(ttf), 'brand.woff2');
    expect(report).toMatchObject({ format: 'woff2', outline: 'truetype', family: BRAND_FAMILY, weight: 400 });
    expect(checkSfnt(sfnt).numGlyphs).toBe(checkSfnt(ttf).numGlyphs);
    expect(report.sha256).toBe(createHash('sha256').update(sfnt).digest('hex'));
  });

  it('an OTF (CFF outlines): kept byte for byte, with its family and glyphs', async () => {
    const otf = await readFile(BRAND_OTF);
    const { report, sfnt } = await inspect(otf, 'brand.otf');
    expect(report).toMatchObject({ format: 'otf', outline: 'cff', family: BRAND_OTF_FAMILY, weight: 400, italic: false, sfntBytes: otf.length });
    expect(report.glyphs).toBe(checkSfnt(otf).numGlyphs);
    expect(sfnt.equals(otf)).toBe(true);
  });

  it("a font that needs more of the checker's CPU time than allowed is refused, not waited for", async () => {
    const input = join(dir, 'slow.ttf');
    await writeFile(input, await readFile(BRAND_TTF));
    const err = await inspectFont({ input, output: `${input}.sfnt`, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FontRejectedError);
    expect((err as Error).message).toBe('the font took too long to read (refused as a possible attack)');
  });

  it("a small font's CPU budget is small: 1.5 KB of doubling composite glyphs is refused after 5 CPU-s, not 20", async () => {
    const bomb = compositeBombTtf({ depth: 16, copies: 20 });
    expect(cpuBudgetMs(bomb.length)).toBe(5_007);
    expect(cpuBudgetMs(4 * 1024 * 1024)).toBe(20_000);
    const input = join(dir, 'bomb.ttf');
    await writeFile(input, bomb);
    const err = await inspectFont({ input, output: `${input}.sfnt` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FontRejectedError);
    expect((err as Error).message).toBe('the font took too long to read (refused as a possible attack)');
    // Charged at its budget (the control plane counts it against the account).
    expect((err as FontRejectedError).cpuMs).toBeGreaterThanOrEqual(5_007);
    expect((err as FontRejectedError).cpuMs).toBeLessThan(20_000);
  });

  it('a bold font reports its weight', async () => {
    const { report } = await inspect(await readFile(BRAND_TTF.replace('Regular', 'Bold')), 'bold.ttf');
    expect(report.weight).toBe(700);
  });
});

describe('the hostile-font corpus', () => {
  let corpus: HostileFont[];
  beforeAll(async () => {
    corpus = await hostileFontCorpus();
  });

  it('is made of what the issue names', () => {
    const names = corpus.map((c) => c.name).join('\n');
    for (const kind of ['truncated', 'unknown table', 'missing', '65535 glyphs', 'zip bomb', 'random mutation', 'OTF', 'CFF table is cut'])
      expect(names).toContain(kind);
    expect(corpus.length).toBeGreaterThan(60);
  });

  it('every file is refused with a reason, and the checker process survives each one', async () => {
    const originals = [await readFile(BRAND_TTF), await readFile(BRAND_OTF)];
    const verdicts: string[] = [];
    for (const [i, c] of corpus.entries()) {
      if (originals.some((o) => c.bytes.equals(o))) continue; // a mutation that flipped a byte back
      const started = Date.now();
      const err = await inspect(c.bytes, `hostile-${i}.${c.ext}`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, c.name).toBeInstanceOf(FontRejectedError);
      expect((err as Error).message.length, c.name).toBeGreaterThan(10);
      verdicts.push(`${c.name}: ${(err as Error).message} (${Date.now() - started} ms)`);
    }
    // The reasons are specific, not one catch-all.
    const reasons = new Set(
      verdicts.map((v) =>
        v
          .replace(/^.*?: /, '')
          .replace(/ \(\d+ ms\)$/, '')
          .replace(/\d+/g, 'N'),
      ),
    );
    expect(reasons.size).toBeGreaterThan(8);
    console.log(verdicts.join('\n'));
  }, 600_000);
});

// A CFF font whose outlines are damaged but whose tables and checksums are sound still parses; the
// checker reads every character's outline through Skia (FreeType, the engine that draws the captions)
// and fontkit, and refuses what they cannot agree is a glyph, so the odd glyph never reaches a video.
describe('CFF fonts with damaged outlines and fixed checksums', () => {
  let otf: Buffer;
  let font: fontkit.Font;
  beforeAll(async () => {
    otf = await readFile(BRAND_OTF);
    font = fontkit.create(otf) as fontkit.Font;
  });

  /** Skia's bounds of `text` in a font (64 px), as the renderer measures it: empty when it draws nothing. */
  const skiaBounds = (bytes: Buffer, text: string) => {
    const alias = `cf-test-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
    if (!GlobalFonts.has(alias)) GlobalFonts.register(bytes, alias);
    const ctx = createCanvas(8, 8).getContext('2d');
    ctx.font = `64px "${alias}"`;
    const m = ctx.measureText(text);
    return [-m.actualBoundingBoxLeft, -m.actualBoundingBoxDescent, m.actualBoundingBoxRight, m.actualBoundingBoxAscent];
  };
  const empty = (b: number[]) => !(b[2]! > b[0]! || b[3]! > b[1]!);

  it('"a" whose charstring ends in return, not endchar: fontkit still reads it, Skia draws nothing; refused', async () => {
    const a = font.glyphForCodePoint(0x61).id;
    const cs = cffCharStrings(otf)[a]!;
    expect(otf[cs.end - 1]).toBe(14); // endchar
    const damaged = damageCharStrings(otf, [{ glyph: a, at: cs.end - cs.start - 1, byte: 11 }]); // return
    // The damage the issue names: the font parses, its checksums hold, fontkit still sees the outline...
    expect(checkSfnt(damaged).numGlyphs).toBe(font.numGlyphs);
    expect((fontkit.create(damaged) as fontkit.Font).getGlyph(a).path.commands.length).toBe(font.getGlyph(a).path.commands.length);
    // ...but the renderer's engine gives up on it: an "a" would be missing from every caption.
    expect(empty(skiaBounds(damaged, 'a'))).toBe(true);
    expect(empty(skiaBounds(otf, 'a'))).toBe(false);
    const err = await inspect(damaged, 'return-a.otf').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FontRejectedError);
    expect((err as Error).message).toBe('the renderer draws U+0061 as nothing although it has an outline: the outline is damaged');
  });

  it('fuzz: random charstring damage to letters is refused whenever an engine cannot read it, or Skia draws an outlined letter as nothing or far off', async () => {
    const letters = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'];
    const glyphOf = new Map(letters.map((l) => [font.glyphForCodePoint(l.codePointAt(0)!).id, l]));
    const corpus = damagedCffCorpus([...glyphOf.keys()], 16);
    const tally = { refused: 0, accepted: 0, acceptedVisiblyChanged: 0 };
    const lines: string[] = [];
    for (const [i, c] of corpus.entries()) {
      const ids = [...c.name.matchAll(/glyph (\d+)/g)].map((m) => Number(m[1]));
      const touched = [...new Set(ids.map((g) => glyphOf.get(g)!))];
      const verdict = await inspect(c.bytes, `cff-damage-${i}.otf`).then(
        () => 'accepted',
        (e: unknown) => {
          // A verdict, never a crash of the caller or a hang: refusals name why.
          expect(e, c.name).toBeInstanceOf(FontRejectedError);
          return (e as Error).message;
        },
      );
      // The oracle: how the renderer (Skia) draws each damaged letter against the sound font, and
      // whether the other engine (fontkit) still reads an outline there or throws on it.
      const damaged = fontkit.create(c.bytes) as fontkit.Font;
      const broken = touched.filter((l) => {
        let inked: boolean;
        try {
          const box = damaged.glyphForCodePoint(l.codePointAt(0)!).path.cbox;
          inked = Number.isFinite(box.minX) && (box.maxX > box.minX || box.maxY > box.minY);
        } catch {
          return true; // the outline cannot be read at all
        }
        const after = skiaBounds(c.bytes, l);
        return (inked && empty(after) && !empty(skiaBounds(otf, l))) || after.some((v) => Math.abs(v) > 64 * 4);
      });
      const changed = touched.filter((l) => skiaBounds(otf, l).some((v, k) => Math.abs(v - skiaBounds(c.bytes, l)[k]!) > 64 * 0.1));
      if (verdict === 'accepted') {
        tally.accepted++;
        if (changed.length > 0) tally.acceptedVisiblyChanged++;
        expect(broken, `${c.name} was accepted, yet the renderer draws ${broken.join(', ')} as nothing or far off`).toEqual([]);
      } else tally.refused++;
      lines.push(`${c.name}: ${verdict}${changed.length ? ` (bounds changed: ${changed.join('')})` : ''}`);
    }
    console.log(`${lines.join('\n')}\n${JSON.stringify(tally)}`);
    // Not vacuous: the corpus holds damage the checker refuses.
    expect(tally.refused).toBeGreaterThan(0);
  }, 600_000);
});
