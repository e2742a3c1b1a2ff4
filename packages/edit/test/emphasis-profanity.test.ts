import { describe, expect, it } from 'vitest';
import { fillerPrompt, maskWord } from '../src/index.ts';
import { plan, words } from './helpers.ts';

const zoomOnly = { edit: { zoom: 'emphasis' as const } };

describe('zoom: emphasis', () => {
  it('ALL CAPS and "!" words get a 1.12 punch-in from 0.1 s before to 0.35 s after the word', () => {
    const out = plan(words('This@1-1.2 is@1.3-1.4 AMAZING@1.5-2 and@2.1-2.2 wow!@5-5.3'), zoomOnly);
    expect(out.plan.zooms).toEqual([
      { start: 1.4, end: 2.35, scale: 1.12 },
      { start: 4.9, end: 5.65, scale: 1.12 },
    ]);
  });

  it("the template's keywords (phrases too) get 1.08", () => {
    const out = plan(words('start@1-1.2 your@1.3-1.4 free@1.5-1.7 trial@1.8-2.1 today@3.5-3.8'), { ...zoomOnly, keywords: ['Free Trial'] });
    expect(out.plan.zooms).toEqual([{ start: 1.4, end: 2.45, scale: 1.08 }]);
  });

  it('a sentence of more than 6 words with no other emphasis zooms on its longest non-stopword; one of 6 words does not', () => {
    const seven = plan(words('we@1-1.1 built@1.2-1.4 the@1.5-1.6 fastest@1.7-2.1 renderer@2.2-2.6 in@2.7-2.8 town.@2.9-3.2'), zoomOnly);
    expect(seven.plan.zooms).toEqual([{ start: 2.1, end: 2.95, scale: 1.08 }]);
    const six = plan(words('we@1-1.1 built@1.2-1.4 the@1.5-1.6 fastest@1.7-2.1 renderer@2.2-2.6 ever.@2.7-2.9'), zoomOnly);
    expect(six.plan.zooms).toEqual([]);
  });

  it('at most one zoom starts in any 2.5 s, the strong ones placed first', () => {
    const spaced = plan(words('BIG@1-1.2 HUGE@2-2.2 GIANT@4-4.2'), zoomOnly);
    expect(spaced.plan.zooms.map((z) => z.start)).toEqual([0.9, 3.9]);
    // "renderer" (longest word, 1.08) would start at 2.1; "NOW" (caps, 1.12) at 3.4 wins the 2.5 s.
    const strongFirst = plan(words('we@1-1.1 built@1.2-1.4 the@1.5-1.6 fastest@1.7-2.1 renderer@2.2-2.6 in@2.7-2.8 town.@2.9-3.2 NOW@3.5-3.8'), zoomOnly);
    expect(strongFirst.plan.zooms).toEqual([{ start: 3.4, end: 4.15, scale: 1.12 }]);
  });

  it('zooms are on the output timeline: after a cut they follow the word', () => {
    const out = plan(words('Hello@1-1.5 WORLD@4-4.5'), { edit: { zoom: 'emphasis', silences: 'fast' } });
    const world = out.words.find((x) => x.text === 'WORLD')!;
    expect(world.start).toBeCloseTo(0.725, 6);
    expect(out.plan.zooms).toEqual([{ start: 0.625, end: 1.3, scale: 1.12 }]);
    expect(out.plan.outputSeconds).toBe(1.3);
  });

  it('zoom off, or no edit: no zooms', () => {
    expect(plan(words('AMAZING@1-2'), { edit: {} }).plan.zooms).toEqual([]);
    expect(plan(words('AMAZING@1-2'), { edit: null }).plan.zooms).toEqual([]);
  });
});

