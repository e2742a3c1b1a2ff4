import { describe, expect, it } from 'vitest';
import { ReplacementsSchema, replaceFinalWords, replaceWords, VocabularySchema } from '../src/index.ts';

// Issue 39 item 5: the replacements applied to recognized words (pure), and the limits of both
// fields as the API validates them (the control plane's tests send them through HTTP too).

/** Words one second apart, half a second long, from a sentence. */
const words = (sentence: string, confidence = 0.9) => sentence.split(' ').map((text, i) => ({ text, start: i, end: i + 0.5, confidence }));
const texts = (ws: readonly { text: string }[]) => ws.map((w) => w.text).join(' ');
const r = (from: string, to: string) => ({ from, to });

describe('replaceWords', () => {
  it('replaces whole words only, case-insensitively, keeping the other words as they were', () => {
    const given = words('The cat sat in the Category of CAT');
    const out = replaceWords(given, [r('cat', 'dog')]);
    expect(texts(out)).toBe('The dog sat in the Category of dog');
    expect(out[0]).toBe(given[0]);
    expect(out[1]).toEqual({ text: 'dog', start: 1, end: 1.5, confidence: 0.9 });
  });

  it('joins several words into one spanning the first start to the last end', () => {
    const out = replaceWords(words('we run caption farm here'), [r('Caption Farm', 'Captionfarm')]);
    expect(out.map(({ text, start, end }) => ({ text, start, end }))).toEqual([
      { text: 'we', start: 0, end: 0.5 },
      { text: 'run', start: 1, end: 1.5 },
      { text: 'Captionfarm', start: 2, end: 3.5 },
      { text: 'here', start: 4, end: 4.5 },
    ]);
  });

  it('keeps the punctuation around the matched words on the replacement', () => {
    expect(texts(replaceWords(words('I love caption farm.'), [r('caption farm', 'Captionfarm')]))).toBe('I love Captionfarm.');
    expect(texts(replaceWords(words('"kubernetes, really?"'), [r('kubernetes', 'Kubernetes')]))).toBe('"Kubernetes, really?"');
    expect(texts(replaceWords(words('Hello cf!'), [r('cf', 'Captionfarm!')]))).toBe('Hello Captionfarm!');
  });

  it('does not join words across punctuation the from does not have', () => {
    expect(texts(replaceWords(words('a caption. Farm b'), [r('caption farm', 'Captionfarm')]))).toBe('a caption. Farm b');
    expect(texts(replaceWords(words('a caption, farm b'), [r('caption, farm', 'X')]))).toBe('a X b');
  });

  it('shares the time of a several-word to by characters', () => {
    const out = replaceWords([{ text: 'k8s,', start: 2, end: 4 }], [r('k8s', 'kube ernetes')]);
    // 4 + 7 characters over 2 s.
    expect(out).toEqual([
      { text: 'kube', start: 2, end: 2 + (2 * 4) / 11 },
      { text: 'ernetes,', start: 2 + (2 * 4) / 11, end: 4 },
    ]);
  });

  it('an empty to removes the words; a sentence end they carried moves to the word before', () => {
    expect(texts(replaceWords(words('so um we go'), [r('um', '')]))).toBe('so we go');
    expect(texts(replaceWords(words('we go, um.'), [r('um', '')]))).toBe('we go.');
    expect(texts(replaceWords(words('um, hello you know'), [r('um', ''), r('you know', '')]))).toBe('hello');
  });

  it('the longest from wins at a place, and replaced words are not matched again', () => {
    const out = replaceWords(words('new york city and new things'), [r('new', 'old'), r('new york city', 'NYC'), r('NYC', 'no')]);
    expect(texts(out)).toBe('NYC and old things');
  });

  it('changes nothing without replacements, or for words that are only punctuation', () => {
    const given = words('- hello -');
    expect(replaceWords(given, [])).toEqual(given);
    expect(texts(replaceWords(given, [r('hello', 'hi')]))).toBe('- hi -');
  });
});

