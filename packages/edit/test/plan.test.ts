import { EDIT_MAX_RANGES, toOutputTime } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { EditFailure, planEdit } from '../src/index.ts';
import { outputGap, plan, seeded, w, words } from './helpers.ts';

describe('no edit', () => {
  it('edit null keeps the whole source and every word where it was', () => {
    const ws = words('Hello@1-1.5 world@2.6-3');
    const out = plan(ws, { edit: null });
    expect(out.plan).toEqual({ sourceSeconds: 10, outputSeconds: 10, keep: [{ start: 0, end: 10 }], cuts: [], zooms: [], bleeps: [] });
    expect(out.words).toEqual(ws);
  });

  it('no edit never fails and moves no word, even one of no length or past the end of the source', () => {
    const odd = [w('Hello', 1, 1), w('late', 10.2, 10.6)];
    expect(planEdit({ words: odd, sourceSeconds: 10, fps: 25, language: 'en', edit: null, profanity: 'mask', profanityWords: [] }).words).toEqual(odd);
  });

  it('a word of no length is kept at its point by a cut', () => {
    const out = plan([w('Hello', 1, 1.5), w('tick', 3, 3)], { edit: { silences: 'fast' } });
    expect(out.words.map((x) => x.text)).toEqual(['Hello', 'tick']);
    expect(out.words[1]!.start).toBeCloseTo(0.075 + 0.5 + 0.15, 6);
  });

  it('an edit with everything off is no edit', () => {
    const out = plan(words('Hello@1-1.5 world@4.6-5'), { edit: {} });
    expect(out.plan.keep).toEqual([{ start: 0, end: 10 }]);
    expect(out.plan.cuts).toEqual([]);
  });

  it('a job without words and silences on keeps the whole source (nothing to decide from)', () => {
    const out = plan([], { edit: { silences: 'fast', fillers: 'safe' } });
    expect(out.plan.keep).toEqual([{ start: 0, end: 10 }]);
    expect(out.plan.cuts).toEqual([]);
  });
});

describe('silences', () => {
  it('natural: a 1.1 s pause becomes 0.3 s (0.15 after, 0.15 before), a 0.7 s pause stays; lead-in and tail keep 0.15 s', () => {
    const out = plan(words('Hello@1-1.5 big@2.6-3 world@3.7-4'), { edit: { silences: 'natural' } });
    expect(out.plan.keep).toEqual([
      { start: 0.85, end: 1.65 },
      { start: 2.45, end: 4.15 },
    ]);
    expect(out.plan.cuts).toEqual([
      { start: 0, end: 0.85, reason: 'silence', text: null },
      { start: 1.65, end: 2.45, reason: 'silence', text: null },
      { start: 4.15, end: 10, reason: 'silence', text: null },
    ]);
    expect(out.plan.outputSeconds).toBe(2.5);
    expect(outputGap(out, 'Hello', 'big')).toBe(0.3);
    expect(outputGap(out, 'big', 'world')).toBe(0.7);
    expect(out.words[0]!.start).toBe(0.15);
  });

  it.each([
    ['natural', 0.85, 0.3, 0.75],
    ['fast', 0.45, 0.15, 0.35],
    ['extra-fast', 0.25, 0.08, 0.15],
    ['off', 0.85, 0.85, 0.75],
  ] as const)('%s: a %s s pause becomes %s s, one just under the threshold (%s s) stays', (silences, over, kept, under) => {
    const b = 1.5 + over;
    const c = b + 0.3 + under;
    const out = plan([w('A', 1, 1.5), w('B', b, b + 0.3), w('C', c, c + 0.3)], { edit: { silences } });
    expect(outputGap(out, 'A', 'B')).toBeCloseTo(kept, 6);
    expect(outputGap(out, 'B', 'C')).toBeCloseTo(under, 6);
  });

  it('a word grows into the voiced region overlapping its edges (recognized times are off), by at most 0.25 s', () => {
    const grown = plan([w('Hello', 1, 1.5)], { edit: { silences: 'fast' }, voiced: [{ start: 0.9, end: 1.6 }] });
    expect(grown.plan.keep).toEqual([{ start: 0.825, end: 1.675 }]);
    const capped = plan([w('Hello', 1, 1.5)], { edit: { silences: 'fast' }, voiced: [{ start: 0.2, end: 1.55 }] });
    expect(capped.plan.keep).toEqual([{ start: 0.675, end: 1.625 }]);
    const apart = plan([w('Hello', 1, 1.5)], { edit: { silences: 'fast' }, voiced: [{ start: 1.6, end: 2 }] });
    expect(apart.plan.keep).toEqual([{ start: 0.925, end: 1.575 }]);
  });
});

