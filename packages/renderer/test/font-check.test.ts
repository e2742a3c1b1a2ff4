import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FontRejectedError, inspectFont } from '../src/font-file/inspect-font.ts';
import { checkSfnt } from '../src/font-file/sfnt.ts';
import { BRAND_FAMILY, BRAND_OTF, BRAND_OTF_FAMILY, BRAND_TTF, hostileFontCorpus, toWoff2, type HostileFont } from './helpers/fonts.ts';
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

describe('inspectFont accepts real fonts', () => {
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
