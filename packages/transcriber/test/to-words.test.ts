import { readFileSync } from 'node:fs';
import { WordSchema } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { TranscriptionError, toWords } from '../src/index.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as unknown;

/** A verbose_json payload with one segment made of (text, start, end, p, dtw) tokens. */
function payload(tokens: Array<[string, number, number, number?, number?]>, language = 'english') {
  return {
    task: 'transcribe',
    language,
    duration: 30,
    text: tokens.map((t) => t[0]).join(''),
    segments: [
      {
        id: 0,
        text: tokens.map((t) => t[0]).join(''),
        start: tokens[0]?.[1] ?? 0,
        end: tokens.at(-1)?.[2] ?? 0,
        words: tokens.map(([word, start, end, probability = 0.9, t_dtw = -1]) => ({ word, start, end, probability, t_dtw })),
        no_speech_prob: 0,
      },
    ],
  };
}

describe('toWords on a recorded whisper-server payload (jfk.wav, base, language auto)', () => {
  const result = toWords(fixture('server-jfk-base-auto.json'), { timing: 'token', duration: 11 });

  it('reports the detected language as a code', () => {
    expect(result.language).toBe('en');
  });

  it('groups tokens into words with punctuation attached', () => {
    expect(result.words.map((w) => w.text)).toEqual([
      'And',
      'so',
      'my',
      'fellow',
      'Americans',
      'ask',
      'not',
      'what',
      'your',
      'country',
      'can',
      'do',
      'for',
      'you,',
      'ask',
      'what',
      'you',
      'can',
      'do',
      'for',
      'your',
      'country.',
    ]);
  });

  it('gives valid Word records with non-decreasing starts inside the media', () => {
    let previous = 0;
    for (const w of result.words) {
      expect(WordSchema.parse(w)).toEqual(w);
      expect(w.start).toBeGreaterThanOrEqual(previous);
      expect(w.end).toBeGreaterThanOrEqual(w.start);
      expect(w.end).toBeLessThanOrEqual(11);
      previous = w.start;
    }
    expect(result.words[0]).toMatchObject({ text: 'And', start: 0.32, end: 0.4 });
    expect(result.words.at(-1)).toMatchObject({ text: 'country.', start: 10, end: 10.35 });
  });

  it('times "you," from its word token, not from the comma', () => {
    // tokens: " you" 7.16-7.28 p=0.982, "," 7.28-7.49 p=0.432
    const you = result.words.find((w) => w.text === 'you,')!;
    expect(you).toMatchObject({ start: 7.16, end: 7.28, confidence: 0.982 });
  });
});

describe('toWords on a recorded payload with DTW times (en.wav)', () => {
  const data = fixture('server-en-base-dtw.json');

  it('starts a word at the DTW time of the token before it when DTW and token times agree', () => {
    const token = toWords(data, { timing: 'token' }).words;
    const dtw = toWords(data, { timing: 'dtw' }).words;
    expect(token.map((w) => w.text)).toEqual(dtw.map((w) => w.text));
    // en.words: The 0, North 0.129, Wind 0.435. The first word has no token before it.
    expect(token.slice(0, 3).map((w) => w.start)).toEqual([0.07, 0.18, 0.49]);
    expect(dtw.slice(0, 3).map((w) => w.start)).toEqual([0.07, 0.12, 0.34]);
  });

  it('follows DTW where the token times drift, and keeps the token time where there is no DTW time', () => {
    // c: b's DTW 2.00 is 0.5 s before c's token time (whisper.cpp's token times drift by whole
    // stretches after a pause); a: no token before it; d: whisper gave no DTW time.
    const r = toWords(
      payload([
        [' a', 1, 1.2, 0.9, 130],
        [' b', 1.3, 1.5, 0.9, 200],
        [' c', 2.5, 2.7, 0.9, -1],
        [' d', 2.8, 3, 0.9, 290],
      ]),
      { timing: 'dtw' },
    );
    expect(r.words.map((w) => w.start)).toEqual([1, 1.3, 2, 2.8]);
  });

  it('joins sub-word tokens and trailing punctuation ("disput" + "ing" + ",")', () => {
    const word = toWords(data, { timing: 'token' }).words.find((w) => w.text.startsWith('disput'))!;
    expect(word).toMatchObject({ text: 'disputing,', start: 1.51, end: 2.06 });
    // confidence from the letter tokens only: mean(0.3529, 0.9941), not dragged by ","
    expect(word.confidence).toBeCloseTo((0.3529050052165985 + 0.9941350221633911) / 2, 3);
  });
});