describe('fillers', () => {
  it('safe cuts "um" with the silence after it down to 0.08 s when silences are off: no hole', () => {
    const out = plan(words('So@1-1.3 um@1.5-1.8 I@2.3-2.4 think@2.45-2.8'), { edit: { fillers: 'safe' } });
    expect(out.plan.cuts).toEqual([{ start: 1.5, end: 2.26, reason: 'filler', text: 'um' }]);
    expect(out.words.map((x) => x.text)).toEqual(['So', 'I', 'think']);
    expect(outputGap(out, 'So', 'I')).toBe(0.24);
    const tight = plan(words('So@1-1.3 um@1.3-1.6 I@2.3-2.4'), { edit: { fillers: 'safe' } });
    expect(outputGap(tight, 'So', 'I')).toBe(0.08);
  });

  it('with a pace, the silence after a filler goes down to the pace: the cut is split into filler and silence', () => {
    const out = plan(words('So@1-1.3 um,@1.35-1.6 I@2.4-2.5 think@2.55-2.8'), { edit: { silences: 'fast', fillers: 'safe' } });
    expect(out.plan.cuts.slice(1, 3)).toEqual([
      { start: 1.35, end: 1.6, reason: 'filler', text: 'um,' },
      { start: 1.6, end: 2.3, reason: 'silence', text: null },
    ]);
    expect(outputGap(out, 'So', 'I')).toBe(0.15);
  });

  it('a filler in the lead-in or the tail: silences off cut only what the rule says, a pace cuts the lead-in and the tail', () => {
    const lead = words('Um@0.5-0.8 so@1.5-1.8');
    expect(plan(lead, { edit: { fillers: 'safe' } }).plan.cuts).toEqual([{ start: 0.5, end: 1.46, reason: 'filler', text: 'Um' }]);
    expect(plan(lead, { edit: { fillers: 'safe', silences: 'fast' } }).plan.cuts.slice(0, 3)).toEqual([
      { start: 0, end: 0.5, reason: 'silence', text: null },
      { start: 0.5, end: 0.8, reason: 'filler', text: 'Um' },
      { start: 0.8, end: 1.425, reason: 'silence', text: null },
    ]);
    const tail = words('so@1-1.3 um@1.5-1.8');
    expect(plan(tail, { edit: { fillers: 'safe' } }).plan.cuts).toEqual([{ start: 1.5, end: 1.8, reason: 'filler', text: 'um' }]);
    expect(plan(tail, { edit: { fillers: 'safe', silences: 'fast' } }).plan.cuts.slice(1)).toEqual([
      { start: 1.5, end: 1.8, reason: 'filler', text: 'um' },
      { start: 1.8, end: 10, reason: 'silence', text: null },
    ]);
  });

  it('matches whole words, any case, punctuation ignored: "Um," "UH." "Hmm?" go, "umbrella" stays', () => {
    const out = plan(words('Um,@1-1.2 take@1.3-1.5 UH.@1.6-1.8 the@1.9-2 umbrella@2.1-2.6 Hmm?@2.7-2.9 yes@3-3.2'), { edit: { fillers: 'safe' } });
    expect(out.words.map((x) => x.text)).toEqual(['take', 'the', 'umbrella', 'yes']);
    expect(out.plan.cuts.map((c) => c.text)).toEqual(['Um,', 'UH.', 'Hmm?']);
  });

  it('adjacent fillers make one cut', () => {
    const out = plan(words('So@1-1.2 um@1.3-1.5 uh@1.5-1.7 yes@1.8-2'), { edit: { fillers: 'safe' } });
    expect(out.plan.cuts).toEqual([{ start: 1.3, end: 1.76, reason: 'filler', text: 'um uh' }]);
  });

  it('the lexicon is per language: German cuts "Äh," and keeps the preposition "um"; Portuguese keeps "é" (is); French cuts "euh"', () => {
    const de = plan(words('Wir@1-1.2 treffen@1.3-1.6 uns@1.7-1.9 um@2-2.2 acht.@2.3-2.6 Äh,@3-3.3 ja@3.5-3.7'), {
      language: 'de',
      edit: { fillers: 'safe' },
    });
    expect(de.plan.cuts.map((c) => c.text)).toEqual(['Äh,']);
    const pt = plan(words('Isso@1-1.3 é@1.4-1.5 bom@1.6-1.9'), { language: 'pt', edit: { fillers: 'safe' } });
    expect(pt.plan.cuts).toEqual([]);
    const fr = plan(words('Alors@1-1.3 euh@1.4-1.7 voilà@1.8-2.1'), { language: 'fr', edit: { fillers: 'safe' } });
    expect(fr.plan.cuts.map((c) => c.text)).toEqual(['euh']);
  });

  it('aggressive: phrases only as whole consecutive words ("I mean" goes, "I meant" stays), in the language ("o sea" in Spanish)', () => {
    const en = plan(words('I@1-1.1 mean,@1.2-1.4 it@1.5-1.6 works.@1.7-2 I@2.5-2.6 meant@2.7-2.9 it@3-3.1'), { edit: { fillers: 'aggressive' } });
    expect(en.plan.cuts.map((c) => c.text)).toEqual(['I mean,']);
    const es = plan(words('Es@1-1.1 o@1.2-1.25 sea@1.3-1.5 bueno@1.6-1.9 y@2-2.1 pues@2.2-2.4 nada@2.5-2.8'), {
      language: 'es',
      edit: { fillers: 'aggressive' },
    });
    expect(es.words.map((x) => x.text)).toEqual(['Es', 'y', 'nada']);
  });

  it('aggressive also cuts discourse fillers ("like", "you know"); safe keeps them', () => {
    const ws = words('I@1-1.1 like@1.2-1.4 you@1.5-1.6 know@1.65-1.8 pizza@2-2.5');
    expect(plan(ws, { edit: { fillers: 'safe' } }).plan.cuts).toEqual([]);
    const out = plan(ws, { edit: { fillers: 'aggressive' } });
    expect(out.plan.cuts).toEqual([{ start: 1.2, end: 1.96, reason: 'filler', text: 'like you know' }]);
    expect(out.words.map((x) => x.text)).toEqual(['I', 'pizza']);
  });

  it('every word a filler: edit-left-nothing', () => {
    expect(() => plan(words('um@1-1.2 uh@1.5-1.7'), { edit: { fillers: 'safe' } })).toThrow(expect.objectContaining({ code: 'edit-left-nothing' }));
  });
});

