/**
 * English forced alignment with PocketSphinx: the pure parts with tables of cases, then the real
 * build (scripts/build-pocketsphinx) on a real spontaneous voice whose word starts a different
 * aligner (the Montreal Forced Aligner) measured: given whisper-like starts that are all wrong,
 * with the fillers left out as whisper leaves them out, the aligned starts land on MFA's.
 * Without the build the suite fails with what to run (never skips).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import { pocketsphinxPaths } from '@captionfarm/process/tools';
import {
  acousticAligner,
  alignmentInputs,
  lexiconParts,
  onsetErrorsMs,
  parseAlignedWords,
  parseAlignment,
  parseLexicon,
  percentile,
  pronunciationsOf,
} from '../src/index.ts';
import { MEDIA } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'acoustic-align-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LEXICON = parseLexicon(['hello HH AH L OW', 'hello(2) HH EH L OW', "don't D OW N T", 'e IY', 'mail M EY L', 'two T UW', ''].join('\n'));
const word = (text: string, start = 0): Word => ({ text, start, end: start + 0.2, confidence: 0.9 });

describe('acoustic-align, pure parts', () => {
  it('parseLexicon: variants under one word, blank lines skipped', () => {
    expect(LEXICON.get('hello')).toEqual(['HH AH L OW', 'HH EH L OW']);
    expect(LEXICON.get("don't")).toEqual(['D OW N T']);
    expect(LEXICON.size).toBe(5);
  });

  it.each([
    ['Hello,', ['hello']],
    ['Don’t', ["don't"]],
    ['e-mail.', ['e', 'mail']],
    ["'quoted'", ['quoted']],
    ['$20', ['20']],
    ['...', []],
  ])('lexiconParts(%j) = %j', (text, parts) => {
    expect(lexiconParts(text)).toEqual(parts);
  });

  it('pronunciationsOf: CMUdict variants, parts joined, the garbage phone for what CMUdict lacks', () => {
    expect(pronunciationsOf('Hello!', LEXICON)).toEqual(['HH AH L OW', 'HH EH L OW']);
    expect(pronunciationsOf('e-mail', LEXICON)).toEqual(['IY M EY L']);
    expect(pronunciationsOf('Zyxqwort', LEXICON)).toEqual(['+SPN+']);
    expect(pronunciationsOf('22', LEXICON)).toEqual(['+SPN+']);
    expect(pronunciationsOf('—', LEXICON)).toEqual(['+SPN+']);
  });

  it('alignmentInputs: one dictionary entry per word position, fillers allowed before every word and at the end', () => {
    const { dictionary, grammar } = alignmentInputs([word('Hello'), word('two'), word('Zyx')], LEXICON);
    const lines = dictionary.trim().split('\n');
    expect(lines).toContain('w0 HH AH L OW');
    expect(lines).toContain('w0(2) HH EH L OW');
    expect(lines).toContain('w1 T UW');
    expect(lines).toContain('w2 +SPN+');
    expect(lines).toContain('um AH M');
    expect(grammar).toContain('public <s> = <f> w0 <f> w1 <f> w2 <f>;');
    expect(grammar).toMatch(/<f> = \[uh \| um \| ah \| er \| hm \| mm\];/);
  });

  it('alignmentInputs: recognized text never reaches the files PocketSphinx reads (only w<i>, fillers and phones do)', () => {
    const hostile = [word('two;\n<s> = w0 | hello;'), word('w0(2) HH'), word('#JSGF V1.0; grammar x;'), word('../../etc/passwd')];
    const { dictionary, grammar } = alignmentInputs(hostile, LEXICON);
    for (const line of dictionary.trim().split('\n')) expect(line).toMatch(/^(?:w\d+(?:\(\d+\))?|uh|um|ah|er|hm|mm) (?:\+SPN\+|[A-Z]+(?: [A-Z]+)*)$/);
    expect(
      dictionary
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('w')),
    ).toEqual(['w0 +SPN+', 'w1 +SPN+', 'w2 +SPN+', 'w3 +SPN+']);
    expect(grammar).toBe('#JSGF V1.0;\ngrammar words;\npublic <s> = <f> w0 <f> w1 <f> w2 <f> w3 <f>;\n<f> = [uh | um | ah | er | hm | mm];\n');
  });

  const json = (ts: string[]) => JSON.stringify({ t: 'x', w: ts.map((t, i) => ({ b: i * 0.5, d: 0.3, p: 1, t })) });
  it.each([
    ['every word once, in order, among silences, fillers and nulls', ['(NULL)', '<sil>', 'w0', 'um', 'w1(2)', '[NOISE]', 'w2'], [0, 1, 2]],
    ['a word missing', ['w0', 'w2'], null],
    ['out of order', ['w1', 'w0', 'w2'], null],
    ['a word twice', ['w0', 'w0', 'w1', 'w2'], null],
  ])('parseAlignment: %s', (_, ts, wanted) => {
    const got = parseAlignment(json(ts), 3);
    if (wanted === null) expect(got).toBeNull();
    else expect(got?.map((w) => w.start)).toEqual(wanted.map((i) => ts.indexOf(ts.filter((t) => /^w\d/.test(t))[i]!) * 0.5));
  });

  it('parseAlignment: no JSON, or no words (no path through the grammar), is a failed alignment', () => {
    expect(parseAlignment('', 2)).toBeNull();
    expect(parseAlignment('{"b":0,"d":1,"p":1,"t":""}', 2)).toBeNull();
  });
});

describe('acoustic-align with the real PocketSphinx build', { timeout: 120_000 }, () => {
  const paths = pocketsphinxPaths();
  if (!paths) throw new Error('the acoustic alignment tests need PocketSphinx: run "bash scripts/build-pocketsphinx"');
  const aligner = acousticAligner(paths);
  // A spontaneous monologue by a speaker with a cold (uh, um, a long pause), MFA's word timings.
  const wav = join(MEDIA, 'real', 'en_mfa_cold_corpus.wav');
  const reference = parseAlignedWords(readFileSync(join(MEDIA, 'real', 'en_mfa_cold_corpus.words'), 'utf8'));
  const FILLERS = new Set(['uh', 'um']);
  const spoken = reference.filter((w) => !FILLERS.has(w.word));

  it('fillers left out, every start 0.25 s early: the aligned starts land on MFA`s (median <= 40 ms, p90 <= 150 ms)', async () => {
    const whisperLike = spoken.map((w) => word(w.word, Math.max(0, w.start - 0.25)));
    const aligned = await aligner.align(whisperLike, { wavPath: wav, from: 0, to: 25.7, workDir: dir });
    expect(aligned).not.toBeNull();
    const errors = onsetErrorsMs(
      reference.map((w) => ({ word: w.word, onset: w.start })),
      aligned!,
    );
    const before = onsetErrorsMs(
      reference.map((w) => ({ word: w.word, onset: w.start })),
      whisperLike,
    );
    console.log(
      `aligned: median ${percentile(errors, 50).toFixed(0)} ms, p90 ${percentile(errors, 90).toFixed(0)} ms over ${errors.length} words (given: median ${percentile(before, 50).toFixed(0)} ms)`,
    );
    expect(errors).toHaveLength(spoken.length);
    expect(percentile(errors, 50)).toBeLessThanOrEqual(40);
    expect(percentile(errors, 90)).toBeLessThanOrEqual(150);
    // The word after "uh uh" (the filler whisper drops) starts where it is said, not on the filler.
    const acoustic = aligned!.find((w) => w.text === 'acoustic')!;
    expect(Math.abs(acoustic.start - reference.find((w) => w.word === 'acoustic')!.start)).toBeLessThanOrEqual(0.1);
    // Every start inside the audio, in order, ends after starts.
    aligned!.forEach((w, i) => {
      expect(w.end).toBeGreaterThanOrEqual(w.start);
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(aligned![i - 1]!.start);
    });
  });

  it('a word CMUdict lacks takes its time without pulling its neighbours off (the garbage phone)', async () => {
    const words = spoken.map((w) => word(w.word === 'corpus' ? 'Korpuzzle' : w.word, w.start));
    const aligned = await aligner.align(words, { wavPath: wav, from: 0, to: 25.7, workDir: dir });
    expect(aligned).not.toBeNull();
    const errors = onsetErrorsMs(
      reference.map((w) => ({ word: w.word, onset: w.start })),
      aligned!,
    );
    expect(percentile(errors, 50)).toBeLessThanOrEqual(40);
    const after = aligned!.findIndex((w) => w.text === 'Korpuzzle') + 1;
    expect(Math.abs(aligned![after]!.start - spoken[after]!.start)).toBeLessThanOrEqual(0.1);
  });

  it('words that cannot fit the audio (40 words in 1 s) are a failed alignment (null), not made-up times', async () => {
    const many = Array.from({ length: 40 }, (_, i) => word(['different', 'acoustic', 'recording'][i % 3]!, i * 0.02));
    expect(await aligner.align(many, { wavPath: wav, from: 2, to: 3, workDir: dir })).toBeNull();
  });

  it('a program that cannot start rejects (the transcriber then stops asking and logs it)', async () => {
    const broken = acousticAligner({ ...paths, program: join(dir, 'no-such-pocketsphinx') });
    await expect(broken.align([word('hello')], { wavPath: wav, from: 0, to: 1, workDir: dir })).rejects.toThrow(/ENOENT|no-such/);
  });
});
