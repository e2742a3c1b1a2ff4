import { describe, expect, it } from 'vitest';
import { createCanvas } from '@napi-rs/canvas';
import type { Word } from '@captionfarm/contracts';
import { applyStyle, backgroundRects, parseTemplate, safeArea, type Rect, type StyleInput, type Template } from '@captionfarm/captions';
import { createBandPainter } from '../src/paint/index.ts';

// Each field a per-job style can override changes what it names and nothing else: every case
// renders the same words at the same moment with and without the override and compares pixels.
// "Nothing else" is checked on pixels: outside the region the field names, the two frames are
// identical (exact RGBA equality, not a tolerance), and inside it the change is the named one.

const W = 720;
const H = 720;
const STEP = 0.4;
/** Word 1 ("love") is being spoken; every word of the first page is on screen. */
const T = 1 * STEP + 0.2;

function speak(text: string): Word[] {
  return text.split(' ').map((t, i) => ({ text: t, start: i * STEP, end: i * STEP + STEP * 0.9, confidence: 1 }));
}
const WORDS = speak('We love these brand new captions');

// The base look: white fill, black outline, the spoken word in cyan, centred in the safe area.
const BASE = parseTemplate({ id: 'base', name: 'Base', active: { color: '#22D3EE' }, position: { y: 0.5 } });

interface Img {
  data: Uint8ClampedArray;
  w: number;
  h: number;
}

function styled(style: StyleInput, base: Template = BASE): Template {
  const r = applyStyle(base, style);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.template;
}

/** The whole frame (transparent outside the band) with the captions at t. */
function render(template: Template, opts: { t?: number; words?: Word[] } = {}) {
  const painter = createBandPainter({ words: opts.words ?? WORDS, template, width: W, height: H, fps: 30 });
  const band = createCanvas(painter.band.width, painter.band.height);
  painter.paint(band.getContext('2d'), opts.t ?? T);
  const frame = createCanvas(W, H);
  const ctx = frame.getContext('2d');
  ctx.drawImage(band, painter.band.x, painter.band.y);
  return { img: { data: ctx.getImageData(0, 0, W, H).data, w: W, h: H } as Img, layout: painter.layout };
}

const px = (img: Img, x: number, y: number) => {
  const i = (y * img.w + x) * 4;
  return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!, img.data[i + 3]!] as const;
};
const hex = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
const is = (p: readonly number[], color: string, alpha = 255) => {
  const [r, g, b] = hex(color);
  return p[0] === r && p[1] === g && p[2] === b && p[3] === alpha;
};
/** Equal within `tol` per channel: Skia's text contrast turns the same coverage into 252..255 depending on the colour. */
const near = (p: readonly number[], color: string, tol = 4, alpha = 255) => hex(color).every((c, i) => Math.abs(p[i]! - c) <= tol) && p[3] === alpha;
/** Largest per-channel difference of two pixels. */
const delta = (p: readonly number[], q: readonly number[]) => Math.max(...p.map((c, i) => Math.abs(c - q[i]!)));
const inside = (r: Rect, x: number, y: number, pad = 0) => x >= r.x - pad && x < r.x + r.width + pad && y >= r.y - pad && y < r.y + r.height + pad;

/** Pixels whose RGBA differ between a and b. */
function changed(a: Img, b: Img): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let y = 0; y < a.h; y++) {
    for (let x = 0; x < a.w; x++) {
      const i = (y * a.w + x) * 4;
      if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2] || a.data[i + 3] !== b.data[i + 3]) out.push([x, y]);
    }
  }
  return out;
}

function count(img: Img, test: (p: readonly number[], x: number, y: number) => boolean): number {
  let n = 0;
  for (let y = 0; y < img.h; y++) for (let x = 0; x < img.w; x++) if (test(px(img, x, y), x, y)) n++;
  return n;
}