describe('repeats', () => {
  it('"I I think" cuts the first "I"', () => {
    const out = plan(words('I@1-1.1 I@1.2-1.3 think@1.35-1.6'), { edit: { fillers: 'safe' } });
    expect(out.plan.cuts).toEqual([{ start: 1, end: 1.16, reason: 'repeat', text: 'I' }]);
    expect(out.words.map((x) => x.text)).toEqual(['I', 'think']);
  });

  it('"I think I think so" cuts the first pair; "I I I" the first two; a repeat around a cut "um" counts', () => {
    const pair = plan(words('I@1-1.1 think@1.15-1.4 I@1.6-1.7 think@1.75-2 so@2.1-2.3'), { edit: { fillers: 'safe' } });
    expect(pair.plan.cuts.map((c) => [c.reason, c.text])).toEqual([['repeat', 'I think']]);
    expect(pair.words.map((x) => x.text)).toEqual(['I', 'think', 'so']);
    const triple = plan(words('I@1-1.1 I@1.2-1.3 I@1.4-1.5 think@1.6-1.9'), { edit: { fillers: 'safe' } });
    expect(triple.words.map((x) => x.text)).toEqual(['I', 'think']);
    const around = plan(words('So@0.5-0.8 I@1-1.1 um@1.2-1.4 I@1.5-1.6 think@1.7-1.9'), { edit: { fillers: 'safe' } });
    expect(around.words.map((x) => x.text)).toEqual(['So', 'I', 'think']);
    expect(around.plan.cuts.map((c) => [c.reason, c.text])).toEqual([
      ['repeat', 'I'],
      ['filler', 'um'],
    ]);
  });

  it('not a repeat: across a sentence end, grammatical doubles, more than 1 s apart, fillers off', () => {
    for (const spec of ['No.@1-1.2 No@1.4-1.6 way@1.7-2', 'that@1-1.2 that@1.3-1.5 works@1.6-2', 'I@1-1.1 I@2.2-2.3 think@2.4-2.6']) {
      expect(plan(words(spec), { edit: { fillers: 'safe' } }).plan.cuts, spec).toEqual([]);
    }
    expect(plan(words('I@1-1.1 I@1.2-1.3'), { edit: { silences: 'fast' } }).words).toHaveLength(2);
  });
});

