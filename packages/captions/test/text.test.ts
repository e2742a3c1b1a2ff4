import { describe, expect, it } from 'vitest';
import {
  applyCase,
  baseDirection,
  displayLength,
  endsClause,
  endsSentence,
  graphemes,
  needsSpaceBetween,
  splitNoSpaceWord,
  stripPunctuation,
  textDirection,
  visualOrder,
} from '../src/text.ts';

describe('splitNoSpaceWord (Chinese/Japanese broken by character)', () => {
  it.each([
    ['我们今天', ['我', '们', '今', '天']],
    ['今日は。', ['今', '日', 'は。']],
    ['「こんにちは」', ['「こ', 'ん', 'に', 'ち', 'は」']],
    ['用iPhone拍', ['用', 'iPhone', '拍']],
    ['好！', ['好！']],
    ['天气很好，我们', ['天', '气', '很', '好，', '我', '们']],
  ])('%s', (input, expected) => {
    expect(splitNoSpaceWord(input)).toEqual(expected);
  });
});

describe('visualOrder (word-level bidi)', () => {
  it.each([
    ['all LTR', ['ltr', 'ltr', 'ltr'], 'ltr', [0, 1, 2]],
    ['all RTL', ['rtl', 'rtl', 'rtl'], 'rtl', [2, 1, 0]],
    ['English run inside Arabic keeps its order', ['rtl', 'rtl', 'ltr', 'ltr', 'ltr', 'rtl'], 'rtl', [5, 2, 3, 4, 1, 0]],
    ['number between two English words joins them', ['rtl', 'ltr', null, 'ltr'], 'rtl', [1, 2, 3, 0]],
    ['number next to Arabic stays in the RTL flow', ['rtl', null, 'rtl'], 'rtl', [2, 1, 0]],
    ['Hebrew run inside English is reversed', ['ltr', 'rtl', 'rtl', 'ltr'], 'ltr', [0, 2, 1, 3]],
  ] as const)('%s', (_name, dirs, base, expected) => {
    expect(visualOrder(dirs, base)).toEqual(expected);
  });
});

describe('direction', () => {
  it.each([
    ['hello', 'ltr'],
    ['مرحبا', 'rtl'],
    ['שלום', 'rtl'],
    ['123', null],
    ['"مرحبا"', 'rtl'],
    ['🔥', null],
  ] as const)('textDirection(%s)', (text, dir) => {
    expect(textDirection(text)).toBe(dir);
  });

  it.each([
    [['أنا', 'أحب', 'VS', 'كثيرا'], 'rtl'],
    [['I', 'love', 'שלום'], 'ltr'],
    [['אני', 'אוהב', 'Visual', 'Studio', 'מאוד'], 'rtl'],
    [['Visual', 'Studio', 'هو', 'رائع'], 'ltr'],
    [['123', 'שלום', 'ok'], 'rtl'],
    [['123'], 'ltr'],
  ] as const)('base direction of %j is %s (most words, then the first)', (texts, dir) => {
    expect(baseDirection(texts)).toBe(dir);
  });
});

describe('small helpers', () => {
  it.each([
    ['Hello', 'World', true],
    ['我', '们', false],
    ['用', 'iPhone', false],
    ['안녕', '하세요', true],
  ])('needsSpaceBetween(%s, %s) = %s', (a, b, v) => {
    expect(needsSpaceBetween(a, b)).toBe(v);
  });

  it.each([
    ['stronger,', 'stronger'],
    ['cloak.', 'cloak'],
    ['really?', 'really?'],
    ['wow!', 'wow!'],
    ['...', '...'],
    ['好。', '好'],
  ])('stripPunctuation(%s) = %s', (a, b) => {
    expect(stripPunctuation(a)).toBe(b);
  });

  it.each([
    ['cloak.', true, false],
    ['two."', true, false],
    ['why?', true, false],
    ['好。', true, false],
    ['stronger,', false, true],
    ['him;', false, true],
    ['Wind', false, false],
  ])('%s ends a sentence: %s, a clause: %s', (text, sentence, clause) => {
    expect(endsSentence(text)).toBe(sentence);
    expect(endsClause(text)).toBe(clause);
  });

  it('counts full-width characters twice and keeps emoji whole', () => {
    expect(displayLength('abc')).toBe(3);
    expect(displayLength('我们')).toBe(4);
    expect(graphemes('👍🏽ok')).toEqual(['👍🏽', 'o', 'k']);
  });

  it('applies case', () => {
    expect(applyCase('Wind', 'upper')).toBe('WIND');
    expect(applyCase('Wind', 'lower')).toBe('wind');
    expect(applyCase('مرحبا', 'upper')).toBe('مرحبا');
  });
});
