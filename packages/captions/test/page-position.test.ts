import { describe, expect, it } from 'vitest';
import { safeAreaZones, type SafeAreaName, type TimedBox, type Word } from '@captionfarm/contracts';
import {
  bandForAnyWords,
  builtinTemplates,
  captionArea,
  containsRect,
  createApproxMeasurer,
  deriveTemplate,
  getBuiltinTemplate,
  inkBounds,
  layoutCaptions,
  safeArea,
  type CaptionLayout,
  type LayoutOptions,
  type Rect,
  type Template,
} from '../src/index.ts';

const measurer = createApproxMeasurer();

const STORY =
  'The North Wind and the Sun were disputing which was the stronger, when a traveler came along wrapped in a warm cloak. ' +
  'They agreed that the one who first succeeded in making the traveler take his cloak off should be considered stronger. ' +
  'Then the North Wind blew as hard as he could, but the more he blew the more closely did the traveler fold his cloak around him; ' +
  'and at last the North Wind gave up the attempt. Pneumonoultramicroscopicsilicovolcanoconiosis! Money, fire, 100 love.';

function speak(text: string, step = 0.4): Word[] {
  return text.split(' ').map((t, i) => ({ text: t, start: i * step, end: i * step + step * 0.9, confidence: 1 }));
}
const words = speak(STORY);

const APPS: Exclude<SafeAreaName, 'none'>[] = ['tiktok', 'reels', 'shorts'];
const FRAMES = [
  [1080, 1920],
  [720, 1280],
  [1920, 1080],
] as const;

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** Every look, and each with an emoji over its pages. */
const looks: Template[] = builtinTemplates.flatMap((t) => [t, deriveTemplate(t, { emoji: 'auto' })]);

function lay(template: Template, width: number, height: number, more: Partial<LayoutOptions> = {}): CaptionLayout {
  return layoutCaptions({ words, template, width, height, measurer, ...more });
}

describe('safeArea with an app', () => {
  it('tiktok at 1080x1920: clear of every zone, inside the generic margins; the caption area centred', () => {
    const s = safeArea(1080, 1920, 'tiktok');
    for (const z of safeAreaZones('tiktok', { width: 1080, height: 1920 })) expect(overlaps(s, z), JSON.stringify(z)).toBe(false);
    expect(containsRect(safeArea(1080, 1920), s, 0)).toBe(true);
    // The button column (164 px) is wider than the generic right margin (13%, 140 px).
    expect(s.x + s.width).toBe(916);
    const a = captionArea(1080, 1920, 'tiktok');
    expect(a.x + a.width / 2).toBe(540);
    expect(a.width).toBe(2 * (916 - 540));
  });
});

describe("safeArea: no page's ink inside the app's zones", () => {
  for (const app of APPS) {
    it.each(FRAMES)(`${app} %sx%s: every look, every page (ink with effects and animations)`, (width, height) => {
      const zones = safeAreaZones(app, { width, height });
      for (const t of looks) {
        const l = lay(t, width, height, { safeArea: app });
        const ink = inkBounds(l, t);
        l.pages.forEach((p, i) => {
          for (const z of zones)
            expect(overlaps(ink.pages[i]!, z), `${t.id} ${t.emoji} page ${i} ${JSON.stringify(ink.pages[i])} in ${JSON.stringify(z)}`).toBe(false);
          // Still centred on the frame (a shift of a few pixels at most, when the ends of a line grow unevenly).
          expect(Math.abs(p.box.x + p.box.width / 2 - width / 2), `${t.id} page ${i}`).toBeLessThan(0.02 * width);
        });
      }
    });
  }

  it("the band before any word is known holds the words' band, with each app", () => {
    for (const app of APPS) {
      for (const [width, height] of FRAMES) {
        for (const t of looks) {
          const before = bandForAnyWords({ template: t, width, height, measurer, safeArea: app });
          expect(containsRect(before, lay(t, width, height, { safeArea: app }).band, 0), `${app} ${t.id} ${width}x${height}`).toBe(true);
        }
      }
    }
  });

  it("'none' is today's layout; tiktok narrows the lines only as much as the button column needs", () => {
    const t = getBuiltinTemplate('karaoke')!;
    expect(lay(t, 1080, 1920, { safeArea: 'none' })).toEqual(lay(t, 1080, 1920));
    const none = lay(t, 1080, 1920);
    const tiktok = lay(t, 1080, 1920, { safeArea: 'tiktok' });
    expect(tiktok.textArea.width).toBeLessThan(none.textArea.width);
    expect(tiktok.textArea.width).toBeGreaterThan(0.6 * none.textArea.width);
  });
});

/** A face (a box on screen over [start, end)) where the template's pages sit. */
function facesOver(l: CaptionLayout, pages: number[], shape: (home: Rect) => Rect): TimedBox[] {
  return pages.map((i) => ({ start: l.pages[i]!.start, end: l.pages[i]!.end, box: shape(l.pages[i]!.box) }));
}

