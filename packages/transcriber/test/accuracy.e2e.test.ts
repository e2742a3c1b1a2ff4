/**
 * Accuracy with real Whisper base weights (scripts/fetch-test-model) on real and synthetic
 * speech: word error rate, word onsets against espeak-ng's word events, words around pauses,
 * music and noise beds, decoding loops, and nothing written on silence, room tone or music.
 * Without the weights or the whisper.cpp build the suite fails with what to run. The figures are
 * printed for the README (npm run bench:accuracy measures the same clips over several rounds).
 */
import { existsSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTranscriber, onsetErrorsMs, parseReferenceOnsets, percentile, wordErrorRate, type Transcriber, type TranscribeResult } from '../src/index.ts';
import { loopReason } from '../src/loops.ts';
import { runToEnd } from '@captionfarm/process';
import { CLIPS, makeClip, MUSIC_LAVFI, sharedEnClip, wordsInSilence, type Clip } from './clips.ts';
import { childPids, cpuMs, MEDIA, realModel, whisperBinDir } from './helpers.ts';

const model = realModel();
const binDir = whisperBinDir();
const text = (r: TranscribeResult) => r.words.map((w) => w.text).join(' ');

describe('transcription accuracy with Whisper base (real weights)', () => {
  let dir: string;
  let transcriber: Transcriber;
  const ffmpeg = (...args: string[]) => runToEnd('ffmpeg', { args: ['-nostdin', '-v', 'error', '-y', ...args] });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transcriber-e2e-'));
    transcriber = createTranscriber({ model, threads: 2, binDir });
    await transcriber.warmUp();
  });

  afterAll(async () => {
    await transcriber?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('jfk.wav (real voice): detects English, WER <= 5%', async () => {
    const r = await transcriber.transcribe({ audioPath: join(MEDIA, 'jfk.wav') });
    const wer = wordErrorRate(readFileSync(join(MEDIA, 'jfk.txt'), 'utf8'), text(r));
    console.log(`jfk.wav: WER ${(wer * 100).toFixed(1)}% language ${r.language} p=${r.languageProbability}: ${text(r)}`);
    expect(r.language).toBe('en');
    expect(r.languageProbability).toBeGreaterThan(0.5);
    expect(wer).toBeLessThanOrEqual(0.05);
    expect(r.words.find((w) => w.text === 'you,')).toBeDefined(); // punctuation stays on its word
  });

  it('en.wav (espeak): WER <= 10%, word onsets median <= 25 ms and p90 <= 80 ms', async () => {
    const progress: { words: string[]; finalUntil: number }[] = [];
    const wordsComing: boolean[] = [];
    const r = await transcriber.transcribe({
      audioPath: join(MEDIA, 'en.wav'),
      language: 'en',
      onWords: (p) => progress.push({ words: p.words.map((w) => `${w.text}@${w.start}`), finalUntil: p.finalUntil }),
      threads: (now) => {
        wordsComing.push(now.wordsComing);
        return undefined;
      },
    });
    // The second chunk is recognized while the first one's onsets are aligned (its request says
    // so), and the first chunk's words still come first.
    expect(wordsComing[0]).toBe(false);
    expect(wordsComing).toContain(true);
    // 33.6 s of speech is cut at a pause into two chunks, whose words arrive one chunk at a time:
    // each report holds the words before it, and no later word starts before its finalUntil.
    expect(progress.length).toBe(2);
    expect(progress[0]!.finalUntil).toBeGreaterThan(14);
    expect(progress[1]!.finalUntil).toBe(Infinity);
    expect(progress[1]!.words).toEqual(r.words.map((w) => `${w.text}@${w.start}`));
    expect(progress[1]!.words.slice(0, progress[0]!.words.length)).toEqual(progress[0]!.words);
    const later = r.words.slice(progress[0]!.words.length);
    expect(later.length).toBeGreaterThan(10);
    for (const w of later) expect(w.start).toBeGreaterThanOrEqual(progress[0]!.finalUntil);
    const wer = wordErrorRate(readFileSync(join(MEDIA, 'en.txt'), 'utf8'), text(r));
    const errors = onsetErrorsMs(parseReferenceOnsets(readFileSync(join(MEDIA, 'en.words'), 'utf8')), r.words);
    const [median, p90] = [percentile(errors, 50), percentile(errors, 90)];
    console.log(`en.wav: WER ${(wer * 100).toFixed(1)}%, onset error median ${median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms over ${errors.length} words`);
    expect(r.language).toBe('en');
    // Beam search falls back to sampling on parts of this voice. Upstream whisper-server seeds its
    // first decoder's sampler once per server, so a result depends on the requests before it
    // (WER 4.4-10.6% over 8 runs; 10.6% writes "Northwind" for "North Wind" three times). Our
    // build reseeds it per request (scripts/whisper-patches/0001-reseed-first-decoder.patch): same
    // words whatever came before: right after jfk.wav, 10.6% on upstream's build (twice), 5.3% on
    // ours, as when transcribed first.
    expect(wer).toBeLessThanOrEqual(0.1);
    expect(errors.length).toBeGreaterThan(90);
    // Measured 11 / 47 ms with the TTS-aligned starts (tts-align.ts); 44 / 137 ms from whisper's
    // DTW alone (patch 0002), 40 / 343 ms before that patch.
    expect(median).toBeLessThanOrEqual(25);
    expect(p90).toBeLessThanOrEqual(80);
  });

  it('a throw from onWords fails the transcription with that error, and the next one still works', async () => {
    // The second chunk is being recognized when the first one's words are handed over: its
    // request is stopped, and the error is the caller's, not the abort's.
    const boom = new Error('the caller gave up');
    let calls = 0;
    const failed = transcriber.transcribe({
      audioPath: join(MEDIA, 'en.wav'),
      language: 'en',
      onWords: () => {
        calls++;
        throw boom;
      },
    });
    await expect(failed).rejects.toBe(boom);
    expect(calls).toBe(1);
    const r = await transcriber.transcribe({ audioPath: join(MEDIA, 'jfk.wav'), language: 'en' });
    expect(wordErrorRate(readFileSync(join(MEDIA, 'jfk.txt'), 'utf8'), text(r))).toBeLessThanOrEqual(0.05);
  });

  it('detects German speech when no language is given', async () => {
    const wav = join(dir, 'de.wav');
    await runToEnd('espeak-ng', {
      args: [
        '-v',
        'de',
        '-s',
        '150',
        '-w',
        wav,
        'Der Nordwind und die Sonne stritten sich, wer von ihnen beiden wohl der Stärkere wäre, als ein Wanderer, der in einen warmen Mantel gehüllt war, des Weges daherkam.',
      ],
    });
    const r = await transcriber.transcribe({ audioPath: wav });
    console.log(`de (espeak): language ${r.language} p=${r.languageProbability}: ${text(r)}`);
    expect(r.language).toBe('de');
    // Base is unsure on this voice: de 0.40 from the start, so the windows vote (measured 0.42).
    expect(r.languageProbability).toBeGreaterThan(0.3);
    expect(text(r).toLowerCase()).toMatch(/ihnen beiden/);
  });

  it.each([
    ['digital silence', ['-f', 'lavfi', '-t', '10', '-i', 'anullsrc=r=16000:cl=mono']],
    ['room tone (pink noise, -50 dBFS)', ['-f', 'lavfi', '-t', '10', '-i', 'anoisesrc=r=16000:a=0.003:c=pink']],
    [
      'music (synthesized chords and plucks)',
      [
        '-f',
        'lavfi',
        '-t',
        '15',
        '-i',
        "aevalsrc='0.2*sin(2*PI*(220+110*floor(mod(t*2,4)))*t)+0.15*sin(2*PI*(330+55*floor(mod(t*3,5)))*t)+0.1*sin(2*PI*(440+220*floor(mod(t,3)))*t)*exp(-mod(t,0.5)*4)':s=44100",
        '-ac',
        '2',
      ],
    ],
  ])('%s yields zero words (whisper alone says "Thank you." / "Thanks for watching!")', async (_name, args) => {
    const file = join(dir, `${_name.split(' ')[0]}.mp3`);
    await ffmpeg(...args, file);
    expect((await transcriber.transcribe({ audioPath: file, language: 'en' })).words).toEqual([]);
    expect((await transcriber.transcribe({ audioPath: file })).words).toEqual([]);
  });

  it('keeps speech that follows a long silence, with times on the original timeline', async () => {
    const file = join(dir, 'late.wav');
    // -t before -i: it bounds the silent input (after it, it would bound the next input and the
    // endless anullsrc would fill the disk).
    await ffmpeg(
      '-f',
      'lavfi',
      '-t',
      '20',
      '-i',
      'anullsrc=r=16000:cl=mono',
      '-i',
      join(MEDIA, 'jfk.wav'),
      '-filter_complex',
      '[0][1]concat=n=2:v=0:a=1',
      '-t',
      '40',
      '-c:a',
      'pcm_s16le',
      file,
    );
    const r = await transcriber.transcribe({ audioPath: file, language: 'en' });
    expect(wordErrorRate(readFileSync(join(MEDIA, 'jfk.txt'), 'utf8'), text(r))).toBeLessThanOrEqual(0.05);
    expect(r.words[0]!.start).toBeGreaterThan(20);
    expect(r.words[0]!.start).toBeLessThan(20.8);
  });

  it('keeps a reading said twice in a row (67 s, no pause between): repeated speech is not a decoding loop', async () => {
    // bench:e2e's clip loops en.wav this way. Judged as one text, the chunk compressed 3.3x and
    // every word of it was dropped as a loop; whisper judges each 30 s window, and so do we now.
    const file = join(dir, 'twice.wav');
    await ffmpeg('-stream_loop', '1', '-i', join(MEDIA, 'en.wav'), '-c:a', 'pcm_s16le', file);
    const r = await transcriber.transcribe({ audioPath: file, language: 'en' });
    const reference = readFileSync(join(MEDIA, 'en.txt'), 'utf8');
    const wer = wordErrorRate(`${reference} ${reference}`, text(r));
    console.log(`en.wav twice: WER ${(wer * 100).toFixed(1)}% over ${r.words.length} words`);
    expect(wer).toBeLessThanOrEqual(0.1);
    expect(r.words.at(-1)!.start).toBeGreaterThan(60);
  });

  it('fails the job with transcription-failed on a truncated copy of the real model', async () => {
    const truncated = join(dir, 'ggml-base-truncated.bin');
    const fd = openSync(model, 'r');
    const head = Buffer.alloc(70_000_000);
    readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    writeFileSync(truncated, head);
    const bad = createTranscriber({ model: truncated, threads: 2, binDir });
    const err = await bad.transcribe({ audioPath: join(MEDIA, 'jfk.wav') }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'transcription-failed',
      message: expect.stringMatching(/could not load model .*ggml-base-truncated\.bin: whisper\.cpp exited \(code 3\)/),
    });
    await bad.close();
    expect(existsSync(truncated)).toBe(true);
    expect(text(await transcriber.transcribe({ audioPath: join(MEDIA, 'jfk.wav'), language: 'en' }))).toMatch(/ask not what your country/);
  });

  // Each test here transcribes up to six clips (2 minutes of audio): minutes on a shared 2-core box.
  describe('speech around pauses, beds and loops (clips made with espeak-ng and sox)', { timeout: 900_000 }, () => {
    const clips = new Map<string, Clip>();
    const results = new Map<string, TranscribeResult>();
    const clip = (name: string) => clips.get(name)!;
    const transcribe = async (name: string) => {
      if (!results.has(name)) results.set(name, await transcriber.transcribe({ audioPath: clip(name).path, language: clip(name).language }));
      return results.get(name)!;
    };

    beforeAll(async () => {
      clips.set('en.wav', await sharedEnClip(MEDIA));
      for (const spec of CLIPS) clips.set(spec.name, await makeClip(spec, dir));
    });

    // Issue 10: at most 2 points (one word of this 44-word read is 2.3 points, so: the same words).
    // Measured on our build (reseeded sampler, patch 0001): 9.1% and 9.1%, the same words (espeak's
    // default voice, and again with the en-us+m7 voice the clips use now); before speech-first it
    // was 4.7% vs 32.6%.
    it('the same read with and without three 2.5 s pauses: WER differs by at most 2 points', async () => {
      const plain = wordErrorRate(clip('en-read').text, text(await transcribe('en-read')));
      const paused = wordErrorRate(clip('en-pauses').text, text(await transcribe('en-pauses')));
      console.log(`en-read WER ${(plain * 100).toFixed(1)}%, en-pauses WER ${(paused * 100).toFixed(1)}%: ${text(await transcribe('en-pauses'))}`);
      expect(Math.abs(paused - plain)).toBeLessThanOrEqual(0.02);
      expect(paused).toBeLessThanOrEqual(0.15);
    });

    // Issue 39: the 6 s silence may cost at most 2 points too (one word of this 42-word read is 2.4 points).
    it('the same Spanish read with and without a 6 s silence: WER differs by at most 2 points', async () => {
      const plain = wordErrorRate(clip('es-read').text, text(await transcribe('es-read')));
      const paused = wordErrorRate(clip('es-pause-6s').text, text(await transcribe('es-pause-6s')));
      console.log(`es-read WER ${(plain * 100).toFixed(1)}%, es-pause-6s WER ${(paused * 100).toFixed(1)}%`);
      expect(Math.abs(paused - plain)).toBeLessThanOrEqual(0.02);
    });

    // Issue 10: none. Measured 0 on all three with DTW starts (patch 0002). Before, with token times:
    // es-pause-6s 2 ("En ese", whose token times drifted back 5.9 s into the end of the previous
    // sentence, over the joining silence), fr-noise 1.
    it.each([
      ['en-pauses', 0],
      ['es-pause-6s', 0],
      ['fr-noise', 0],
    ] as const)('%s: %i word starts inside a pause, every sentence is there', async (name, most) => {
      const r = await transcribe(name);
      const wer = wordErrorRate(clip(name).text, text(r));
      console.log(`${name}: WER ${(wer * 100).toFixed(1)}%, ${wordsInSilence(r.words, clip(name).silences)} words in pauses: ${text(r)}`);
      expect(wordsInSilence(r.words, clip(name).silences)).toBeLessThanOrEqual(most);
      // WER itself is not the point here: base reads espeak's Spanish and French poorly (es 36-43%,
      // fr over 100% before and after); en-pauses' WER is checked against en-read above.
      // Words on both sides of every pause.
      for (const s of clip(name).silences) {
        expect(r.words.some((w) => w.end <= s.start + 0.1)).toBe(true);
        expect(r.words.some((w) => w.start >= s.end - 0.1)).toBe(true);
      }
    });

    // Issue 10 asks for median <= 40 ms and p90 <= 120 ms. Measured pooled 12 / 49 ms over 238
    // words with the TTS-aligned starts (en.wav 11 / 47, en-read 10 / 45, en-pauses 10 / 45,
    // es-pause-6s 19 / 59, de-music 10 / 956 (its p90 is words matched across misrecognized ones,
    // WER 66%), fr-noise 11 / 53); from whisper's DTW alone 35 / 146 ms. Each clip is read by
    // another espeak-ng voice variant, rate and pitch (clips.ts), none of them the plain voice the
    // alignment synthesizes with. The bounds hold what was reached, with room for another CPU.
    it(`word onsets on ${CLIPS.length + 1} clips in 4 languages: median <= 25 ms, p90 <= 80 ms (issue: 40 / 120)`, async () => {
      const all: number[] = [];
      for (const name of clips.keys()) {
        const errors = onsetErrorsMs(clip(name).onsets, (await transcribe(name)).words);
        console.log(
          `${name}: onset error median ${percentile(errors, 50).toFixed(0)} ms, p90 ` + `${percentile(errors, 90).toFixed(0)} ms over ${errors.length} words`,
        );
        all.push(...errors);
      }
      console.log(`all clips: onset error median ${percentile(all, 50).toFixed(0)} ms, p90 ${percentile(all, 90).toFixed(0)} ms over ${all.length} words`);
      // Only words recognized right have a fair onset: most of en.wav's and the English reads'.
      expect(all.length).toBeGreaterThan(150);
      expect(percentile(all, 50)).toBeLessThanOrEqual(25);
      expect(percentile(all, 90)).toBeLessThanOrEqual(80);
    });

    it('no language given on the French read over noise: language with its probability, no loop', async () => {
      // Base took espeak's default French voice for Vietnamese or Burmese, even on speech only (before
      // speech-first: "my", looping, RTF 6); the fr+m3 voice the clip uses now is detected as fr 0.59.
      // The probability says how sure it is, and nothing loops.
      const r = await transcriber.transcribe({ audioPath: clip('fr-noise').path });
      console.log(`fr-noise, no language given: ${r.language} p=${r.languageProbability}: ${text(r).slice(0, 160)}`);
      expect(r.languageProbability).toBeGreaterThan(0);
      expect(r.languageProbability).toBeLessThanOrEqual(1);
      expect(loopReason(text(r))).toBeNull();
    });

    it('a forced decoding loop yields no looping captions, and the time budget stops a runaway decode (in CPU time)', async () => {
      // No VAD (every second goes to whisper) and a language forced: music as English, and the
      // French read as Thai (the loop: French detected as Thai looped for 52 s of 18).
      const music = join(dir, 'loop-music.wav');
      await ffmpeg('-f', 'lavfi', '-t', '20', '-i', MUSIC_LAVFI, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', music);
      // An operator's tight budget (the default, 10 + 5 x seconds, is a guard that a normal decode
      // never meets, so that the words do not change with the machine's load: issue 39). A fresh
      // transcriber for each case: the budget grows with the real-time factors it has measured.
      const budget = { fixedSeconds: 2, perAudioSecond: 1 };
      for (const [path, language, duration] of [
        [music, 'en', 20],
        [clip('fr-noise').path, 'th', clip('fr-noise').duration],
      ] as const) {
        const logged: string[] = [];
        const noVad = createTranscriber({ model, threads: 2, binDir, vadModel: false, budget, log: (m) => logged.push(m) });
        try {
          const others = new Set(childPids('whisper-server'));
          await noVad.warmUp();
          const server = childPids('whisper-server').find((pid) => !others.has(pid))!;
          const started = cpuMs(server) / 1000;
          const r = await noVad.transcribe({ audioPath: path, language });
          const seconds = cpuMs(server) / 1000 - started;
          console.log(
            `forced ${language}: ${seconds.toFixed(1)} CPU-s for ${duration.toFixed(1)} s of audio, ${r.words.length} words: ${text(r).slice(0, 160)}; log: ${logged.join(' | ')}`,
          );
          expect(loopReason(text(r))).toBeNull();
          // The bound: the budget, in CPU seconds per thread, for each of the two decodes a chunk
          // may have (and 0.5 s for the budget's 200 ms checks), on 2 threads. In CPU, not wall
          // time: a busy machine stretches wall time (a wall-clock bound flaked with a bench beside
          // the suite). Issue 10 bounded a loop by 1.5x the audio on 2 idle threads with such a
          // budget as the default (1 + 0.6 x seconds); on a loaded machine it changed the words of
          // normal decodes (issue 39).
          expect(seconds).toBeLessThanOrEqual(2 * 2 * (budget.fixedSeconds + budget.perAudioSecond * duration + 0.5));
        } finally {
          await noVad.close();
        }
      }
    });
  });
});
