import { describe, expect, it } from 'vitest';
import { type EditWord, voiceEnvelope, voicedRegions } from '../src/index.ts';
import { plan, seeded, w } from './helpers.ts';

// The envelope rules (evidence.ts) on synthetic speech: voiced sounds (harmonics of 140 Hz, in the
// speech band), hiss (an /s/: sines at 6-7.9 kHz) and quiet valleys, in noise at about -45 dBFS; the
// recognized word times deliberately 150 ms off, as whisper's are on real speech.
const RATE = 16_000;

type Part = { from: number; to: number; kind: 'voiced' | 'hiss' };

function speech(seconds: number, parts: readonly Part[], seed = 7): Float32Array {
  const random = seeded(seed);
  // The hiss: 20 sines of random phase between 6 and 7.9 kHz, as loud over the noise as the /s/ of
  // "corpus" in en_mfa_cold_corpus (0-1 dB over the floor in the speech band, 12 dB in the hiss band).
  const partials = Array.from({ length: 20 }, (_, k) => ({ hz: 6000 + k * 100, phase: random() * 2 * Math.PI }));
  const out = new Float32Array(Math.round(seconds * RATE));
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    let x = (random() - 0.5) * 0.02;
    for (const p of parts) {
      if (t < p.from || t >= p.to) continue;
      const fade = Math.min(1, (t - p.from) / 0.01, (p.to - t) / 0.01);
      if (p.kind === 'voiced') for (let h = 1; h <= 8; h++) x += (fade * 0.12 * Math.sin(2 * Math.PI * 140 * h * t)) / h;
      else for (const q of partials) x += fade * 0.005 * Math.sin(2 * Math.PI * q.hz * t + q.phase);
    }
    out[i] = x;
  }
  return out;
}

const evidenceOf = (samples: Float32Array) => ({ voiced: voicedRegions(samples, RATE), envelope: voiceEnvelope(samples, RATE) });
const kept = (keep: readonly { start: number; end: number }[], a: number, b: number) =>
  keep.reduce((s, r) => s + Math.max(0, Math.min(b, r.end) - Math.max(a, r.start)), 0);

