import { describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import {
  animationRate,
  builtinTemplates,
  captionFrameAt,
  createApproxMeasurer,
  getBuiltinTemplate,
  layoutCaptions,
  pageAt,
  parseTemplate,
  quantizeTime,
  restWordScales,
  type Template,
  type TemplateInput,
} from '../src/index.ts';

const measurer = createApproxMeasurer();
const words = (texts: string[], step = 0.4): Word[] => texts.map((text, i) => ({ text, start: i * step, end: i * step + step * 0.9, confidence: 1 }));
const story = words('The North Wind and the Sun were disputing which was the stronger when a traveler came along'.split(' '));
const tpl = (patch: Partial<TemplateInput> = {}): Template => parseTemplate({ id: 't', name: 'T', ...patch });
const setup = (template: Template, ws: Word[] = story) => ({ template, layout: layoutCaptions({ words: ws, template, width: 1080, height: 1920, measurer }) });

describe('animation grid', () => {
  it.each([
    [30, 30],
    [60, 30],
    [25, 25],
    [50, 25],
    [24, 24],
    [120, 30],
    [29.97, 29.97],
    [59.94, 29.97],
    [0, 30],
  ])('animationRate(%s) = %s', (fps, rate) => {
    expect(animationRate(fps)).toBeCloseTo(rate, 6);
  });

  it('snaps time down to the grid, exact on frame times', () => {
    expect(quantizeTime(1 / 30, 30)).toBeCloseTo(1 / 30, 12);
    expect(quantizeTime(0.05, 30)).toBeCloseTo(1 / 30, 12);
    expect(quantizeTime(3 / 60, 60)).toBeCloseTo(1 / 30, 12);
    expect(quantizeTime(100 / 30, 30)).toBeCloseTo(100 / 30, 12);
  });
});

describe('captionFrameAt', () => {
  it('word states: earlier words spoken, the current one active, later ones upcoming', () => {
    const { template, layout } = setup(getBuiltinTemplate('karaoke')!);
    const f = captionFrameAt(layout, template, 0.4 * 2 + 0.1, { fps: 30 });
    const states = f.words.map((w) => w.state);
    expect(states.slice(0, 3)).toEqual(['spoken', 'spoken', 'active']);
    expect(states.slice(3).every((s) => s === 'upcoming')).toBe(true);
    expect(f.words[2]!.color).toBe(template.active.color);
    expect(f.words[3]!.color).toBe(template.fill);
  });

  it('nothing on screen before the first word and during a long silence', () => {
    const { template, layout } = setup(tpl(), [...words(['a', 'b']), { text: 'c', start: 10, end: 10.3, confidence: 1 }]);
    expect(captionFrameAt(layout, template, -1, { fps: 30 }).page).toBe(-1);
    expect(captionFrameAt(layout, template, 5, { fps: 30 }).page).toBe(-1);
    expect(captionFrameAt(layout, template, 5, { fps: 30 }).key).toBe(captionFrameAt(layout, template, 7, { fps: 30 }).key);
    expect(captionFrameAt(layout, template, 10.1, { fps: 30 }).page).toBe(1);
  });

  it('the active word stays active through a short gap (no flicker)', () => {
    const ws: Word[] = [
      { text: 'one', start: 0, end: 0.2, confidence: 1 },
      { text: 'two', start: 0.5, end: 0.7, confidence: 1 },
    ];
    const { template, layout } = setup(getBuiltinTemplate('karaoke')!, ws);
    expect(captionFrameAt(layout, template, 0.35, { fps: 30 }).words[0]!.state).toBe('active');
  });

  it('word-by-word templates hide words not yet spoken', () => {
    const { template, layout } = setup(getBuiltinTemplate('word-pop')!);
    const f = captionFrameAt(layout, template, 0.5, { fps: 30 });
    expect(f.words.map((w) => w.unit)).toEqual([0, 1]);
  });

  it('pop: scales up with overshoot, then settles exactly', () => {
    const { template, layout } = setup(getBuiltinTemplate('word-pop')!);
    const scales = [0, 1, 2, 3, 4, 5, 6].map((i) => captionFrameAt(layout, template, 0.4 + i / 30, { fps: 30 }).words.at(-1)!.scale);
    expect(scales[0]).toBeLessThan(1);
    expect(Math.max(...scales)).toBeGreaterThan(1);
    expect(scales.at(-1)).toBe(1);
  });

  it('bounce: the active word jumps up and lands', () => {
    const { template, layout } = setup(getBuiltinTemplate('bounce')!);
    const dys = [0, 2, 4, 6, 10].map((i) => captionFrameAt(layout, template, 0.8 + i / 30, { fps: 30 }).words.find((w) => w.state === 'active')!.dy);
    expect(Math.min(...dys)).toBeLessThan(0);
    expect(dys.at(-1)).toBe(0);
  });

  it('typewriter: reveals letters in order', () => {
    const ws: Word[] = [{ text: 'traveler', start: 0, end: 1, confidence: 1 }];
    const { template, layout } = setup(getBuiltinTemplate('typewriter')!, ws);
    const texts = [0, 0.05, 0.1, 0.2, 0.3, 0.5].map((t) => captionFrameAt(layout, template, t, { fps: 30 }).words[0]!.text);
    expect(texts[0]!.length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < texts.length; i++) {
      expect(texts[i]!.length).toBeGreaterThanOrEqual(texts[i - 1]!.length);
      expect('traveler'.startsWith(texts[i]!)).toBe(true);
    }
    expect(texts.at(-1)).toBe('traveler');
  });

  it('emphasis colours the keyword even when it is not being spoken', () => {
    const { template, layout } = setup(getBuiltinTemplate('keyword-emphasis')!);
    const f = captionFrameAt(layout, template, 0.05, { fps: 30 });
    const emph = f.words.filter((w) => layout.units[w.unit]!.emphasized);
    expect(emph).toHaveLength(1);
    expect(emph[0]!.color).toBe(template.emphasis!.color);
  });
});

describe('keys', () => {
  const sample = (template: Template, fps: number, seconds = 6) => {
    const { layout } = setup(template);
    const keys: string[] = [];
    for (let n = 0; n < seconds * fps; n++) keys.push(captionFrameAt(layout, template, n / fps, { fps }).key);
    return keys;
  };
  const distinct = (keys: string[]) => new Set(keys).size;
  const changes = (keys: string[]) => keys.filter((k, i) => i > 0 && k !== keys[i - 1]).length;

  it('a template whose words look the same in every state changes key only when the page changes', () => {
    const template = getBuiltinTemplate('clean-subtitle')!;
    const { layout } = setup(template);
    const keys = sample(template, 30);
    const pagesShown = new Set([...Array(180).keys()].map((n) => pageAt(layout, n / 30)));
    expect(distinct(keys)).toBe(pagesShown.size);
  });

  it('karaoke changes key once per word', () => {
    const keys = sample(getBuiltinTemplate('karaoke')!, 30);
    const wordsStarted = story.filter((w) => w.start < 6).length;
    expect(changes(keys)).toBe(wordsStarted - 1);
  });

  it.each(builtinTemplates.map((t) => [t.id, t] as const))('%s: few distinct frames, and 60 fps output adds none', (_id, template) => {
    const k30 = sample(template, 30);
    const k60 = sample(template, 60);
    // At most ~8 images per word (a pop or bounce is 4-8 grid steps) plus the page changes.
    const wordsStarted = story.filter((w) => w.start < 6).length;
    expect(distinct(k30)).toBeLessThanOrEqual(wordsStarted * (template.animation.word === 'typewriter' ? 10 : 8) + 4);
    expect(distinct(k60)).toBe(distinct(k30));
  });

  it('keys never change between two grid steps', () => {
    const { template, layout } = setup(getBuiltinTemplate('word-pop')!);
    for (let n = 0; n < 90; n++) {
      const t = n / 30;
      const k = captionFrameAt(layout, template, t, { fps: 30 }).key;
      for (const d of [0.001, 0.01, 0.02, 0.033]) expect(captionFrameAt(layout, template, t + d, { fps: 30 }).key).toBe(k);
    }
  });

  it('same inputs, same frame (pure)', () => {
    const { template, layout } = setup(getBuiltinTemplate('neon')!);
    expect(captionFrameAt(layout, template, 1.234, { fps: 30 })).toEqual(captionFrameAt(layout, template, 1.234, { fps: 30 }));
  });
});

describe('restWordScales', () => {
  // Words 2 s apart: a second into each, every animation is over, the active word's included.
  const slow = words('The North Wind and the Sun were disputing which was the stronger'.split(' '), 2);
  it.each(builtinTemplates.map((t) => [t.id, t] as const))('%s: every word frame after its animation has one of these scales', (_id, template) => {
    const { layout } = setup(template, slow);
    const rest = restWordScales(template);
    const seen = new Set<number>();
    for (let i = 0; i < slow.length; i++) {
      for (const w of captionFrameAt(layout, template, i * 2 + 1, { fps: 30 }).words) {
        expect(rest.has(w.scale), `${w.text} (${w.state}) at scale ${w.scale}`).toBe(true);
        seen.add(w.scale);
      }
    }
    // The active scale is reached (boxed-word, bounce and neon settle above 1).
    if (template.active.scale !== 1) expect(seen.has(Math.round(template.active.scale * 1000) / 1000)).toBe(true);
  });

  it('leaves out a scale caught mid-animation', () => {
    const template = getBuiltinTemplate('word-pop')!;
    const { layout } = setup(template, slow);
    const popping = captionFrameAt(layout, template, 2 + template.animation.duration / 3, { fps: 30 }).words.find((w) => w.state === 'active')!;
    expect(restWordScales(template).has(popping.scale)).toBe(false);
  });
});
