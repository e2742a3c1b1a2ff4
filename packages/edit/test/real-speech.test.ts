import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type EditWord, voiceEnvelope, voicedRegions } from '../src/index.ts';
import { readWavSamples } from '../src/wav.ts';
import { plan } from './helpers.ts';

// Real recordings with word times from a forced aligner (../shared/media/real, see its README):
// en_mfa_acoustic_corpus (a spontaneous monologue with um and a repeat) and en_mfa_cold_corpus
// (the same speaker with a cold, a noisy room at about 14 dB SNR, six um/uh).
const REAL = new URL('../../../../shared/media/real/', import.meta.url).pathname;
const FILLERS = new Set(['um', 'uh']);

async function recording(name: string) {
  const words: EditWord[] = readFileSync(`${REAL}${name}.words`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [start, end, text] = line.split('\t');
      return { text: text!, start: Number(start), end: Number(end) };
    });
  const { samples, sampleRate } = await readWavSamples(`${REAL}${name}.wav`);
  return { words, voiced: voicedRegions(samples, sampleRate), envelope: voiceEnvelope(samples, sampleRate), seconds: samples.length / sampleRate };
}

const overlap = (spans: readonly { start: number; end: number }[], a: number, b: number) =>
  spans.reduce((s, r) => s + Math.max(0, Math.min(b, r.end) - Math.max(a, r.start)), 0);

describe.each([
  // name, share of word time found voiced (at least), share of pauses found voiced (at most); measured 98.7% / 8% and 77% / 2%
  ['en_mfa_acoustic_corpus', 0.95, 0.15],
  ['en_mfa_cold_corpus', 0.7, 0.1],
] as const)('%s', (name, wordShare, pauseShare) => {
  it(`voicedRegions finds at least ${wordShare * 100}% of the word time and at most ${pauseShare * 100}% of the pauses`, async () => {
    const { words, voiced } = await recording(name);
    const wordTime = words.reduce((s, w) => s + w.end - w.start, 0);
    expect(words.reduce((s, w) => s + overlap(voiced, w.start, w.end), 0) / wordTime).toBeGreaterThanOrEqual(wordShare);
    // Pauses: gaps between aligned words, 50 ms clear of both (the aligner is good to 20-30 ms).
    const pauses = words.slice(1).flatMap((w, i) => (w.start - words[i]!.end > 0.15 ? [{ start: words[i]!.end + 0.05, end: w.start - 0.05 }] : []));
    const pauseTime = pauses.reduce((s, p) => s + p.end - p.start, 0);
    expect(pauses.reduce((s, p) => s + overlap(voiced, p.start, p.end), 0) / pauseTime).toBeLessThanOrEqual(pauseShare);
  });

  it('fast + safe: every um/uh goes (at most 40 ms of it left by frame alignment), every other word stays whole', async () => {
    const { words, voiced, seconds } = await recording(name);
    const out = plan(words, { voiced, sourceSeconds: seconds, fps: 30, edit: { silences: 'fast', fillers: 'safe' } });
    for (const f of words.filter((w) => FILLERS.has(w.text)))
      expect(overlap(out.plan.keep, f.start, f.end), `${f.text} at ${f.start}`).toBeLessThanOrEqual(0.04);
    expect(out.plan.cuts.flatMap((c) => (c.reason === 'filler' ? c.text!.split(' ') : []))).toEqual(
      words.filter((w) => FILLERS.has(w.text)).map((w) => w.text),
    );
    expect(out.plan.outputSeconds).toBeLessThan(seconds * 0.8);
  });

  it('with the um/uh missing from the words (as whisper drops them), voiced-gap cuts never take a real word', async () => {
    const { words, voiced, seconds } = await recording(name);
    const spoken = words.filter((w) => !FILLERS.has(w.text));
    const out = plan(spoken, { voiced, sourceSeconds: seconds, fps: 30, edit: { silences: 'fast', fillers: 'safe' } });
    const blobs = out.plan.cuts.filter((c) => c.reason === 'voiced-gap');
    expect(blobs.length).toBeGreaterThanOrEqual(1);
    for (const b of blobs) {
      expect(overlap(spoken, b.start, b.end), `voiced-gap ${b.start}-${b.end}`).toBeLessThanOrEqual(0.05);
      expect(
        overlap(
          words.filter((w) => FILLERS.has(w.text)),
          b.start,
          b.end,
        ),
        `voiced-gap ${b.start}-${b.end} is a filler`,
      ).toBeGreaterThan(0);
    }
  });
  // Whisper gives a filler no length, anywhere from its start to just before its end ("uh,@1.75"
  // for an uh at 1.24-1.67), and its onsets run late more than early: with the envelope, the cuts
  // must still take every um/uh and clip no other word, at every pace.
  it.each(['start', 'middle', 'end'] as const)(
    'with the envelope, fillers given no length at their %s and onsets 0 or 50 ms late: every um/uh goes (80 percent or more), no other word loses more than 20 ms',
    async (at) => {
      const { words, voiced, envelope, seconds } = await recording(name);
      const point = (f: EditWord) => (at === 'start' ? f.start : at === 'middle' ? (f.start + f.end) / 2 : f.end - 0.02);
      const fillers = words.filter((w) => FILLERS.has(w.text) && w.end - w.start >= 0.03);
      for (const late of [0, 0.05]) {
        const recognized = words
          .filter((w) => w.end - w.start >= 0.03)
          .map((w) =>
            FILLERS.has(w.text) ? { text: `${w.text},`, start: point(w), end: point(w) } : { text: w.text, start: w.start + late, end: w.end + late },
          )
          .sort((a, b) => a.start - b.start);
        for (const silences of ['off', 'natural', 'fast', 'extra-fast'] as const) {
          const out = plan(recognized, { voiced, envelope, sourceSeconds: seconds, fps: 25, edit: { silences, fillers: 'safe' } });
          const repeats = out.plan.cuts.filter((c) => c.reason === 'repeat');
          const clipped = words.filter(
            (w) =>
              !FILLERS.has(w.text) &&
              w.end - w.start - overlap(out.plan.keep, w.start, w.end) > 0.02 &&
              overlap(repeats, w.start, w.end) < 0.8 * (w.end - w.start),
          );
          expect(clipped, `${silences}, onsets ${late} s late`).toEqual([]);
          for (const f of fillers)
            expect(overlap(out.plan.keep, f.start, f.end), `${f.text} at ${f.start}, ${silences}`).toBeLessThanOrEqual(0.2 * (f.end - f.start));
        }
      }
    },
  );
});
