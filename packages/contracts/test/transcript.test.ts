import { describe, expect, it } from 'vitest';
import { TranscriptInputSchema, fitWords } from '../src/index.ts';

describe('fitWords (recognized words made valid to send back as a transcript)', () => {
  it('zero-length words last 1 ms, starts never go back, everything stays within the source', () => {
    const fitted = fitWords(
      [
        { text: 'a', start: 0.5, end: 0.5, confidence: 0.9 },
        { text: 'b', start: 0.4, end: 0.8, confidence: 0.9 },
        { text: 'c', start: 2.0, end: 2.0, confidence: 0.9 },
        { text: 'd', start: 2.0, end: 2.0, confidence: 0.9 },
      ],
      2,
    );
    expect(fitted).toEqual([
      { text: 'a', start: 0.5, end: 0.501, confidence: 0.9 },
      { text: 'b', start: 0.5, end: 0.8, confidence: 0.9 },
      { text: 'c', start: 1.999, end: 2, confidence: 0.9 },
      { text: 'd', start: 1.999, end: 2, confidence: 0.9 },
    ]);
    expect(TranscriptInputSchema.safeParse({ words: fitted.map(({ text, start, end }) => ({ text, start, end })) }).success).toBe(true);
  });

  it('leaves good words as they are', () => {
    const words = [
      { text: 'x', start: 0.1, end: 0.3 },
      { text: 'y', start: 0.3, end: 0.9 },
    ];
    expect(fitWords(words, 5)).toEqual(words);
  });
});
