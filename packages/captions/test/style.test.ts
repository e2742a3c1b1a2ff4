import { describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import {
  applyStyle,
  captionFrameAt,
  createApproxMeasurer,
  emojiForWord,
  getBuiltinTemplate,
  layoutCaptions,
  parseTemplate,
  pickPageEmoji,
  safeArea,
  containsRect,
  StyleSchema,
  type Template,
} from '../src/index.ts';

const measurer = createApproxMeasurer();

function speak(text: string, step = 0.3): Word[] {
  return text.split(' ').map((t, i) => ({ text: t, start: i * step, end: i * step + step * 0.9, confidence: 0.9 }));
}

const karaoke = getBuiltinTemplate('karaoke')!;

function effective(style: unknown): Template {
  const r = applyStyle(karaoke, style);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.template;
}

describe('applyStyle', () => {
  it('overrides only the fields it names, at any depth', () => {
    const t = effective({ font: { size: 9 }, active: { color: '#FF0000' }, layout: { maxLines: 1 } });
    expect(t.font).toEqual({ ...karaoke.font, size: 9 });
    expect(t.active).toEqual({ ...karaoke.active, color: '#FF0000' });
    expect(t.layout).toEqual({ ...karaoke.layout, maxLines: 1 });
    expect({ ...t, font: karaoke.font, active: karaoke.active, layout: karaoke.layout }).toEqual(karaoke);
  });

  it('an empty style is the template itself', () => {
    expect(effective({})).toEqual(karaoke);
    expect(effective(undefined)).toEqual(karaoke);
  });

  it('null turns an effect off, an object turns one on with its defaults', () => {
    const t = effective({ outline: null, background: { color: '#000000CC' } });
    expect(t.outline).toBeNull();
    expect(t.background).toEqual({ color: '#000000CC', radius: 0.18, paddingX: 0.3, paddingY: 0.12, scope: 'line' });
  });

  it.each([
    ['an unknown field', { colour: '#fff' }, 'colour'],
    ['an unknown nested field', { font: { famly: 'Inter' } }, 'font.famly'],
    ['a template id', { id: 'x' }, 'id'],
    ['a bad colour', { fill: 'red' }, 'fill'],
    ['a size out of range', { font: { size: 50 } }, 'font.size'],
    ['an unknown family', { font: { family: 'Comic Sans' } }, 'font.family'],
    ['a font id that is no uuid', { font: { fontId: 'brand' } }, 'font.fontId'],
    ['an unknown emoji mode', { emoji: 'always' }, 'emoji'],
    ['too many keywords', { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) }, 'keywords'],
    ['an empty keyword', { keywords: [' '] }, 'keywords.0'],
  ])('refuses %s with the path of the problem', (_name, style, path) => {
    const r = applyStyle(karaoke, style);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const paths = r.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => [...i.path, k].join('.')) : [i.path.join('.')]));
    expect(paths).toContain(path);
  });

  it('StyleSchema is the template schema without id, name and description, every field optional', () => {
    expect(StyleSchema.safeParse({}).success).toBe(true);
    expect(StyleSchema.safeParse({ name: 'x' }).success).toBe(false);
    expect(StyleSchema.safeParse({ font: { weight: 400 }, text: { case: 'upper' }, position: { y: 0.1 } }).success).toBe(true);
  });
});