describe('cut edges in the quiet (the audio envelope)', () => {
  // "Well [valley] um [valley] okay": Well 0.5-0.9, um 1.05-1.5, okay 1.65-2.1, valleys of 150 ms.
  const audio = speech(3, [
    { from: 0.5, to: 0.9, kind: 'voiced' },
    { from: 1.05, to: 1.5, kind: 'voiced' },
    { from: 1.65, to: 2.1, kind: 'voiced' },
  ]);
  // Recognized 150 ms off: "Well" ends early, "um" has no length and comes late, "okay" starts late.
  const recognized: EditWord[] = [w('Well', 0.45, 0.75), w('um,', 1.45, 1.45), w('okay', 1.8, 2.25)];

  it.each([1000, 25])('the filler cut covers the "um" and lands in the valleys on both sides, the words whole (%s fps)', (fps) => {
    const out = plan(recognized, { ...evidenceOf(audio), sourceSeconds: 3, fps, edit: { fillers: 'safe' } });
    const [cut, ...others] = out.plan.cuts;
    expect(others).toEqual([]);
    expect(cut).toMatchObject({ reason: 'filler', text: 'um,' });
    expect(cut!.start).toBeGreaterThanOrEqual(0.9);
    expect(cut!.start).toBeLessThanOrEqual(1.05);
    expect(cut!.end).toBeGreaterThanOrEqual(1.5);
    expect(cut!.end).toBeLessThanOrEqual(1.65);
    expect(kept(out.plan.keep, 0.5, 0.9)).toBeCloseTo(0.4, 6);
    expect(kept(out.plan.keep, 1.65, 2.1)).toBeCloseTo(0.45, 6);
  });

  it('without the envelope, the same recognized times leave a third of the "um" (why the agent passes it)', () => {
    const out = plan(recognized, { voiced: voicedRegions(audio, RATE), sourceSeconds: 3, edit: { fillers: 'safe' } });
    expect(kept(out.plan.keep, 1.05, 1.5)).toBeGreaterThan(0.1);
  });

  it('a kept word keeps its hiss (an /s/ the speech band does not see) when its recognized end is 250 ms early', () => {
    // "Yes [0.6 s] next": the /s/ 0.9-1.15 after the voiced "ye" 0.5-0.9.
    const yes = speech(3, [
      { from: 0.5, to: 0.9, kind: 'voiced' },
      { from: 0.9, to: 1.15, kind: 'hiss' },
      { from: 1.75, to: 2.2, kind: 'voiced' },
    ]);
    const envelope = voiceEnvelope(yes, RATE);
    const at = (t: number) => Math.floor(t / envelope.hopSeconds);
    expect(envelope.db[at(1.05)]!, 'the speech band barely hears the /s/').toBeLessThan(3);
    expect(envelope.hiss[at(1.05)]!, 'the hiss band does').toBeGreaterThan(10);
    const words = [w('Yes.', 0.5, 0.9), w('Next', 1.75, 2.2)];
    const out = plan(words, { ...evidenceOf(yes), sourceSeconds: 3, edit: { silences: 'extra-fast' } });
    expect(kept(out.plan.keep, 0.5, 1.15)).toBeCloseTo(0.65, 6);
    expect(out.plan.outputSeconds).toBeLessThan(2.2);
    const before = plan(words, { voiced: voicedRegions(yes, RATE), sourceSeconds: 3, edit: { silences: 'extra-fast' } });
    expect(kept(before.plan.keep, 0.5, 1.15), 'without the envelope the /s/ is cut').toBeLessThan(0.6);
  });

  it('a voiced blob right after a kept word\'s onset is that word\'s sound ("cor-pus" with a long closure), not a dropped "um"', () => {
    // "corpus": "cor" 0.5-0.7, closure 0.7-0.85, "pus" 0.85-1.05; recognized 0.45-0.55 (too short). "um" 1.6-2.0 dropped by whisper; "next" 2.5-2.9.
    const corpus = speech(3.5, [
      { from: 0.5, to: 0.7, kind: 'voiced' },
      { from: 0.85, to: 1.05, kind: 'voiced' },
      { from: 1.6, to: 2.0, kind: 'voiced' },
      { from: 2.5, to: 2.9, kind: 'voiced' },
    ]);
    const words = [w('corpus,', 0.45, 0.55), w('next', 2.5, 2.9)];
    const out = plan(words, { ...evidenceOf(corpus), sourceSeconds: 3.5, edit: { fillers: 'safe' } });
    expect(kept(out.plan.keep, 0.5, 1.05)).toBeCloseTo(0.55, 6);
    const blobs = out.plan.cuts.filter((c) => c.reason === 'voiced-gap');
    expect(blobs).toHaveLength(1);
    expect(kept(out.plan.keep, 1.6, 2.0)).toBeLessThan(0.02);
    const before = plan(words, { voiced: voicedRegions(corpus, RATE), sourceSeconds: 3.5, edit: { fillers: 'safe' } });
    expect(kept(before.plan.keep, 0.5, 1.05), 'without the envelope "pus" is cut as voiced-gap').toBeLessThan(0.45);
  });

  it('a repeat is cut from the quiet before it to the quiet before the word kept, whatever its recognized end', () => {
    // "I [valley] I think": I 0.5-0.7, I 0.9-1.1, think 1.15-1.5; the first "I" recognized ending past the second's start.
    const talk = speech(2, [
      { from: 0.5, to: 0.7, kind: 'voiced' },
      { from: 0.9, to: 1.1, kind: 'voiced' },
      { from: 1.15, to: 1.5, kind: 'voiced' },
    ]);
    const words = [w('I', 0.52, 0.8), w('I', 0.95, 1.1), w('think', 1.15, 1.5)];
    const out = plan(words, { ...evidenceOf(talk), sourceSeconds: 2, edit: { fillers: 'safe' } });
    expect(out.plan.cuts.filter((c) => c.reason === 'repeat')).toHaveLength(1);
    const cut = out.plan.cuts.find((c) => c.reason === 'repeat')!;
    expect(cut.start).toBeGreaterThanOrEqual(0.4);
    expect(cut.start).toBeLessThanOrEqual(0.5);
    expect(cut.end).toBeGreaterThanOrEqual(0.7);
    expect(cut.end).toBeLessThanOrEqual(0.9);
    expect(kept(out.plan.keep, 0.9, 1.5)).toBeCloseTo(0.6, 6);
  });
});

