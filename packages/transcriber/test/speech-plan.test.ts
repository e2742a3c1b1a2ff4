/** Speech-first chunking, the time map back to the source, and the loop detector (pure). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseWavHeader } from '../src/audio.ts';
import { compressionRatio, findLoops, loopReason, loopReasonIn } from '../src/loops.ts';
import { reportedLanguage, trustedOnsets } from '../src/transcriber.ts';
import { planChunks, skipStart, snapToVoice, toSourceTime, writeChunkWav } from '../src/speech-plan.ts';
import { spread } from '../src/transcriber.ts';

const params = { pad: 0.2, mergeGap: 0.5, joinGap: 0.3, maxChunk: 10 };

describe('planChunks', () => {
  it('pads regions, merges close ones and packs spans into chunks of at most maxChunk seconds', () => {
    const chunks = planChunks(
      [
        { start: 1, end: 3 },
        { start: 3.5, end: 4 },
        { start: 10, end: 14 },
        { start: 20, end: 27 },
      ],
      30,
      params,
    );
    // 1-3 and 3.5-4 are 0.1 s apart once padded: one span. 10-14 fits in the same chunk, 20-27 does not.
    expect(chunks).toEqual([
      { ...TWO_SPANS, duration: expect.closeTo(8.1, 6) },
      { spans: [{ start: 19.8, end: 27.2, at: 0, voiced: [{ start: 20, end: 27 }] }], duration: expect.closeTo(7.4, 6) },
    ]);
  });

  it('clamps padding to the audio and keeps a span longer than maxChunk whole', () => {
    expect(planChunks([{ start: 0.05, end: 25 }], 25.1, params)).toEqual([
      { spans: [{ start: 0, end: 25.1, at: 0, voiced: [{ start: 0.05, end: 25 }] }], duration: 25.1 },
    ]);
    expect(planChunks([], 10, params)).toEqual([]);
  });

  it('cuts a span longer than maxChunk at its widest pause that leaves a piece of maxChunk/2 to maxChunk seconds', () => {
    // One span (pauses of 0.2-0.45 s merge), 0-24.1 s; the widest pause (3.0-3.45 s) is too early for a cut.
    const regions = [
      { start: 0.2, end: 3.0 },
      { start: 3.45, end: 7.0 },
      { start: 7.2, end: 8.2 },
      { start: 8.45, end: 9.1 },
      { start: 9.3, end: 17.0 },
      { start: 17.25, end: 23.9 },
    ];
    const chunks = planChunks(regions, 30, params);
    // Pieces: 0-8.325 (the 0.25 s pause at 8.2-8.45 is the widest between 5 and 10 s in), then
    // 8.325-17.125 (the 0.25 s pause at 17.0-17.25), then the rest.
    expect(chunks.map((c) => c.spans.map((s) => [s.start, Math.round(s.end * 1000) / 1000]))).toEqual([[[0, 8.325]], [[8.325, 17.125]], [[17.125, 24.1]]]);
    expect(chunks.flatMap((c) => c.spans.flatMap((s) => s.voiced))).toEqual(regions);
    // Every piece within maxChunk; a word of a later chunk starts in or after its first span.
    for (const c of chunks) expect(c.duration).toBeLessThanOrEqual(params.maxChunk);
  });
});

/** Two spans of one chunk: the second starts 3.7 s into the chunk, 9.8 s into the source. */
const TWO_SPANS = {
  spans: [
    {
      start: 0.8,
      end: 4.2,
      at: 0,
      voiced: [
        { start: 1, end: 3 },
        { start: 3.5, end: 4 },
      ],
    },
    { start: 9.8, end: 14.2, at: 3.7, voiced: [{ start: 10, end: 14 }] },
  ],
  duration: 8.1,
};

describe('toSourceTime', () => {
  const chunk = TWO_SPANS;
  it('shifts times inside a span by its offset', () => {
    expect(toSourceTime(chunk, 1, 'start')).toBeCloseTo(1.8, 6);
    expect(toSourceTime(chunk, 4, 'start')).toBeCloseTo(10.1, 6);
  });
  it('moves a start inside the joining silence to the next span, an end to the previous one', () => {
    expect(toSourceTime(chunk, 3.5, 'start')).toBe(9.8);
    expect(toSourceTime(chunk, 3.5, 'end')).toBe(4.2);
    expect(toSourceTime(chunk, 9, 'end')).toBe(14.2);
  });
});

