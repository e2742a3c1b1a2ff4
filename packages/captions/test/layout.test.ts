import { describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import {
  builtinTemplates,
  captionArea,
  containsRect,
  createApproxMeasurer,
  getBuiltinTemplate,
  layoutCaptions,
  parseTemplate,
  safeArea,
  type CaptionLayout,
  type Template,
  type TemplateInput,
} from '../src/index.ts';

const measurer = createApproxMeasurer();

/** Words spoken one every `step` seconds; '|' in the text inserts a pause of `pause` seconds. */
function speak(text: string, opts: { step?: number; pause?: number; start?: number } = {}): Word[] {
  const step = opts.step ?? 0.3;
  let t = opts.start ?? 0;
  const out: Word[] = [];
  for (const tok of text.split(' ')) {
    if (tok === '|') {
      t += opts.pause ?? 2;
      continue;
    }
    out.push({ text: tok, start: t, end: t + step * 0.9, confidence: 0.9 });
    t += step;
  }
  return out;
}

const tpl = (patch: Partial<TemplateInput> = {}): Template => parseTemplate({ id: 't', name: 'T', ...patch });

function lay(words: Word[], template: Template, width = 1080, height = 1920): CaptionLayout {
  return layoutCaptions({ words, template, width, height, measurer });
}

/** Pages as text: lines joined by ' / ', pages by ' || '. */
function pagesText(l: CaptionLayout): string {
  return l.pages
    .map((p) => p.lines.map((line) => line.units.map((u) => l.units[u]!.text).join(l.units[line.units[1] ?? 0]?.spaceBefore === false ? '' : ' ')).join(' / '))
    .join(' || ');
}

const STORY =
  'The North Wind and the Sun were disputing which was the stronger, when a traveler came along ' +
  'wrapped in a warm cloak. They agreed that the one who first succeeded in making the traveler take ' +
  'his cloak off should be considered stronger than the other.';

describe('pages and lines', () => {
  it.each([
    [
      'fills lines up to the word limit, leaving no orphan word',
      { layout: { maxWordsPerLine: 3, maxLines: 2, maxCharsPerLine: 40 } },
      'one two three four five six seven',
      'one two three / four five || six seven',
    ],
    ['one word per page', { layout: { maxWordsPerLine: 1, maxLines: 1 } }, 'alpha beta gamma', 'alpha || beta || gamma'],
    ['a sentence end starts a new page', {}, 'Go now. Then stop here please', 'Go now. || Then stop here please'],
    ['sentence breaks can be turned off', { timing: { breakOnSentence: false } }, 'Go now. Then stop', 'Go now. Then stop'],
    ['a long pause starts a new page', {}, 'before the | pause after', 'before the || pause after'],
    [
      'a comma in the second half ends the page early',
      { layout: { maxWordsPerLine: 3, maxLines: 1, maxCharsPerLine: 40 } },
      'yes indeed, we can do it',
      'yes indeed, || we can || do it',
    ],
    [
      'no line ends on an article when it can be avoided',
      { layout: { maxWordsPerLine: 3, maxLines: 1, maxCharsPerLine: 40 } },
      'wind and the sun',
      'wind || and the sun',
    ],
    ['question marks kept', { text: { punctuation: 'strip' } }, 'really? yes, sure.', 'really? || yes sure'],
    ['upper case', { text: { case: 'upper' } }, 'hello there', 'HELLO THERE'],
  ] as const)('%s', (_name, patch, text, expected) => {
    expect(pagesText(lay(speak(text), tpl(patch as Partial<TemplateInput>)))).toBe(expected);
  });

  it('never breaks inside a word and keeps every word in order', () => {
    const words = speak(STORY);
    for (const t of builtinTemplates) {
      const l = lay(words, t);
      expect(l.units.map((u) => u.wordIndex)).toEqual(words.map((_, i) => i));
      for (const u of l.units) expect(u.text.toLowerCase().replace(/[^a-z]/g, '')).toBe(words[u.wordIndex]!.text.toLowerCase().replace(/[^a-z]/g, ''));
    }
  });

  it('respects words, characters and lines per template', () => {
    const words = speak(STORY);
    for (const t of builtinTemplates) {
      const l = lay(words, t);
      for (const p of l.pages) {
        expect(p.lines.length, t.id).toBeLessThanOrEqual(t.layout.maxLines);
        for (const line of p.lines) {
          expect(line.units.length, t.id).toBeLessThanOrEqual(t.layout.maxWordsPerLine);
          const text = line.units.map((u) => l.units[u]!.text).join(' ');
          if (line.units.length > 1) expect(text.length, `${t.id}: ${text}`).toBeLessThanOrEqual(t.layout.maxCharsPerLine);
        }
      }
    }
  });

  it('merges punctuation whisper emitted as its own word into the word before', () => {
    const words: Word[] = [
      { text: 'Hello', start: 0, end: 0.3, confidence: 1 },
      { text: ',', start: 0.3, end: 0.3, confidence: 1 },
      { text: 'world', start: 0.4, end: 0.7, confidence: 1 },
      { text: '.', start: 0.7, end: 0.7, confidence: 1 },
      { text: 'Next', start: 0.9, end: 1.2, confidence: 1 },
    ];
    expect(pagesText(lay(words, tpl()))).toBe('Hello, world. || Next');
  });

  it('ignores empty words and sorts by start time', () => {
    const words: Word[] = [
      { text: 'b', start: 0.5, end: 0.8, confidence: 1 },
      { text: '  ', start: 0.2, end: 0.3, confidence: 1 },
      { text: 'a', start: 0, end: 0.3, confidence: 1 },
    ];
    expect(pagesText(lay(words, tpl()))).toBe('a b');
  });

  it('lays out nothing for no words, with a valid band', () => {
    const l = lay([], tpl());
    expect(l.pages).toEqual([]);
    expect(l.band.width).toBeGreaterThan(0);
  });
});

describe('page timing', () => {
  it('a page never lingers over a long silence', () => {
    const t = tpl({ timing: { lingerSeconds: 0.4 } });
    const l = lay(speak('one two three | four five', { pause: 5 }), t);
    expect(l.pages).toHaveLength(2);
    const lastOfFirst = l.units[l.pages[0]!.units.at(-1)!]!;
    expect(l.pages[0]!.end).toBeCloseTo(lastOfFirst.end + 0.4, 6);
    expect(l.pages[1]!.start - l.pages[0]!.end).toBeGreaterThan(4);
  });

  it('clamps a word whisper stretched over a silence', () => {
    const words: Word[] = [
      { text: 'hello', start: 0, end: 9, confidence: 1 },
      { text: 'again', start: 10, end: 10.3, confidence: 1 },
    ];
    const l = lay(words, tpl({ timing: { maxWordSeconds: 1.5, lingerSeconds: 0.4 } }));
    expect(l.pages).toHaveLength(2);
    expect(l.pages[0]!.end).toBeCloseTo(1.9, 6);
  });

  it('a page stays until the next one when the gap is short (no blank flash)', () => {
    const l = lay(speak('a b c d e f g h i j', { step: 0.3 }), tpl({ layout: { maxWordsPerLine: 2, maxLines: 1 } }));
    for (let i = 0; i + 1 < l.pages.length; i++) expect(l.pages[i]!.end).toBe(l.pages[i + 1]!.start);
  });

  it('pages do not overlap and start with their first word', () => {
    const l = lay(speak(STORY), getBuiltinTemplate('karaoke')!);
    l.pages.forEach((p, i) => {
      expect(p.start).toBe(l.units[p.units[0]!]!.start);
      expect(p.end).toBeGreaterThan(p.start);
      if (i > 0) expect(p.start).toBeGreaterThanOrEqual(l.pages[i - 1]!.end);
    });
  });
});

describe('geometry', () => {
  const frames = [
    ['9:16 1080x1920', 1080, 1920],
    ['9:16 720x1280', 720, 1280],
    ['16:9 1920x1080', 1920, 1080],
    ['16:9 3840x2160', 3840, 2160],
    ['1:1 1080x1080', 1080, 1080],
    ['4:5 1080x1350', 1080, 1350],
  ] as const;

  it.each(frames)('%s: every word inside the caption area and the band; band even-aligned inside the frame', (_n, width, height) => {
    const words = speak(`${STORY} Pneumonoultramicroscopicsilicovolcanoconiosis is long.`);
    const area = captionArea(width, height);
    for (const t of builtinTemplates) {
      const l = lay(words, t, width, height);
      for (const b of [l.band.x, l.band.y, l.band.width, l.band.height]) expect(b % 2, t.id).toBe(0);
      expect(l.band.x + l.band.width).toBeLessThanOrEqual(width);
      expect(l.band.y + l.band.height).toBeLessThanOrEqual(height);
      for (const u of l.units) {
        const box = { x: u.x, y: u.baseline - l.capHeight * (u.fontPx / l.font.sizePx), width: u.width, height: l.capHeight };
        expect(containsRect(area, box), `${t.id} ${u.text}`).toBe(true);
        expect(containsRect(l.band, u.ink), `${t.id} ${u.text}`).toBe(true);
      }
    }
  });

  it('9:16 keeps clear of the platform UI at the bottom and right', () => {
    const s = safeArea(1080, 1920);
    expect(1920 - (s.y + s.height)).toBeGreaterThanOrEqual(0.2 * 1920);
    expect(1080 - (s.x + s.width)).toBeGreaterThanOrEqual(0.12 * 1080);
    const l = lay(speak(STORY), getBuiltinTemplate('clean-subtitle')!, 1080, 1920);
    // The band may reach a few pixels past the text (antialiasing slack, even alignment).
    expect(l.band.y + l.band.height).toBeLessThanOrEqual(s.y + s.height + 6);
    expect(l.band.x + l.band.width).toBeLessThanOrEqual(s.x + s.width + 6);
  });

  it('the caption area is centred on the frame', () => {
    for (const [, w, h] of frames) {
      const a = captionArea(w, h);
      expect(a.x + a.width / 2).toBeCloseTo(w / 2, 6);
    }
  });

  it('720p and 4K look the same: every position scales with the frame', () => {
    const words = speak(STORY);
    for (const t of builtinTemplates) {
      const small = lay(words, t, 1280, 720);
      const big = lay(words, t, 3840, 2160);
      expect(pagesText(big)).toBe(pagesText(small));
      small.units.forEach((u, i) => {
        const v = big.units[i]!;
        expect(v.x / 3).toBeCloseTo(u.x, 3);
        expect(v.baseline / 3).toBeCloseTo(u.baseline, 3);
        expect(v.fontPx / 3).toBeCloseTo(u.fontPx, 3);
      });
    }
  });

  it('text size is relative to the frame: 7% of the shorter side', () => {
    const t = tpl({ font: { size: 7 } });
    expect(lay(speak('hi'), t, 1080, 1920).font.sizePx).toBeCloseTo(75.6, 6);
    expect(lay(speak('hi'), t, 1280, 720).font.sizePx).toBeCloseTo(50.4, 6);
  });

  it('shrinks a single word too long for a line, alone on its line', () => {
    const t = tpl({ font: { size: 8 } });
    const l = lay(speak('a Pneumonoultramicroscopicsilicovolcanoconiosis b'), t);
    const long = l.units[1]!;
    expect(long.fontPx).toBeLessThan(l.font.sizePx);
    expect(long.width).toBeLessThanOrEqual(l.textArea.width + 0.01);
    expect(l.units[0]!.line === long.line && l.units[0]!.page === long.page).toBe(false);
    expect(l.units[0]!.fontPx).toBe(l.font.sizePx);
  });

  it('centres each line and never lets neighbours touch, even at the largest animated scale', () => {
    const t = getBuiltinTemplate('keyword-emphasis')!;
    const l = lay(speak(STORY), t);
    for (const p of l.pages) {
      for (const line of p.lines) {
        const us = line.units.map((u) => l.units[u]!);
        const left = Math.min(...us.map((u) => u.x));
        const right = Math.max(...us.map((u) => u.x + u.width));
        expect((left + right) / 2).toBeCloseTo(l.textArea.x + l.textArea.width / 2, 3);
        const sorted = [...us].sort((a, b) => a.x - b.x);
        for (let i = 1; i < sorted.length; i++) {
          const a = sorted[i - 1]!;
          const b = sorted[i]!;
          const sa = a.emphasized ? t.emphasis!.scale : 1;
          const sb = b.emphasized ? t.emphasis!.scale : 1;
          const aRight = a.x + (a.width * (1 + sa)) / 2;
          const bLeft = b.x + (b.width * (1 - sb)) / 2;
          expect(bLeft - aRight).toBeGreaterThan(0);
        }
      }
    }
  });

  it('stacks lines by the template line height, with position.y=1 sitting on the bottom of the area', () => {
    const t = tpl({ position: { y: 1 }, layout: { maxWordsPerLine: 2, maxLines: 2 } });
    const l = lay(speak('one two three four'), t);
    const [a, b] = l.pages[0]!.lines;
    expect(b!.baseline - a!.baseline).toBeCloseTo(t.font.lineHeight * l.font.sizePx, 6);
    expect(b!.baseline + l.descender).toBeCloseTo(l.textArea.y + l.textArea.height, 6);
  });
});

describe('emphasis', () => {
  it.each([
    ['the longest word that is not a stopword', 'the north wind and', 'north'],
    ['a number wins', 'we made 100 dollars', '100'],
    ['nothing when only short words', 'it is so', null],
  ])('%s', (_n, text, expected) => {
    const l = lay(speak(text), tpl({ emphasis: {}, layout: { maxWordsPerLine: 6 } }));
    const e = l.units.filter((u) => u.emphasized).map((u) => u.text);
    expect(e).toEqual(expected ? [expected] : []);
  });
});

describe('right-to-left and Chinese/Japanese', () => {
  it('Arabic: the first word read is the rightmost', () => {
    const l = lay(speak('مرحبا بكم في قناتنا'), tpl({ layout: { maxWordsPerLine: 6 } }));
    const p = l.pages[0]!;
    expect(p.direction).toBe('rtl');
    const xs = p.units.map((u) => l.units[u]!.x);
    expect([...xs].sort((a, b) => b - a)).toEqual(xs);
  });

  it('Hebrew with an English product name keeps the English words in reading order', () => {
    const l = lay(speak('אני אוהב Visual Studio מאוד'), tpl({ font: { size: 3 }, layout: { maxWordsPerLine: 8, maxCharsPerLine: 60 } }));
    expect(l.pages[0]!.lines).toHaveLength(1);
    const x = (t: string) => l.units.find((u) => u.text === t)!.x;
    expect(x('אני')).toBeGreaterThan(x('אוהב'));
    expect(x('Visual')).toBeLessThan(x('Studio'));
    expect(x('Studio')).toBeLessThan(x('אוהב'));
    expect(x('מאוד')).toBeLessThan(x('Visual'));
  });

  it('Chinese given as one long "word" is broken by character across lines and pages', () => {
    const words: Word[] = [{ text: '我们今天要讨论人工智能的未来发展，以及它如何改变我们的生活。', start: 0, end: 6, confidence: 1 }];
    const l = lay(words, tpl({ timing: { maxWordSeconds: 10 } }));
    expect(l.units.length).toBeGreaterThan(20);
    expect(l.pages.length).toBeGreaterThan(1);
    for (const line of l.pages.flatMap((p) => p.lines)) {
      const first = l.units[line.units[0]!]!.text;
      expect(first).not.toMatch(/^[，。、！？]/);
      expect(line.units.reduce((n, u) => n + [...l.units[u]!.text].length * 2, 0)).toBeLessThanOrEqual(24 + 2);
    }
    // No spaces between characters: each unit starts where the previous one ended.
    const line = l.pages[0]!.lines[0]!;
    for (let i = 1; i < line.units.length; i++) {
      const a = l.units[line.units[i - 1]!]!;
      const b = l.units[line.units[i]!]!;
      expect(b.spaceBefore).toBe(false);
      expect(b.x - (a.x + a.width)).toBeLessThan(0.01 * l.font.sizePx + 1);
    }
    // Times are spread over the characters in order.
    for (let i = 1; i < l.units.length; i++) expect(l.units[i]!.start).toBeGreaterThan(l.units[i - 1]!.start);
  });

  it('Chinese/Japanese lines and pages break between transcript words when they can', () => {
    const words = speak('我们 今天 要 讨论 人工智能 的 未来 发展', { step: 0.4 });
    const l = lay(words, tpl({ font: { size: 4 }, layout: { maxCharsPerLine: 20, maxLines: 2 }, timing: { maxWordSeconds: 10 } }));
    expect(l.pages[0]!.lines.length).toBe(2);
    for (const p of l.pages) {
      for (const line of p.lines) {
        const first = l.units[line.units[0]!]!;
        const prev = l.units[line.units[0]! - 1];
        if (prev) expect(prev.wordIndex, `line starting at ${first.text}`).not.toBe(first.wordIndex);
      }
    }
  });

  it('Japanese keeps closing punctuation with the character before it', () => {
    const l = lay([{ text: '今日は。', start: 0, end: 1, confidence: 1 }], tpl());
    expect(l.units.map((u) => u.text)).toEqual(['今', '日', 'は。']);
  });
});