describe('voiced gaps (a filler whisper dropped)', () => {
  const ws = words('A@1-1.3 B@2.5-2.8');
  const voicedAt = (blob: { start: number; end: number }) => [{ start: 1, end: 1.3 }, blob, { start: 2.5, end: 2.8 }];

  it('a 0.3 s voiced blob between two words, clear of both, is cut as voiced-gap', () => {
    const out = plan(ws, { edit: { fillers: 'safe' }, voiced: voicedAt({ start: 1.7, end: 2 }) });
    expect(out.plan.cuts).toEqual([{ start: 1.7, end: 2.46, reason: 'voiced-gap', text: null }]);
  });

  it.each([
    ['too short (0.1 s)', { start: 1.7, end: 1.8 }],
    ['too long (0.9 s)', { start: 1.4, end: 2.3 }],
    ['touching the word before', { start: 1.32, end: 1.7 }],
  ])('kept: %s', (_, blob) => {
    expect(plan(ws, { edit: { fillers: 'safe' }, voiced: voicedAt(blob) }).plan.cuts).toEqual([]);
  });

  it('fillers off never cuts a blob', () => {
    const out = plan(ws, { edit: { silences: 'natural' }, voiced: voicedAt({ start: 1.7, end: 2 }) });
    expect(out.plan.cuts.map((c) => c.reason)).toEqual(['silence', 'silence', 'silence']);
    expect(out.plan.cuts[1]).toEqual({ start: 1.45, end: 2.35, reason: 'silence', text: null });
  });
});

describe("the job's own keep-ranges", () => {
  const ws = words('A@0.6-0.9 B@2.2-2.5 C@3.2-3.5');

  it('are frame-aligned and used as given; their complement is cut with reason client and the words it removed', () => {
    const out = plan(ws, {
      fps: 25,
      edit: {
        keep: [
          { start: 0.5, end: 2 },
          { start: 3, end: 4 },
        ],
      },
    });
    expect(out.plan.keep).toEqual([
      { start: 0.48, end: 2 },
      { start: 3, end: 4 },
    ]);
    expect(out.plan.cuts).toEqual([
      { start: 0, end: 0.48, reason: 'client', text: null },
      { start: 2, end: 3, reason: 'client', text: 'B' },
      { start: 4, end: 10, reason: 'client', text: null },
    ]);
    expect(out.plan.outputSeconds).toBe(2.52);
    expect(out.words).toEqual([w('A', 0.12, 0.42), w('C', 1.72, 2.02)]);
  });

  it("the plan's own keep-ranges sent back (GET .../edit's, ms-rounded frame boundaries) come out the same, at any frame rate", () => {
    const random = seeded(3);
    for (const fps of [25, 30000 / 1001, 24, 60, 24000 / 1001]) {
      const { ws, voiced, sourceSeconds } = randomTalk(random);
      const first = plan(ws, { fps, sourceSeconds, voiced, edit: { silences: 'fast', fillers: 'safe' } });
      const again = plan(ws, { fps, sourceSeconds, edit: { keep: first.plan.keep } });
      expect(again.plan.keep, `${fps} fps`).toEqual(first.plan.keep);
      expect(again.plan.outputSeconds).toBe(first.plan.outputSeconds);
    }
  });

  it('a range ending past the source by more than a frame fails with edit-out-of-range; within a frame it is clamped', () => {
    const late = () =>
      planEdit({
        words: ws,
        sourceSeconds: 10,
        fps: 25,
        language: 'en',
        edit: { silences: 'off', fillers: 'off', zoom: 'off', keep: [{ start: 1, end: 10.05 }] },
        profanity: 'off',
        profanityWords: [],
      });
    expect(late).toThrow(EditFailure);
    expect(late).toThrow(expect.objectContaining({ code: 'edit-out-of-range' }));
    expect(plan(ws, { fps: 25, edit: { keep: [{ start: 1, end: 10.03 }] } }).plan.keep).toEqual([{ start: 1, end: 10 }]);
  });

  it('ranges that keep no word fail with edit-left-nothing', () => {
    expect(() => plan(ws, { edit: { keep: [{ start: 5, end: 6 }] } })).toThrow(expect.objectContaining({ code: 'edit-left-nothing', name: 'EditFailure' }));
  });
});