describe("placement 'auto'", () => {
  const karaoke = getBuiltinTemplate('karaoke')!;
  const top = deriveTemplate(karaoke, { position: { y: 0.1 } });

  for (const t of [...looks, top]) {
    it(`${t.id}${t === top ? ' (at the top)' : ''}${t.emoji === 'auto' ? ' with emoji' : ''}: no page covers a face on screen with it`, () => {
      const fixed = lay(t, 1080, 1920, { safeArea: 'tiktok' });
      // A face 300x360 px centred on every other page's place, and one over the whole first phrase.
      const avoid = [
        ...facesOver(
          fixed,
          fixed.pages.map((_p, i) => i).filter((i) => i % 2 === 1),
          (b) => ({ x: b.x + b.width / 2 - 150, y: b.y + b.height / 2 - 180, width: 300, height: 360 }),
        ),
        { start: 0, end: fixed.pages[0]!.end, box: { x: 300, y: fixed.pages[0]!.box.y - 100, width: 480, height: 400 } },
      ];
      const l = lay(t, 1080, 1920, { safeArea: 'tiktok', placement: 'auto', avoid });
      const ink = inkBounds(l, t);
      let moved = 0;
      l.pages.forEach((p, i) => {
        for (const f of avoid) {
          if (f.start < p.end && f.end > p.start) expect(overlaps(ink.pages[i]!, f.box), `page ${i} covers ${JSON.stringify(f)}`).toBe(false);
        }
        for (const z of safeAreaZones('tiktok', { width: 1080, height: 1920 })) expect(overlaps(ink.pages[i]!, z), `page ${i} in a zone`).toBe(false);
        if (p.box.y !== fixed.pages[i]!.box.y) moved++;
        // The band holds every place a page went to.
        expect(containsRect(l.band, ink.pages[i]!, 0.5)).toBe(true);
      });
      expect(moved).toBeGreaterThan(0);
    });
  }

  it("prefers the template's side of the face, even when the other side is nearer", () => {
    const low = deriveTemplate(karaoke, { position: { y: 0.6 } });
    const p0 = lay(low, 1080, 1920, { safeArea: 'tiktok' }).pages[0]!;
    // Over the lower two thirds of the first page and 60 px below it: above is the shorter move, below the template's side.
    const face = { start: 0, end: p0.end, box: { x: 400, y: p0.box.y + p0.box.height / 3, width: 280, height: 60 + (2 * p0.box.height) / 3 } };
    const moved = lay(low, 1080, 1920, { safeArea: 'tiktok', placement: 'auto', avoid: [face] }).pages[0]!;
    expect(moved.box.y).toBeGreaterThan(face.box.y + face.box.height);
    const mid = deriveTemplate(karaoke, { position: { y: 0.3 } });
    const high = lay(mid, 1080, 1920, { safeArea: 'tiktok' }).pages[0]!;
    // Over the upper two thirds and 60 px above: below is the shorter move, above the template's side.
    const face2 = { start: 0, end: high.end, box: { x: 400, y: high.box.y - 60, width: 280, height: 60 + (2 * high.box.height) / 3 } };
    const moved2 = lay(mid, 1080, 1920, { safeArea: 'tiktok', placement: 'auto', avoid: [face2] }).pages[0]!;
    expect(moved2.box.y + moved2.box.height).toBeLessThan(face2.box.y);
  });

  it("faces nowhere near: the layout is 'fixed's to the number", () => {
    for (const t of looks) {
      for (const app of ['none', 'tiktok'] as const) {
        const fixed = lay(t, 1080, 1920, { safeArea: app });
        const avoid: TimedBox[] = fixed.pages.map((p) => ({ start: p.start, end: p.end, box: { x: 380, y: 0, width: 320, height: 120 } }));
        expect(lay(t, 1080, 1920, { safeArea: app, placement: 'auto', avoid }), t.id).toEqual(fixed);
      }
    }
  });

  it('a face hovering at the edge of the captions moves them at most once a phrase, and they come back once it has gone', () => {
    // Phrases of 12 words (sentence ends), pages of up to 4 words.
    const text = Array.from({ length: 8 }, (_v, s) => `one two three four five six seven eight nine ten eleven twelve${s}.`).join(' ');
    const ws = speak(text, 0.3);
    const t = deriveTemplate(karaoke, { layout: { maxLines: 1 } });
    const fixed = layoutCaptions({ words: ws, template: t, width: 1080, height: 1920, measurer });
    const home = fixed.pages[0]!.box;
    const inkTop = inkBounds(fixed, t).pages[0]!.y;
    // The chin bobs 24 px either side of the captions' top edge, every 0.2 s, for the first 6 phrases; then it is gone.
    const last = fixed.pages.find((p) => p.phrase === 6)!.start - 0.4;
    const avoid: TimedBox[] = [];
    for (let s = 0, k = 0; s < last; s += 0.2, k++) {
      avoid.push({ start: s, end: s + 0.2, box: { x: home.x, y: 900, width: home.width, height: inkTop - 900 - 22 + (k % 2 ? 24 : -24) } });
    }
    const l = layoutCaptions({ words: ws, template: t, width: 1080, height: 1920, measurer, placement: 'auto', avoid });
    const moves = new Map<number, number>();
    l.pages.forEach((p, i) => {
      if (i > 0 && p.box.y !== l.pages[i - 1]!.box.y) moves.set(p.phrase, (moves.get(p.phrase) ?? 0) + 1);
    });
    for (const [phrase, n] of moves) expect(n, `phrase ${phrase}`).toBeLessThanOrEqual(1);
    // It did move (the chin covers the captions' place half the time), and returned at the first phrase without a face.
    expect(l.pages.some((p, i) => p.box.y !== fixed.pages[i]!.box.y)).toBe(true);
    const after = l.pages.filter((p) => p.phrase === 6);
    for (const p of after) expect(p.box.y).toBe(fixed.pages[p.index]!.box.y);
    expect(moves.size).toBeLessThanOrEqual(2);
  });
});