describe('a bleep covers the profane word as heard (the audio envelope)', () => {
  // "you [valley] shit [valley] there": you 0.5-0.8, shit 0.95-1.45, there 1.6-1.95.
  const audio = speech(3, [
    { from: 0.5, to: 0.8, kind: 'voiced' },
    { from: 0.95, to: 1.1, kind: 'hiss' },
    { from: 1.1, to: 1.45, kind: 'voiced' },
    { from: 1.6, to: 1.95, kind: 'voiced' },
  ]);
  // Recognized as whisper does on real speech: "shit" starts 120 ms early and ends 220 ms early.
  const recognized: EditWord[] = [w('you', 0.45, 0.75), w('shit', 0.83, 1.23), w('there', 1.5, 1.9)];

  it("the tone runs from the word's first sound to its last, and stays off its neighbours", () => {
    const out = plan(recognized, { ...evidenceOf(audio), sourceSeconds: 3, edit: null, profanity: 'bleep' });
    expect(out.plan.bleeps).toHaveLength(1);
    const [bleep] = out.plan.bleeps;
    expect(Math.abs(bleep!.start - 0.95)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(bleep!.end - 1.45)).toBeLessThanOrEqual(0.03);
    expect(bleep!.start).toBeGreaterThanOrEqual(0.8);
    expect(bleep!.end).toBeLessThanOrEqual(1.6);
    // The masked word is reported at the same times, so the export and the tone agree.
    const masked = out.sourceWords.find((x) => x.text === 's***')!;
    expect(masked).toEqual({ text: 's***', start: bleep!.start, end: bleep!.end });
  });

  it("without the envelope the bleep is whisper's span, 120 ms early and 220 ms short", () => {
    const out = plan(recognized, { sourceSeconds: 3, edit: null, profanity: 'bleep' });
    expect(out.plan.bleeps).toEqual([{ start: 0.83, end: 1.23 }]);
  });
});

describe('recognized times late by 0.1-0.2 s around a stutter and a hesitation (espeak-ng "Today we we cut, um, long")', () => {
  // The sounds as laid (80 ms between words, 0.2 s around the "um"), shifted to start at 0.5 s.
  const at = (t: number) => t - 6;
  const audio = speech(4.2, [
    { from: at(6.47), to: at(7.0), kind: 'voiced' },
    { from: at(7.08), to: at(7.46), kind: 'voiced' },
    { from: at(7.54), to: at(7.93), kind: 'voiced' },
    { from: at(8.01), to: at(8.34), kind: 'voiced' },
    { from: at(8.54), to: at(8.91), kind: 'voiced' },
    { from: at(9.11), to: at(9.66), kind: 'voiced' },
  ]);
  // whisper base + our onset alignment on that clip: onsets late, "cut," running over the "um".
  const recognized: EditWord[] = [
    w('Today,', at(6.52), at(7.22)),
    w('we,', at(7.2), at(7.76)),
    w('we', at(7.62), at(8.29)),
    w('cut,', at(7.82), at(8.72)),
    w('um,', at(8.66), at(9.13)),
    w('long', at(9.32), at(9.65)),
  ];

  it('the repeat is cut from the quiet before the first "we" to the quiet before the second, the filler from the quiet before "um" to the quiet after it', () => {
    const out = plan(recognized, { ...evidenceOf(audio), sourceSeconds: 4.2, fps: 25, edit: { fillers: 'safe' } });
    const repeat = out.plan.cuts.find((c) => c.reason === 'repeat')!;
    const filler = out.plan.cuts.find((c) => c.reason === 'filler')!;
    expect(repeat.start).toBeGreaterThanOrEqual(at(7.0) - 1e-6);
    expect(repeat.start).toBeLessThanOrEqual(at(7.08) + 1e-6);
    expect(repeat.end).toBeGreaterThanOrEqual(at(7.46) - 1e-6);
    expect(repeat.end).toBeLessThanOrEqual(at(7.54) + 1e-6);
    expect(filler.start).toBeGreaterThanOrEqual(at(8.34) - 1e-6);
    // On the 25 fps grid: at most a frame of the "um" may stay.
    expect(filler.start).toBeLessThanOrEqual(at(8.54) + 1 / 25 + 1e-6);
    expect(filler.end).toBeGreaterThanOrEqual(at(8.91) - 1e-6);
    expect(filler.end).toBeLessThanOrEqual(at(9.11) + 1e-6);
    // The words around them whole.
    for (const [a, b] of [
      [6.47, 7.0],
      [7.54, 7.93],
      [8.01, 8.34],
      [9.11, 9.66],
    ] as const) {
      expect(kept(out.plan.keep, at(a), at(b))).toBeCloseTo(b - a, 6);
    }
  });
});