describe('frame alignment', () => {
  it('at 25 fps: starts floored, ends ceiled to k/25', () => {
    const out = plan([w('Hello', 1, 1.5)], { fps: 25, edit: { silences: 'fast' } });
    expect(out.plan.keep).toEqual([{ start: 0.92, end: 1.6 }]);
  });

  it('an edge meeting a cut filler rounds inwards when the padding allows: no frame of the "um" comes back; a word still wins', () => {
    const padded = plan(words('cut@1-1.3 um@1.5-1.8 the@2-2.2'), { fps: 25, edit: { silences: 'fast', fillers: 'safe' } });
    expect(padded.plan.keep.slice(0, 2)).toEqual([
      { start: 0.92, end: 1.48 },
      { start: 1.96, end: 2.28 },
    ]);
    const tight = plan(words('cut@1-1.3 um@1.3-1.6 the@2-2.2'), { fps: 25, edit: { silences: 'fast', fillers: 'safe' } });
    expect(tight.plan.keep[0]!.end).toBe(1.32);
  });

  it('at 30000/1001 fps: the frame boundaries 27/fps and 48/fps, rounded outwards to the millisecond', () => {
    const out = plan([w('Hello', 1, 1.5)], { fps: 30000 / 1001, edit: { silences: 'fast' } });
    expect(out.plan.keep).toEqual([{ start: 0.9, end: 1.602 }]);
  });
});

const VOCABULARY = ['so', 'um', 'uh', 'I', 'think', 'like', 'you', 'know', 'the', 'render', 'farm', 'is', 'fast.', 'really', 'NEVER', 'wow!'];

/** A random talk: words of 0.05-0.6 s with pauses of 0-1.5 s (some overlapping), voiced regions around them with jitter, and blobs. */
function randomTalk(random: () => number) {
  const ws = [];
  const voiced = [];
  let t = random() * 2;
  for (let i = 0; i < 60; i++) {
    const text = VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
    const length = 0.05 + random() * 0.55;
    ws.push(w(text, t, t + length));
    if (random() < 0.7) voiced.push({ start: Math.max(0, t - random() * 0.2), end: t + length + random() * 0.2 });
    if (random() < 0.15) voiced.push({ start: t + length + 0.2, end: t + length + 0.2 + random() * 0.8 });
    t += length + (random() < 0.1 ? -length / 3 : random() * 1.5);
  }
  voiced.sort((a, b) => a.start - b.start);
  return { ws, voiced, sourceSeconds: t + 1 + random() * 2 };
}

describe('property: kept words are never clipped (seeded random talks)', () => {
  const paces = ['off', 'natural', 'fast', 'extra-fast'] as const;
  const fillerModes = ['off', 'safe', 'aggressive'] as const;
  const frameRates = [25, 30000 / 1001, 24, 60];

  it('every kept word lies inside a keep-range, at its wordOnOutput time, for 240 plans', () => {
    const random = seeded(42);
    let plans = 0;
    for (let round = 0; round < 20; round++) {
      const { ws, voiced, sourceSeconds } = randomTalk(random);
      const fps = frameRates[round % frameRates.length]!;
      for (const silences of paces) {
        for (const fillers of fillerModes) {
          const out = plan(ws, { fps, sourceSeconds, voiced, edit: { silences, fillers } });
          // Every boundary is a frame boundary, to the millisecond (the source's end excepted).
          const offGrid = out.plan.keep
            .flatMap((r) => [r.start, r.end])
            .filter((t) => t < out.plan.sourceSeconds && Math.abs(t * fps - Math.round(t * fps)) > 0.001 * fps + 1e-6);
          expect(offGrid).toEqual([]);
          expect(out.words.at(-1)!.end).toBeLessThanOrEqual(out.plan.outputSeconds + 1e-9);
          plans++;
        }
      }
    }
    expect(plans).toBe(240);
  });

  it('toOutputTime agrees with the output words: a kept word starts where its source start maps', () => {
    const random = seeded(7);
    const { ws, voiced, sourceSeconds } = randomTalk(random);
    const out = plan(ws, { fps: 25, sourceSeconds, voiced, edit: { silences: 'fast', fillers: 'safe' } });
    const kept = ws.filter((x) => out.words.some((o) => Math.abs(o.start - (toOutputTime(out.plan.keep, x.start) ?? -1)) < 0.001));
    expect(kept.length).toBe(out.words.length);
    for (let i = 1; i < kept.length; i++)
      expect(toOutputTime(out.plan.keep, kept[i]!.start)!).toBeGreaterThanOrEqual(toOutputTime(out.plan.keep, kept[i - 1]!.start)!);
  });
});

it(`a long talk with a pause every second stays within ${EDIT_MAX_RANGES} keep-ranges (the shortest cuts are given up)`, () => {
  const ws = Array.from({ length: 2500 }, (_, i) => w(`word${i}`, 1 + i * 1.3 + (i % 7) * 0.01, 1.3 + i * 1.3));
  const out = plan(ws, { sourceSeconds: 3300, fps: 25, edit: { silences: 'fast' } });
  expect(out.plan.keep.length).toBe(EDIT_MAX_RANGES);
  expect(out.words).toHaveLength(2500);
});