/** Bounding box of every pixel that is not fully transparent. */
function inkBox(img: Img, where: (x: number, y: number) => boolean = () => true): Rect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (let y = 0; y < img.h; y++) {
    for (let x = 0; x < img.w; x++) {
      if (px(img, x, y)[3] === 0 || !where(x, y)) continue;
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
  }
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Rows of text: runs of pixel rows holding ink, separated by empty rows. */
function inkRows(img: Img): Array<{ top: number; bottom: number }> {
  const rows: Array<{ top: number; bottom: number }> = [];
  let open: { top: number; bottom: number } | null = null;
  for (let y = 0; y < img.h; y++) {
    let any = false;
    for (let x = 0; x < img.w && !any; x++) any = px(img, x, y)[3]! > 0;
    if (any && !open) open = { top: y, bottom: y };
    else if (any && open) open.bottom = y;
    else if (!any && open) {
      rows.push(open);
      open = null;
    }
  }
  if (open) rows.push(open);
  return rows;
}

/** A word's box in frame pixels (advance width, cap height to descender), padded by the outline. */
function wordRect(layout: ReturnType<typeof render>['layout'], unit: number, pad = 0): Rect {
  const u = layout.units[unit]!;
  const k = u.fontPx / layout.font.sizePx;
  const top = u.baseline - layout.capHeight * k;
  return { x: u.x - pad, y: top - pad, width: u.width + 2 * pad, height: (layout.capHeight + layout.descender) * k + 2 * pad };
}

/** The changed pixels that lie outside every allowed rect. */
const strayChanges = (diff: Array<[number, number]>, allowed: Rect[]) => diff.filter(([x, y]) => !allowed.some((r) => inside(r, x, y)));

const base = render(BASE);
const fontPx = base.layout.font.sizePx;
const outlinePx = BASE.outline!.width * fontPx;

describe('the base frame the fields are compared against', () => {
  it('has white fill, black outline and the cyan spoken word, on two lines', () => {
    expect(count(base.img, (p) => is(p, '#FFFFFF'))).toBeGreaterThan(2000);
    expect(count(base.img, (p) => is(p, '#000000'))).toBeGreaterThan(1000);
    expect(count(base.img, (p) => is(p, '#22D3EE'))).toBeGreaterThan(200);
    expect(inkRows(base.img)).toHaveLength(2);
  });
});

describe('colours', () => {
  it('fill: every fill pixel takes the new colour; shape, outline and the spoken word are untouched', () => {
    const s = render(styled({ fill: '#00FF00' }));
    const diff = changed(base.img, s.img);
    expect(diff.length).toBeGreaterThan(2000);
    for (const [x, y] of diff) {
      const [b, n] = [px(base.img, x, y), px(s.img, x, y)];
      expect(n[3], 'alpha').toBe(b[3]);
      // Only pixels that held some fill (white, or white blended into the outline) change.
      expect(b[1]! > 0 && !is(b, '#22D3EE'), `(${x},${y}) ${b} -> ${n}`).toBe(true);
    }
    expect(count(base.img, (p, x, y) => is(p, '#FFFFFF') && !near(px(s.img, x, y), '#00FF00'))).toBe(0);
  });

  it('active.color: only the spoken word changes colour', () => {
    const s = render(styled({ active: { color: '#FF00FF' } }));
    const diff = changed(base.img, s.img);
    expect(diff.length).toBeGreaterThan(200);
    expect(strayChanges(diff, [wordRect(base.layout, 1, outlinePx + 2)])).toEqual([]);
    expect(count(base.img, (p, x, y) => is(p, '#22D3EE') && !is(px(s.img, x, y), '#FF00FF'))).toBe(0);
  });

  it('outline.color: outline pixels change, fill pixels and alpha do not', () => {
    const s = render(styled({ outline: { color: '#FF0000' } }));
    const diff = changed(base.img, s.img);
    expect(diff.length).toBeGreaterThan(1000);
    // Same shape: Skia's text contrast adjusts the coverage of edge pixels a little with the colour's luminance.
    for (const [x, y] of diff) {
      const [a, b] = [px(base.img, x, y)[3]!, px(s.img, x, y)[3]!];
      expect(a === 255 ? b === 255 : Math.abs(a - b) <= 24, `(${x},${y}) alpha ${a} -> ${b}`).toBe(true);
    }
    expect(count(base.img, (p, x, y) => (is(p, '#FFFFFF') || is(p, '#22D3EE')) && px(s.img, x, y).join() !== p.join())).toBe(0);
    expect(count(base.img, (p, x, y) => is(p, '#000000') && !near(px(s.img, x, y), '#FF0000'))).toBe(0);
  });

  it('upcoming / spoken: words not yet spoken and words already spoken take their own look, the rest stays', () => {
    const s = render(styled({ upcoming: { color: '#FF8800' }, spoken: { opacity: 0.5 } }));
    const diff = changed(base.img, s.img);
    const spokenRect = wordRect(base.layout, 0, outlinePx + 2);
    const upcomingRects = [2, 3, 4, 5].map((u) => wordRect(base.layout, u, outlinePx + 2));
    expect(strayChanges(diff, [spokenRect, ...upcomingRects])).toEqual([]);
    // The spoken word is the same colour at half opacity; the upcoming ones are orange.
    expect(count(s.img, (p, x, y) => inside(spokenRect, x, y) && p[3] === 255)).toBe(0);
    expect(count(s.img, (p, x, y) => inside(spokenRect, x, y) && p[3]! > 100 && p[3]! < 140)).toBeGreaterThan(100);
    for (const r of upcomingRects) expect(count(s.img, (p, x, y) => inside(r, x, y) && is(p, '#FF8800'))).toBeGreaterThan(50);
    // The spoken-now word is not touched at all.
    expect(
      changed(base.img, s.img).filter(
        ([x, y]) => inside(wordRect(base.layout, 1), x, y) && !inside(spokenRect, x, y) && !upcomingRects.some((r) => inside(r, x, y)),
      ),
    ).toEqual([]);
  });
});

describe('effects', () => {
  it('outline.width: the ink grows by the extra width on every side; the fill inside is untouched', () => {
    const s = render(styled({ outline: { width: 0.16 } }));
    // The words stay where they were (the text area is inset by the outline, so allow rounding).
    for (const [i, u] of base.layout.units.entries()) {
      expect(s.layout.units[i]!.x).toBeCloseTo(u.x, 6);
      expect(s.layout.units[i]!.baseline).toBeCloseTo(u.baseline, 6);
    }
    const grow = (0.16 - 0.08) * fontPx;
    const [a, b] = [inkBox(base.img), inkBox(s.img)];
    expect(a.x - b.x).toBeCloseTo(grow, -0.5);
    expect(b.x + b.width - (a.x + a.width)).toBeCloseTo(grow, -0.5);
    expect(a.y - b.y).toBeCloseTo(grow, -0.5);
    expect(count(base.img, (p, x, y) => is(p, '#FFFFFF') && !is(px(s.img, x, y), '#FFFFFF'))).toBe(0);
  });

  it('outline: null removes the outline and nothing else (fill pixels stay)', () => {
    const s = render(styled({ outline: null }));
    expect(count(s.img, (p) => is(p, '#000000'))).toBe(0);
    expect(count(base.img, (p, x, y) => is(p, '#FFFFFF') && !is(px(s.img, x, y), '#FFFFFF'))).toBe(0);
  });

  it('shadow: a shadow appears offset down and right; every opaque pixel of the text is unchanged', () => {
    const s = render(styled({ shadow: { color: '#FF0000', blur: 0, offsetX: 0.1, offsetY: 0.1 } }));
    const diff = changed(base.img, s.img);
    expect(diff.length).toBeGreaterThan(500);
    for (const [x, y] of diff)
      if (px(base.img, x, y)[3] === 255) expect(delta(px(base.img, x, y), px(s.img, x, y)), `(${x},${y}) was opaque`).toBeLessThanOrEqual(2);
    const red = (p: readonly number[]) => is(p, '#FF0000');
    const [a, b] = [inkBox(base.img), inkBox(s.img, (x, y) => red(px(s.img, x, y)))];
    expect(b.x + b.width - (a.x + a.width)).toBeCloseTo(0.1 * fontPx, -0.5);
    expect(b.y + b.height - (a.y + a.height)).toBeCloseTo(0.1 * fontPx, -0.5);
  });

  it('background: a box behind each line; text pixels are unchanged and nothing is drawn outside the padded line boxes', () => {
    const tpl = styled({ background: { color: '#0000FF', paddingX: 0.3, paddingY: 0.12, radius: 0 } });
    const s = render(tpl);
    const diff = changed(base.img, s.img);
    for (const [x, y] of diff)
      if (px(base.img, x, y)[3] === 255) expect(delta(px(base.img, x, y), px(s.img, x, y)), `(${x},${y}) was opaque`).toBeLessThanOrEqual(2);
    const boxes = backgroundRects(tpl, base.layout.pages[0]!, fontPx, base.layout.lineHeightPx);
    expect(boxes).toHaveLength(2);
    // Each box holds its line's words with the padding around them.
    for (const [i, l] of base.layout.pages[0]!.lines.entries()) {
      expect(boxes[i]!.x).toBeCloseTo(l.box.x - 0.3 * fontPx, 3);
      expect(boxes[i]!.width).toBeCloseTo(l.box.width + 0.6 * fontPx, 3);
    }
    expect(
      strayChanges(
        diff,
        boxes.map((r) => ({ x: r.x - 1, y: r.y - 1, width: r.width + 2, height: r.height + 2 })),
      ),
    ).toEqual([]);
    expect(count(s.img, (p) => is(p, '#0000FF'))).toBeGreaterThan(0.5 * boxes.reduce((n, r) => n + r.width * r.height, 0) - count(base.img, (p) => p[3]! > 0));
  });

  it('glow: a halo around the words; opaque text pixels unchanged', () => {
    const s = render(styled({ glow: { color: '#FF2BD6', blur: 0.3 } }));
    const diff = changed(base.img, s.img);
    expect(diff.length).toBeGreaterThan(1000);
    for (const [x, y] of diff)
      if (px(base.img, x, y)[3] === 255) expect(delta(px(base.img, x, y), px(s.img, x, y)), `(${x},${y}) was opaque`).toBeLessThanOrEqual(4);
    // Pink-tinted pixels: red and blue well over green.
    expect(count(s.img, (p) => p[3]! > 20 && p[0]! > p[1]! + 40 && p[2]! > p[1]! + 40)).toBeGreaterThan(500);
  });

  it('active.box: a box behind the spoken word only', () => {
    const s = render(styled({ active: { box: { color: '#7C3AED', radius: 0, paddingX: 0.2, paddingY: 0.1 } } }));
    const diff = changed(base.img, s.img);
    expect(count(s.img, (p) => is(p, '#7C3AED'))).toBeGreaterThan(300);
    expect(strayChanges(diff, [wordRect(base.layout, 1, 0.25 * fontPx + 2)])).toEqual([]);
  });
});

describe('type', () => {
  it('font.size: the glyphs scale by the size ratio, the colours stay', () => {
    const words = speak('Big bold type');
    const a = render(BASE, { words });
    const b = render(styled({ font: { size: 9 } }), { words });
    const [ra, rb] = [inkBox(a.img), inkBox(b.img)];
    expect(rb.width / ra.width).toBeCloseTo(1.5, 1);
    expect(rb.height / ra.height).toBeCloseTo(1.5, 1);
    // Centred: the horizontal centre stays.
    expect(rb.x + rb.width / 2).toBeCloseTo(ra.x + ra.width / 2, -0.5);
    for (const c of ['#FFFFFF', '#000000']) expect(count(b.img, (p) => is(p, c)) / count(a.img, (p) => is(p, c))).toBeGreaterThan(1.8);
  });

  it('font.weight: heavier strokes on the same baselines and advance boxes of the same height', () => {
    const light = render(styled({ font: { weight: 400 } }));
    for (const [i, u] of base.layout.units.entries()) expect(Math.abs(light.layout.units[i]!.baseline - u.baseline)).toBeLessThan(1);
    expect(count(base.img, (p) => is(p, '#FFFFFF'))).toBeGreaterThan(1.2 * count(light.img, (p) => is(p, '#FFFFFF')));
    expect(Math.abs(light.layout.capHeight - base.layout.capHeight)).toBeLessThan(1);
  });

  it('font.family: other glyphs, same colours', () => {
    const s = render(styled({ font: { family: 'Anton', weight: 400 } }));
    expect(changed(base.img, s.img).length).toBeGreaterThan(1000);
    expect(count(s.img, (p) => is(p, '#FFFFFF'))).toBeGreaterThan(1000);
    expect(count(s.img, (p) => is(p, '#22D3EE'))).toBeGreaterThan(100);
    // No colour that the template does not name: every opaque pixel is grey (white over black) or cyan over black.
    expect(
      count(s.img, (p) => p[3] === 255 && delta([p[0]!, p[0]!, p[0]!], p) > 2 && !(p[0]! <= 0x22 + 2 && Math.abs(p[1]! / 0xd3 - p[2]! / 0xee) < 0.05)),
    ).toBe(0);
  });

  it('text.case upper: exactly the frame of the same words typed in capitals', () => {
    const upper = render(styled({ text: { case: 'upper' } }));
    const typed = render(BASE, { words: speak('WE LOVE THESE BRAND NEW CAPTIONS') });
    expect(changed(upper.img, typed.img)).toEqual([]);
    expect(changed(base.img, upper.img).length).toBeGreaterThan(1000);
  });
});

describe('placement', () => {
  it('position.y: the same caption block, moved up; nothing else changes', () => {
    const s = render(styled({ position: { y: 0.1 } }));
    const [a, b] = [inkBox(base.img), inkBox(s.img)];
    expect(b.x).toBe(a.x);
    expect(b.width).toBe(a.width);
    expect(Math.abs(b.height - a.height)).toBeLessThanOrEqual(1);
    const safe = safeArea(W, H);
    // 0.5 -> 0.1 of the room the block has to move in the safe area.
    const room = safe.height - base.layout.pages[0]!.box.height;
    expect(a.y - b.y).toBeGreaterThan(0.3 * room);
    expect(b.y).toBeGreaterThanOrEqual(safe.y);
    // The block moved by the same amount in every unit.
    const dy = base.layout.units.map((u, i) => u.baseline - s.layout.units[i]!.baseline);
    for (const d of dy) expect(d).toBeCloseTo(dy[0]!, 6);
    expect(s.layout.units.map((u) => u.x)).toEqual(base.layout.units.map((u) => u.x));
    // Same pixels, shifted by whole pixels when the shift is whole: compare ink counts per colour.
    for (const c of ['#FFFFFF', '#000000', '#22D3EE'])
      expect(Math.abs(count(s.img, (p) => is(p, c)) - count(base.img, (p) => is(p, c)))).toBeLessThan(0.1 * count(base.img, (p) => is(p, c)));
  });

  it('layout.maxWordsPerLine: more, shorter lines of the same glyphs', () => {
    const s = render(styled({ layout: { maxWordsPerLine: 1, maxLines: 4 } }));
    const rows = inkRows(s.img);
    expect(rows).toHaveLength(4);
    expect(s.layout.pages[0]!.lines.map((l) => l.units.length)).toEqual([1, 1, 1, 1]);
    // Glyph size is unchanged: "love" is as tall as before.
    expect(s.layout.units[1]!.fontPx).toBe(base.layout.units[1]!.fontPx);
    expect(s.layout.units[1]!.width).toBeCloseTo(base.layout.units[1]!.width, 6);
  });

  it('layout.maxLines: one line per page', () => {
    const s = render(styled({ layout: { maxLines: 1 } }));
    expect(inkRows(s.img)).toHaveLength(1);
    expect(s.layout.pages.every((p) => p.lines.length === 1)).toBe(true);
    expect(s.layout.units[1]!.fontPx).toBe(base.layout.units[1]!.fontPx);
  });

  it('font.wordSpacing: words move apart, each word drawn the same', () => {
    const s = render(styled({ font: { wordSpacing: 0.8 } }));
    const line0 = base.layout.pages[0]!.lines[0]!.units;
    const sline0 = s.layout.pages[0]!.lines[0]!.units;
    const n = Math.min(line0.length, sline0.length);
    expect(n).toBeGreaterThan(1);
    const gap = (l: typeof base.layout, i: number) => l.units[i + 1]!.x - (l.units[i]!.x + l.units[i]!.width);
    expect(gap(s.layout, sline0[0]!) - gap(base.layout, line0[0]!)).toBeCloseTo((0.8 - 0.28) * fontPx, 3);
    for (const u of [0, 1]) expect(s.layout.units[u]!.width).toBeCloseTo(base.layout.units[u]!.width, 6);
  });
});

describe('motion, emoji and keywords', () => {
  it('animation: a page fade changes frames while it plays and none once it has played', () => {
    const tpl = styled({ animation: { page: 'fade', duration: 0.3 } });
    // Mid-page, the fade is long over: identical to the still template.
    expect(changed(base.img, render(tpl).img)).toEqual([]);
    // 0.1 s into the page, a third of the way in: the same pixels, fainter.
    const t = 0.1;
    const still = render(BASE, { t });
    const fading = render(tpl, { t });
    const diff = changed(still.img, fading.img);
    expect(diff.length).toBeGreaterThan(2000);
    for (const [x, y] of diff) expect(px(fading.img, x, y)[3]).toBeLessThan(px(still.img, x, y)[3]!);
    expect(inkBox(fading.img)).toEqual(inkBox(still.img));
  });

  it("emoji 'auto': an emoji above the page; every other pixel is unchanged", () => {
    const s = render(styled({ emoji: 'auto' }));
    const e = s.layout.pages[0]!.emoji!;
    expect(e.text).toBe('❤️');
    const diff = changed(base.img, s.img);
    expect(strayChanges(diff, [{ x: e.ink.x - 2, y: e.ink.y - 2, width: e.ink.width + 4, height: e.ink.height + 4 }])).toEqual([]);
    // Drawn in colour: saturated red pixels of the heart.
    expect(count(s.img, (p, x, y) => inside(e.ink, x, y) && p[3]! > 200 && p[0]! > 150 && p[1]! < 90)).toBeGreaterThan(100);
    expect(e.ink.y + e.ink.height).toBeLessThanOrEqual(base.layout.pages[0]!.box.y);
  });

  it("emoji 'auto' draws the same pixels on every run", () => {
    const runs = Array.from({ length: 3 }, () => render(styled({ emoji: 'auto' })).img);
    for (const r of runs.slice(1)) expect(changed(runs[0]!, r)).toEqual([]);
  });

  it('keywords: the listed word takes the emphasis colour; nothing else changes', () => {
    const s = render(styled({ keywords: ['CAPTIONS'], emphasis: { color: '#FF0000', scale: 1, rule: 'listed' } }));
    const diff = changed(base.img, s.img);
    const kw = wordRect(base.layout, 5, outlinePx + 2);
    expect(strayChanges(diff, [kw])).toEqual([]);
    expect(count(s.img, (p, x, y) => inside(kw, x, y) && is(p, '#FF0000'))).toBeGreaterThan(300);
    expect(count(base.img, (p, x, y) => inside(kw, x, y) && is(p, '#FFFFFF') && !near(px(s.img, x, y), '#FF0000'))).toBe(0);
  });

  it('keywords match whole words only, case-insensitively', () => {
    const s = render(styled({ keywords: ['caption', 'LOVE'], emphasis: { color: '#FF0000', scale: 1, rule: 'listed' } }));
    expect(s.layout.units.map((u) => u.emphasized)).toEqual([false, true, false, false, false, false]);
  });
});