describe('toWords edge cases', () => {
  it('uses the requested language over the detected one', () => {
    expect(toWords(payload([[' Hallo', 0, 0.5]], 'german'), { timing: 'token', language: 'de' }).language).toBe('de');
    expect(toWords(payload([[' Hallo', 0, 0.5]], 'german'), { timing: 'token' }).language).toBe('de');
  });

  it('joins a spaced opening quote to the next word, spaced closing marks to the previous, drops lone dashes', () => {
    const r = toWords(
      payload([
        [' He', 0, 0.2],
        [' said', 0.2, 0.5],
        [' "', 0.5, 0.5],
        [' hi', 0.5, 0.8],
        [' !', 0.8, 0.8],
        [' -', 0.8, 0.8],
        [' ok', 0.9, 1.2],
        [' ...', 1.2, 1.2],
      ]),
      { timing: 'token' },
    );
    expect(r.words.map((w) => w.text)).toEqual(['He', 'said', '"hi!', 'ok...']);
    expect(r.words[2]).toMatchObject({ start: 0.5, end: 0.8 });
  });

  it('keeps "¿" and "?" with their word (Spanish)', () => {
    const r = toWords(
      payload(
        [
          [' ¿', 0, 0],
          ['Qué', 0, 0.3],
          ['?', 0.3, 0.3],
        ],
        'spanish',
      ),
      { timing: 'token' },
    );
    expect(r.words.map((w) => w.text)).toEqual(['¿Qué?']);
  });

  it('drops non-speech annotations and special tokens', () => {
    const r = toWords(
      payload([
        ['[_BEG_]', 0, 0],
        [' [', 0, 0.1],
        ['BL', 0.1, 0.2],
        ['ANK', 0.2, 0.3],
        ['_', 0.3, 0.3],
        ['AUD', 0.3, 0.4],
        ['IO', 0.4, 0.5],
        [']', 0.5, 0.5],
        [' (', 1, 1],
        ['upbeat', 1, 1.2],
        [' music', 1.2, 1.5],
        [')', 1.5, 1.5],
        [' ♪', 2, 2.5],
        [' Hello', 3, 3.4],
        ['.', 3.4, 3.4],
        ['[_TT_175]', 3.5, 3.5],
      ]),
      { timing: 'token' },
    );
    expect(r.words.map((w) => w.text)).toEqual(['Hello.']);
  });

  it('never lets a start go backwards or past the media duration', () => {
    const r = toWords(
      payload([
        [' a', 1, 1.5],
        [' b', 0.8, 1.2],
        [' c', 2, 9],
      ]),
      { timing: 'token', duration: 5 },
    );
    expect(r.words.map((w) => [w.start, w.end])).toEqual([
      [1, 1.5],
      [1, 1.2],
      [2, 5],
    ]);
  });

  it('joins a word split across two segments', () => {
    const two = payload([
      [' disput', 1.5, 1.9],
      ['ing', 1.9, 2.1],
      [',', 2.1, 2.1],
      [' which', 2.3, 2.6],
    ]);
    const [first, ...rest] = two.segments[0]!.words;
    const split = {
      ...two,
      segments: [
        { ...two.segments[0]!, words: [first!] },
        { ...two.segments[0]!, words: rest },
      ],
    };
    expect(toWords(split, { timing: 'token' }).words.map((w) => [w.text, w.start, w.end])).toEqual([
      ['disputing,', 1.5, 2.1],
      ['which', 2.3, 2.6],
    ]);
  });

  it('returns no words for an empty transcript', () => {
    expect(toWords({ language: 'english', text: '', segments: [] }, { timing: 'token' })).toEqual({ language: 'en', words: [] });
  });

  it('rejects a payload that is not whisper-server verbose_json', () => {
    expect(() => toWords({ text: 'hi' }, { timing: 'token' })).toThrow(TranscriptionError);
    expect(() => toWords({ error: 'failed to read WAV file' }, { timing: 'token' })).toThrow(expect.objectContaining({ code: 'transcription-failed' }));
  });

  it('rejects a detected language it cannot name', () => {
    expect(() => toWords(payload([[' x', 0, 1]], 'klingon'), { timing: 'token' })).toThrow(/klingon/);
  });
});

describe('toWords in languages written without spaces', () => {
  it('cuts a Japanese sentence into words, each timed from its own tokens', () => {
    // Whisper gives no leading spaces in Japanese: before, these tokens came out as one "word".
    const p = payload(
      [
        [' 今日', 0.0, 0.4, 0.9, 30],
        ['は', 0.4, 0.6, 0.9, 55],
        ['良い天気', 0.6, 1.4, 0.9, 135],
        ['です', 1.4, 1.8, 0.9, 175],
        ['ね。', 1.8, 2.1, 0.9, 205],
      ],
      'japanese',
    );
    const { words } = toWords(p, { timing: 'token', language: 'ja' });
    expect(words.map((w) => w.text)).toEqual(['今日', 'は', '良い', '天気', 'です', 'ね。']);
    // "良い天気" is one token of 4 characters, 0.6-1.4 s: each word takes its share of it.
    expect(words.map((w) => [w.start, w.end])).toEqual([
      [0, 0.4],
      [0.4, 0.6],
      [0.6, 1.0],
      [1.0, 1.4],
      [1.4, 1.8],
      [1.8, 1.95], // "ね" is half of the token "ね。"; the full stop joins it and adds no time
    ]);
    // DTW starts: where the token before ends, shared out inside a token the same way.
    const dtw = toWords(p, { timing: 'dtw', language: 'ja' }).words.map((w) => w.start);
    expect(dtw).toEqual([0, 0.3, 0.55, 0.95, 1.35, 1.75]);
  });

  it('cuts Chinese into words and keeps Latin words inside it whole', () => {
    const p = payload(
      [
        [' 我们今天', 0.0, 1.0],
        ['用', 1.0, 1.2],
        [' iPhone', 1.2, 1.8],
        ['拍照。', 1.8, 2.4],
      ],
      'chinese',
    );
    expect(toWords(p, { timing: 'token', language: 'zh' }).words.map((w) => w.text)).toEqual(['我们', '今天', '用', 'iPhone', '拍照。']);
  });

  it('leaves languages written with spaces as whisper spaced them', () => {
    const p = payload([
      [' Hello', 0, 0.5],
      [' world.', 0.5, 1],
    ]);
    expect(toWords(p, { timing: 'token', language: 'en' }).words.map((w) => w.text)).toEqual(['Hello', 'world.']);
  });
});