describe('keywords', () => {
  const base = parseTemplate({ id: 't', name: 'T', layout: { maxWordsPerLine: 8, maxCharsPerLine: 60, maxLines: 2 } });
  const words = speak('Our Pricing plans start at nine dollars. Pricing is simple, really simple');
  const emphasized = (t: Template) => {
    const l = layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer });
    return l.units.filter((u) => u.emphasized).map((u) => u.text);
  };

  it('emphasises every listed word, case-insensitive, whole words only', () => {
    const t = parseTemplate({ ...base, keywords: ['pricing'] });
    expect(emphasized(t)).toEqual(['Pricing', 'Pricing']);
    // "simp" is not a whole word
    expect(emphasized(parseTemplate({ ...base, keywords: ['simp'] }))).toEqual([]);
  });

  it('matches phrases as consecutive words, punctuation ignored', () => {
    expect(emphasized(parseTemplate({ ...base, keywords: ['nine Dollars'] }))).toEqual(['nine', 'dollars.']);
    expect(emphasized(parseTemplate({ ...base, keywords: ['simple really'] }))).toEqual(['simple,', 'really']);
  });

  it('without a template emphasis, keywords get the default emphasis look and nothing else is emphasised', () => {
    const t = parseTemplate({ ...base, keywords: ['plans'] });
    const l = layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer });
    const u = l.units.findIndex((x) => x.text === 'plans');
    const f = captionFrameAt(l, t, 0.05, { fps: 30 });
    const w = f.words.find((x) => x.unit === u)!;
    expect(w.color).toBe('#FFD60A');
    expect(w.scale).toBeCloseTo(1.12);
    expect(f.words.filter((x) => x.color === '#FFD60A')).toHaveLength(1);
  });

  it('with an automatic emphasis rule, keywords are emphasised on top of the pick', () => {
    const auto = parseTemplate({ ...base, emphasis: { color: '#00FF00' } });
    const withKw = parseTemplate({ ...auto, keywords: ['our'] });
    expect(emphasized(withKw)).toEqual(expect.arrayContaining([...emphasized(auto), 'Our']));
    expect(emphasized(parseTemplate({ ...base, emphasis: { rule: 'listed' }, keywords: ['our'] }))).toEqual(['Our']);
  });

  it('keyword emphasis never pushes words out of the safe area', () => {
    const t = parseTemplate({
      ...base,
      font: { size: 10 },
      keywords: ['pricing', 'plans', 'start', 'simple', 'really'],
      emphasis: { scale: 1.6, rule: 'listed' },
    });
    const l = layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer });
    const safe = safeArea(1080, 1920);
    for (const u of l.units) {
      const grow = u.emphasized ? 1.6 : 1;
      const cx = u.x + u.width / 2;
      expect(containsRect(safe, { x: cx - (u.width * grow) / 2, y: u.ink.y, width: u.width * grow, height: u.ink.height })).toBe(true);
    }
  });
});

describe("emoji: 'auto'", () => {
  it('the table maps base forms and simple inflections', () => {
    expect(emojiForWord('Money!')).toBe('💰');
    expect(emojiForWord('dogs')).toBe('🐶');
    expect(emojiForWord('celebrating')).toBe('🎉');
    expect(emojiForWord('the')).toBeNull();
  });

  it('picks the emphasised word first, else the first matching word', () => {
    expect(pickPageEmoji(['we', 'love', 'money'])).toEqual({ emoji: '❤️', word: 1 });
    expect(pickPageEmoji(['we', 'love', 'money'], new Set([2]))).toEqual({ emoji: '💰', word: 2 });
    expect(pickPageEmoji(['just', 'words'])).toBeNull();
  });

  const words = speak('I love my dog. We travel the world together. Nothing here though. Pizza and coffee every morning');
  const t = parseTemplate({ id: 't', name: 'T', emoji: 'auto', position: { y: 0.5 } });

  it('places at most one emoji per page, the same ones every run', () => {
    const runs = Array.from({ length: 5 }, () => layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer }).pages.map((p) => p.emoji));
    for (const r of runs) expect(r).toEqual(runs[0]);
    const emoji = runs[0]!.map((e) => e?.text ?? null);
    expect(emoji).toEqual(['❤️', '✈️', null, '🍕']);
  });

  it('does not move the text, and sits inside the safe area', () => {
    const on = layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer });
    const off = layoutCaptions({ words, template: parseTemplate({ ...t, emoji: 'off' }), width: 1080, height: 1920, measurer });
    expect(on.units).toEqual(off.units);
    expect(off.pages.every((p) => p.emoji === null)).toBe(true);
    const safe = safeArea(1080, 1920);
    for (const p of on.pages) if (p.emoji) expect(containsRect(safe, p.emoji.ink)).toBe(true);
    for (const p of on.pages) if (p.emoji) expect(containsRect(on.band, p.emoji.ink)).toBe(true);
  });

  it('appears when its word is spoken', () => {
    const l = layoutCaptions({ words, template: t, width: 1080, height: 1920, measurer });
    const loveStart = l.units[l.pages[0]!.emoji!.unit]!.start;
    expect(captionFrameAt(l, t, loveStart - 0.1, { fps: 30 }).emoji).toBeNull();
    expect(captionFrameAt(l, t, loveStart + 0.5, { fps: 30 }).emoji).toEqual({ opacity: 1, scale: 1 });
  });
});