describe('snapToVoice', () => {
  const chunk = {
    spans: [
      {
        start: 0.8,
        end: 4.2,
        at: 0,
        voiced: [
          { start: 1, end: 3 },
          { start: 3.5, end: 4 },
        ],
      },
    ],
    duration: 3.4,
  };
  it('moves a start where the VAD hears no voice to where the voice resumes', () => {
    expect(snapToVoice(chunk, 2)).toBe(2); // voiced
    expect(snapToVoice(chunk, 0.85)).toBe(1); // in the padding before
    expect(snapToVoice(chunk, 3.2)).toBe(3.5); // in a short pause merged into the span
    expect(snapToVoice(chunk, 4.1)).toBeCloseTo(3.95, 6); // after the last voice
  });
});

describe('writeChunkWav', () => {
  it('cuts the spans out of the source and joins them with silence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'speech-plan-'));
    try {
      // 1 s source whose sample i has value i % 1000 + 1.
      const pcm = Buffer.alloc(32_000);
      for (let i = 0; i < 16_000; i++) pcm.writeInt16LE((i % 1000) + 1, i * 2);
      const header = Buffer.alloc(44);
      header.write('RIFF', 0, 'ascii');
      header.writeUInt32LE(36 + pcm.length, 4);
      header.write('WAVEfmt ', 8, 'ascii');
      header.writeUInt32LE(16, 16);
      header.writeUInt16LE(1, 20);
      header.writeUInt16LE(1, 22);
      header.writeUInt32LE(16_000, 24);
      header.writeUInt32LE(32_000, 28);
      header.writeUInt16LE(2, 32);
      header.writeUInt16LE(16, 34);
      header.write('data', 36, 'ascii');
      header.writeUInt32LE(pcm.length, 40);
      writeFileSync(join(dir, 'src.wav'), Buffer.concat([header, pcm]));
      await writeChunkWav(
        join(dir, 'src.wav'),
        {
          spans: [
            { start: 0.1, end: 0.2, at: 0, voiced: [] },
            { start: 0.5, end: 0.6, at: 0.15, voiced: [] },
          ],
          duration: 0.25,
        },
        join(dir, 'out.wav'),
      );
      const out = readFileSync(join(dir, 'out.wav'));
      const info = parseWavHeader(out)!;
      expect(info).toMatchObject({ sampleRate: 16_000, channels: 1, bitsPerSample: 16, dataBytes: 4000 * 2 });
      const sample = (i: number) => out.readInt16LE(info.dataOffset + i * 2);
      expect(sample(0)).toBe((1600 % 1000) + 1); // source sample 1600 (0.1 s)
      expect(sample(1599)).toBe((3199 % 1000) + 1);
      expect(sample(1600)).toBe(0); // joining silence
      expect(sample(2400)).toBe((8000 % 1000) + 1); // source 0.5 s at chunk 0.15 s
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loopReason', () => {
  it('flags repeated words, phrases, syllables and over-compressible text', () => {
    expect(loopReason('ฟรงฮะฟรงฮะฟรงฮะฟรงฮะฟรงฮะ')).toMatch(/ฟรงฮะ" repeated 5 times/);
    expect(loopReason('and then the the the the end')).toMatch(/"the" repeated 4 times/);
    expect(loopReason('I said thank you so much. Thank you so much. Thank you so much. Thank you so much.')).toMatch(/repeated|compresses/);
    expect(compressionRatio('la la la la la la la la la la la la la la la la la la la la la la la la')).toBeGreaterThan(2.4);
  });
  it('lets ordinary speech through', () => {
    expect(loopReason('The North Wind and the Sun were disputing which was the stronger, when a traveler came along wrapped in a warm cloak.')).toBeNull();
    expect(loopReason('Der Nordwind und die Sonne stritten sich, wer von ihnen beiden wohl der Stärkere wäre.')).toBeNull();
    expect(loopReason('no, no, no.')).toBeNull();
    expect(loopReason('')).toBeNull();
  });
});

describe('loopReasonIn', () => {
  const READING =
    'The North Wind and the Sun were disputing which was the stronger, when a traveler came along wrapped in a warm cloak. ' +
    'They agreed that the one who first succeeded in making the traveler take his cloak off should be considered stronger than the other. ' +
    'Then the North Wind blew as hard as he could, but the more he blew the more closely did the traveler fold his cloak around him; ' +
    'and at last the North Wind gave up the attempt. Then the Sun shone out warmly, and immediately the traveler took off his cloak.';
  const reading = READING.split(' ');
  /** `seconds` of the reading (a word every 0.3 s, as espeak reads it), looped from its start when it runs out. */
  const looped = (seconds: number) => Array.from({ length: Math.round(seconds / 0.3) }, (_, i) => ({ text: reading[i % reading.length]!, start: i * 0.3 }));

  it("keeps speech that repeats a passage longer than whisper's 30 s window", () => {
    // The reading is 28.5 s long: 60 s of it loops 2.1 times. As one text it compresses like a loop.
    const words = looped(60);
    expect(compressionRatio(words.map((w) => w.text).join(' '))).toBeGreaterThan(2.4);
    expect(loopReason(words.map((w) => w.text).join(' '))).not.toBeNull();
    expect(loopReasonIn(words)).toBeNull();
  });
  it('still finds a loop inside a long chunk, wherever it starts', () => {
    for (const at of [0, 10, 22, 40]) {
      // 60 s of the reading, with 10 s of it (from `at`) replaced by a "Thank you so much." loop.
      const thanks = Array.from({ length: 25 }, (_, i) => ({ text: ['Thank', 'you', 'so', 'much.'][i % 4]!, start: at + i * 0.4 }));
      const words = [...looped(60).filter((w) => w.start < at || w.start >= at + 10), ...thanks].sort((a, b) => a.start - b.start);
      expect(loopReasonIn(words)).toMatch(/repeated|compresses/);
    }
    const thai = [{ text: 'ฟรงฮะฟรงฮะฟรงฮะฟรงฮะฟรงฮะ', start: 31 }];
    expect(loopReasonIn([...looped(20), ...thai])).toMatch(/repeated 5 times/);
  });
  it('judges a chunk shorter than a window as one text, like loopReason', () => {
    const words = looped(20);
    expect(loopReasonIn(words)).toBe(loopReason(words.map((w) => w.text).join(' ')));
    expect(loopReasonIn([])).toBeNull();
  });
});

describe('spread', () => {
  it('picks voting windows over the rest of the file', () => {
    expect(spread(1, 3)).toEqual([]);
    expect(spread(2, 3)).toEqual([1]);
    expect(spread(10, 3)).toEqual([3, 6, 9]);
  });
});

describe('skipStart', () => {
  it('drops the first seconds of a chunk, spans shifted accordingly', () => {
    const chunk = TWO_SPANS;
    expect(skipStart(chunk, 1)).toMatchObject({
      spans: [
        { start: 1.8, end: 4.2, at: 0 },
        { start: 9.8, end: 14.2, at: expect.closeTo(2.7, 6) },
      ],
      duration: expect.closeTo(7.1, 6),
    });
    expect(skipStart(chunk, 3.5).spans).toMatchObject([{ start: 9.8, end: 14.2, at: expect.closeTo(0.2, 6) }]);
  });
});

describe('findLoops', () => {
  /** Words a `gap` seconds apart from `at`. */
  const said = (text: string, at = 0, gap = 0.35) => text.split(' ').map((t, i) => ({ text: t, start: at + i * gap }));

  it('keeps a word a person really says four times (en_mfa_acoustic_corpus: "words words words words")', () => {
    const words = said("we're just saying some words and here's some more words words words words um and that should be all thanks");
    expect(loopReasonIn(words)).toMatch(/"words" repeated 4 times/); // a sign, worth a second decode...
    expect(findLoops(words)).toEqual([]); // ...but nothing is dropped: each word has its own time
    expect(findLoops(said('no no no no, I said no'))).toEqual([]);
  });

  it('drops the repeats of a loop that runs to the end of the chunk, keeping its first saying', () => {
    const words = said('and so the results were better thank you so much thank you so much thank you so much thank you so much');
    const loops = findLoops(words);
    expect(loops).toHaveLength(1);
    expect(loops[0]!.reason).toMatch(/"thank you so much" repeated 4 times, up to the end of the chunk/);
    const kept = words.filter((_, i) => !loops[0]!.drop.includes(i)).map((w) => w.text);
    expect(kept.join(' ')).toBe('and so the results were better thank you so much');
  });

  it('drops repeats packed faster than speech, or repeated 8 times, wherever they are', () => {
    const packed = [...said('the the the the', 0, 0.02), ...said('end of the story here', 1)];
    expect(findLoops(packed).map((l) => l.drop)).toEqual([[1, 2, 3]]);
    expect(findLoops(packed)[0]!.reason).toMatch(/20 ms a word/);
    const eight = said('la la la la la la la la and then it went on');
    expect(findLoops(eight)[0]!.drop).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('drops a word that loops inside itself, not laughter', () => {
    expect(findLoops(said('ฟรงฮะฟรงฮะฟรงฮะฟรงฮะฟรงฮะ ok'))).toEqual([{ drop: [0], reason: expect.stringMatching(/"ฟรงฮะ" repeated 5 times in a word/) }]);
    expect(findLoops(said('hahahaha that was funny'))).toEqual([]);
  });

  it('drops the window of text that compresses like a loop when no run is to blame', () => {
    // Alternating phrases: no run repeats back to back, yet whisper's compression threshold trips.
    const text = Array.from({ length: 6 }, (_, i) =>
      i % 2 ? 'we will see you on the other side of the river' : 'we will meet you on the other side of the river',
    ).join(' ');
    const words = said(text, 0, 0.3);
    const loops = findLoops(words);
    expect(loops).toHaveLength(1);
    expect(loops[0]!.reason).toMatch(/compresses/);
    expect(loops[0]!.drop).toHaveLength(words.length);
  });
});

describe('trustedOnsets', () => {
  const w = (start: number) => ({ text: 'word', start, end: start + 0.2, confidence: 1 });
  it('takes the TTS-aligned starts where they agree with whisper, else whisper corrected for its early bias', () => {
    const whisper = [w(1), w(1.5), w(2), w(2.5)];
    const agreeing = [w(1.03), w(1.46), w(2.05), w(2.52)];
    expect(trustedOnsets(whisper, agreeing)).toEqual([1.03, 1.46, 2.05, 2.52]);
    // Scattered (spontaneous speech): runs of words moved by 0.2-0.3 s, so none of them is taken.
    const scattered = [w(1.25), w(1.2), w(2.3), w(2.52)];
    expect(trustedOnsets(whisper, scattered).map((s) => Math.round(s * 1000))).toEqual([1050, 1550, 2050, 2550]);
    // Left as they were (no espeak-ng voice for the language): whisper's, corrected.
    expect(trustedOnsets(whisper, whisper).map((s) => Math.round(s * 1000))).toEqual([1050, 1550, 2050, 2550]);
  });
  it('judges each group of words on its own', () => {
    // Groups are 30 words or 15 s: the first 30 agree, the next 10 do not.
    const whisper = Array.from({ length: 40 }, (_, i) => w(i * 0.4));
    const tts = whisper.map((x, i) => w(x.start + (i < 30 ? 0.02 : 0.25)));
    const starts = trustedOnsets(whisper, tts);
    expect(starts.slice(0, 30).map((s, i) => Math.round((s - whisper[i]!.start) * 1000))).toEqual(Array(30).fill(20));
    expect(starts.slice(30).map((s, i) => Math.round((s - whisper[i + 30]!.start) * 1000))).toEqual(Array(10).fill(50));
  });
});

describe('reportedLanguage', () => {
  it('reports a detected language by its 2-letter code, Cantonese as Chinese, none for a language without one', () => {
    expect(reportedLanguage('english')).toBe('en');
    expect(reportedLanguage('ja')).toBe('ja');
    expect(reportedLanguage('cantonese')).toBe('zh');
    expect(reportedLanguage('yue')).toBe('zh');
    expect(reportedLanguage('hawaiian')).toBeUndefined();
    expect(reportedLanguage('klingon')).toBeUndefined();
  });
});