describe('profanity', () => {
  const talk = words('what@1-1.2 the@1.3-1.4 fuck,@1.5-1.8 that@2-2.2 class@2.3-2.6 was@2.7-2.8 fucked@3-3.4 up@3.5-3.6');

  it('mask: profane words keep their first letter and punctuation, in the burned and the exported words; innocent words stay', () => {
    const out = plan(talk, { profanity: 'mask', edit: null });
    expect(out.words.map((x) => x.text)).toEqual(['what', 'the', 'f***,', 'that', 'class', 'was', 'f*****', 'up']);
    expect(out.sourceWords.map((x) => x.text)).toEqual(out.words.map((x) => x.text));
    expect(out.plan.bleeps).toEqual([]);
  });

  it("bleep: the masked words' output spans, touching ones joined", () => {
    const out = plan(talk, { profanity: 'bleep', edit: null });
    expect(out.plan.bleeps).toEqual([
      { start: 1.5, end: 1.8 },
      { start: 3, end: 3.4 },
    ]);
    const touching = plan(words('holy@0.5-0.8 shit@1-1.3 fucking@1.3-1.7 hell@2-2.2'), { profanity: 'bleep', edit: null });
    expect(touching.plan.bleeps).toEqual([{ start: 1, end: 1.7 }]);
  });

  it('bleeps follow the cuts onto the output timeline; a cut removes its masked words in masked form', () => {
    const out = plan(words('Well@1-1.3 um@1.3-1.6 shit.@3-3.4 Fuck@5-5.3 that@5.4-5.6'), {
      profanity: 'bleep',
      edit: { silences: 'fast', fillers: 'safe', keep: null },
    });
    const shit = out.words.find((x) => x.text === 's***.')!;
    expect(out.plan.bleeps[0]).toEqual({ start: shit.start, end: shit.end });
    expect(out.plan.bleeps).toHaveLength(2);
    const client = plan(words('Well@1-1.3 shit.@3-3.4 Fuck@5-5.3 that@5.4-5.6'), { profanity: 'mask', edit: { keep: [{ start: 0.9, end: 3.5 }] } });
    expect(client.plan.cuts.at(-1)).toEqual({ start: 3.5, end: 10, reason: 'client', text: 'F*** that' });
  });

  it("German: the German list and the account's own words; English words are not on it", () => {
    const out = plan(words('So@1-1.2 eine@1.3-1.5 Scheiße!@1.6-2 Mist@2.1-2.4 fuck@2.5-2.8'), {
      language: 'de',
      profanity: 'mask',
      profanityWords: ['Mist'],
      edit: null,
    });
    expect(out.words.map((x) => x.text)).toEqual(['So', 'eine', 'S******!', 'M***', 'fuck']);
  });

  it("the account's words add to English too; off masks nothing", () => {
    const ws = words('this@1-1.2 frak@1.3-1.6 shit@1.7-2');
    expect(plan(ws, { profanity: 'mask', profanityWords: ['frak'], edit: null }).words.map((x) => x.text)).toEqual(['this', 'f***', 's***']);
    expect(plan(ws, { profanity: 'off', profanityWords: ['frak'], edit: null }).words.map((x) => x.text)).toEqual(['this', 'frak', 'shit']);
  });

  it.each([
    ['fuck,', 'f***,'],
    ['"Shit!"', '"S***!"'],
    ['Scheiße', 'S******'],
    ['a', 'a'],
    ['...', '...'],
  ])('maskWord(%j) = %j', (input, expected) => {
    expect(maskWord(input)).toBe(expected);
  });
});

describe('fillerPrompt', () => {
  it('asks whisper for the hesitations of the language, and nothing for null or a language without a lexicon', () => {
    expect(fillerPrompt('en')).toMatch(/\bumm?\b/i);
    expect(fillerPrompt('en')).toMatch(/\buh\b/i);
    expect(fillerPrompt('de')).toMatch(/äh/i);
    expect(fillerPrompt('fr')).toMatch(/euh/i);
    expect(fillerPrompt('pt-BR')).toBe(fillerPrompt('pt'));
    expect(fillerPrompt(null)).toBe('');
    expect(fillerPrompt('ja')).toBe('');
  });
});