describe('replaceFinalWords (words final so far, more to come)', () => {
  const reps = [r('caption farm', 'Captionfarm'), r('um', '')];

  it('holds back the last words a several-word from could still take, and moves finalUntil back to them', () => {
    const snapshot = words('we run caption');
    expect(replaceFinalWords(snapshot, 3, reps)).toEqual({ words: snapshot.slice(0, 2), finalUntil: 2 });
    // Once the next chunk is final, the held words come out replaced exactly as in the whole list.
    const all = words('we run caption farm now');
    expect(replaceFinalWords(all.slice(0, 4), 4, reps)).toEqual({ words: replaceWords(all, reps).slice(0, 3), finalUntil: 4 });
  });

  it('gives every word out when no replacement can go on past the last one', () => {
    const snapshot = words('we run caption.');
    expect(replaceFinalWords(snapshot, 3, reps)).toEqual({ words: snapshot, finalUntil: 3 });
    expect(replaceFinalWords(words('so um'), 2, reps)).toEqual({ words: [words('so')[0]], finalUntil: 2 });
  });

  it('with every word known (finalUntil Infinity) it is replaceWords', () => {
    const all = words('we run caption');
    expect(replaceFinalWords(all, Infinity, reps)).toEqual({ words: all, finalUntil: Infinity });
  });

  it('every snapshot is a prefix of the final words (what the overlapped render relies on)', () => {
    const all = words('caption farm caption um farm caption farm. caption');
    const final = replaceWords(all, reps);
    for (let n = 0; n <= all.length; n++) {
      const snap = replaceFinalWords(all.slice(0, n), n, reps);
      expect(final.slice(0, snap.words.length)).toEqual(snap.words);
    }
  });
});

describe('VocabularySchema and ReplacementsSchema', () => {
  const problems = (schema: typeof VocabularySchema | typeof ReplacementsSchema, value: unknown) => {
    const p = schema.safeParse(value);
    return p.success ? [] : p.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('trims terms and refuses blank, long, multi-line or control-character ones', () => {
    expect(VocabularySchema.parse(['  Captionfarm ', 'Kubernetes  operator'])).toEqual(['Captionfarm', 'Kubernetes operator']);
    expect(problems(VocabularySchema, ['x'.repeat(50)])).toEqual([]);
    expect(problems(VocabularySchema, ['x'.repeat(51)])).toEqual(['0: a term is at most 50 characters']);
    expect(problems(VocabularySchema, ['   '])).toEqual(['0: a term must not be empty or blank']);
    expect(problems(VocabularySchema, ['a\nb', 'a\u0007b'])).toEqual([
      '0: a term must be one line without control characters',
      '1: a term must be one line without control characters',
    ]);
    expect(
      problems(
        VocabularySchema,
        Array.from({ length: 101 }, (_, i) => `t${i}`),
      ),
    ).toEqual([': at most 100 terms']);
    expect(problems(VocabularySchema, [42])).toHaveLength(1);
  });

  it('refuses terms and replacement words made only of invisible characters (zero-width spaces)', () => {
    expect(problems(VocabularySchema, [' \u200b\u200b '])).toEqual(['0: a term must hold a letter or a digit']);
    expect(problems(ReplacementsSchema, [r('\u200b', 'b')])).toEqual(['0.from: from must hold a word, not only punctuation']);
    expect(problems(ReplacementsSchema, [r('um', '\u2060')])).toEqual(['0.to: to must hold a letter or a digit']);
    expect(problems(ReplacementsSchema, [r('um', '')])).toEqual([]); // an empty to still removes the words
    expect(VocabularySchema.parse(['K8s', '3M'])).toEqual(['K8s', '3M']);
  });

  it('refuses duplicate froms case-insensitively, unknown fields, and long or empty froms', () => {
    expect(problems(ReplacementsSchema, [r('Caption  Farm', 'Captionfarm'), r('caption farm', 'x')])).toEqual([
      '1.from: the same words as replacements[0].from (compared case-insensitively)',
    ]);
    expect(problems(ReplacementsSchema, [{ from: 'a', to: 'b', regex: true }])).toHaveLength(1);
    expect(problems(ReplacementsSchema, [r('', 'b')])).toEqual(['0.from: from must not be empty or blank']);
    expect(problems(ReplacementsSchema, [r('...', 'b')])).toEqual(['0.from: from must hold a word, not only punctuation']);
    expect(problems(ReplacementsSchema, [r('a', 'b'.repeat(51))])).toEqual(['0.to: to is at most 50 characters']);
    expect(problems(ReplacementsSchema, [r('um', '')])).toEqual([]);
    expect(
      problems(
        ReplacementsSchema,
        Array.from({ length: 201 }, (_, i) => r(`w${i}`, 'x')),
      ),
    ).toEqual([': at most 200 replacements']);
  });
});
