import { describe, expect, it } from 'vitest';
import { normalizeWords, onsetErrorsMs, parseReferenceOnsets, percentile, scoreErrors, scoringUnits, wordErrorRate } from '../src/index.ts';

const word = (text: string, start: number) => ({ text, start, end: start + 0.2, confidence: 1 });

describe('wordErrorRate', () => {
  it.each([
    ['And so, my fellow Americans.', 'and so my fellow americans', 0],
    ['the north wind', 'the north wind blew', 1 / 3],
    ['the north wind', 'the wind', 1 / 3],
    ['the north wind', 'a north win', 2 / 3],
    ["The Sun's cloak", 'the sun’s cloak', 0],
    ['', '', 0],
    ['', 'hallucinated', 1],
  ])('%j vs %j', (ref, hyp, expected) => {
    expect(wordErrorRate(ref, hyp)).toBeCloseTo(expected, 6);
  });

  it('normalizes case and punctuation but keeps apostrophes inside words', () => {
    expect(normalizeWords('"Stronger," he said; the Sun\'s cloak—off!')).toEqual(['stronger', 'he', 'said', 'the', "sun's", 'cloak', 'off']);
  });
});

describe('onsetErrorsMs', () => {
  const reference = parseReferenceOnsets('0\t1\t3\tThe\n129\t5\t5\tNorth\n435\t11\t4\tWind\n866\t16\t3\tand\n');

  it('parses espeak .words lines', () => {
    expect(reference).toEqual([
      { word: 'The', onset: 0 },
      { word: 'North', onset: 0.129 },
      { word: 'Wind', onset: 0.435 },
      { word: 'and', onset: 0.866 },
    ]);
  });

  it('measures matched words only', () => {
    const errors = onsetErrorsMs(reference, [word('The', 0.07), word('North,', 0.18), word('Wand', 0.5), word('and', 0.86)]);
    expect(errors.map((e) => Math.round(e))).toEqual([70, 51, 6]);
  });

  it('takes nearest-rank percentiles', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('scoringUnits: the one normaliser of bench:accuracy', () => {
  it('leaves fillers and laughter out and spells alike what is written two ways', () => {
    expect(scoringUnits("Um, alright, y'know, ha-ha, it's OK.")).toEqual(['alright', 'you', 'know', "it's", 'okay']);
    expect(wordErrorRate('uh all right so um this is it', 'Alright, so this is it.')).toBe(0);
  });
  it('scores languages written without spaces by characters', () => {
    expect(scoringUnits('今日は 良い天気。', 'ja')).toEqual([...'今日は良い天気']);
    expect(scoreErrors('今日は良い天気', '今日 は 悪い 天気', 'ja')).toEqual({ errors: 1, units: 7 });
  });
});
