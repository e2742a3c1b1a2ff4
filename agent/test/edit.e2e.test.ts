import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBuiltinTemplate, type Rect } from '@captionfarm/captions';
import {
  ErrorBodySchema,
  JobEditSchema,
  JobRecordSchema,
  TranscriptRecordSchema,
  toOutputTime,
  wordOnOutput,
  type EditPlan,
  type TranscriptRecord,
} from '@captionfarm/contracts';
import { createBandPainter } from '@captionfarm/renderer';
import type { Api } from '../../apps/control-plane/test/harness.ts';
import { rawFrame, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';
import {
  RATE,
  decodePcm,
  findPiece,
  frameLumas,
  makeEditClip,
  maxStepNear,
  probeMedia,
  stepQuantile,
  toneFraction,
  toneOnset,
  type EditClip,
  type Piece,
  type Probe,
  type ScriptItem,
} from './edit-media.ts';

/**
 * Issue 42 end to end, through the public API and a real agent (whisper.cpp base, canvas,
 * ffmpeg): clips made here from espeak-ng words and silences laid end to end, so that every
 * word's, filler's and pause's source time is known to the sample, are cut, zoomed, titled and
 * bleeped, and the output is read back: its duration against the plan's keep-ranges, every kept
 * word's audio found at its output time by cross-correlation, a flash frame and a beep placed
 * together, the caption pixels at each word's output midpoint, the bleep's tone over the profane
 * words, and the hook title's and the zoom's pixels.
 *
 * Thresholds: a word is not clipped when no sample of it above -30 dBFS was cut, it is found within
 * 20 ms of its planned output time with a normalized correlation over 0.9, and the output keeps 80%
 * of its energy; a join does not click when no sample step within 5 ms of it (decoded at 48 kHz)
 * is above the source's own 99.9th-percentile step where there is sound; a bleep covers a word when
 * the 1 kHz tone holds half the energy of at least 80% of the word's 10 ms windows, and leaves a
 * neighbour intact when it holds it in under 10% of the neighbour's and the neighbour correlates
 * over 0.9. The flash and the beep: within one frame (40 ms at 25 fps).
 */

const W = 360;
const H = 640;
const FPS = 25;
const FRAME = 1 / FPS;
/** A word found in the output this close to its planned output time counts as not moved. */
const WORD_TOLERANCE = 0.02;

const words = (s: string): ScriptItem[] => s.split(' ').map((say) => ({ say }));
/**
 * Three sentences with 1.5 s and 2.5 s pauses; fillers and a repeat in the second. No "the": said
 * alone by espeak-ng it is heard as "uh" by whisper base, with or without the filler prompt (2 of 3
 * in a run with fillers off), which would test the recognizer rather than the edit.
 */
const TALK: ScriptItem[] = [
  ...words('Captions make every short video easier to follow'),
  { pause: 1.5 },
  { say: 'Today' },
  { say: 'we', kind: 'repeat' },
  { say: 'we', kind: 'repeat' },
  { say: 'cut' },
  // A hesitation has a short silence either side; a stutter ("we we") does not.
  { pause: 0.2 },
  { say: 'um', kind: 'filler' },
  { pause: 0.2 },
  ...words('long pauses'),
  { pause: 0.2 },
  { say: 'uh', kind: 'filler' },
  { pause: 0.2 },
  ...words('between words'),
  { pause: 2.5 },
  ...words('Every viewer stays right until its end'),
];
/** "shit" from the language's list, "pickles" from the account's own additions. */
const PROFANE: ScriptItem[] = [
  ...words('This little word is'),
  { say: 'shit', kind: 'profane' },
  ...words('and we hide it'),
  { pause: 0.6 },
  ...words('nobody likes'),
  { say: 'pickles', kind: 'profane' },
  ...words('on their burger'),
];

let farm: Farm;
let api: Api;
let accountId: string;
let talk: EditClip;
let profane: EditClip;

beforeAll(async () => {
  farm = await startFarm();
  [talk, profane] = await Promise.all([
    // The flash and the beep in the middle of "video" (piece 4), inside a kept part.
    makeEditClip(farm.dir, 'talk.mp4', { script: TALK, width: W, height: H, fps: FPS, syncPiece: 4 }),
    makeEditClip(farm.dir, 'profane.mp4', { script: PROFANE, width: W, height: H, fps: FPS }),
  ]);
  await farm.startAgent();
  ({ api, accountId } = await farm.account('pro', 'shorts'));
}, 240_000);
afterAll(async () => {
  await farm?.close();
});

interface Burned {
  id: string;
  job: any;
  video: string;
  probe: Probe;
  plan: EditPlan;
  edit: ReturnType<typeof JobEditSchema.parse>;
  transcript: TranscriptRecord;
  /** The output's audio at RATE (cross-correlation) and at 48 kHz (steps at the joins). */
  pcm: Float32Array;
  pcm48: Float32Array;
}

/** Upload `clip`, create the job with `body`, wait for it to succeed, and read back its output, its edit and its transcript. */
async function burn(clip: EditClip, body: Record<string, unknown>): Promise<Burned> {
  const created = await submitUpload(api, await readFile(clip.file), { templateId: 'karaoke', language: 'en', ...body });
  const { job } = await watchJob(api, created.id, terminal);
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
  const video = path.join(farm.dir, `${created.id}.mp4`);
  await writeFile(video, Buffer.from(await (await fetch(job.downloadUrl)).arrayBuffer()));
  const e = await api('GET', `/v1/automation-jobs/${created.id}/edit`);
  expect(e.status, JSON.stringify(e.body)).toBe(200);
  const edit = JobEditSchema.parse(e.body);
  const t = await api('GET', `/v1/automation-jobs/${created.id}/transcript`);
  expect(t.status).toBe(200);
  const [probe, pcm, pcm48] = await Promise.all([probeMedia(video), decodePcm(video), decodePcm(video, 48_000)]);
  return { id: created.id, job, video, probe, plan: edit.plan, edit, transcript: TranscriptRecordSchema.parse(t.body), pcm, pcm48 };
}

const sum = (keep: readonly { start: number; end: number }[]) => keep.reduce((s, r) => s + r.end - r.start, 0);
const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}*]/gu, '');
/** The source audio of `p` as laid in the clip's track (the sync beep included). */
const sourceOf = (clip: EditClip, p: Piece) => clip.track.slice(Math.round(p.start * RATE), Math.round(p.end * RATE));

/** Where the kept piece `p` is found in the output against where the plan puts it: offset (s) and score. */
function locate(clip: EditClip, out: Burned, p: Piece): { expected: number; offset: number; score: number } {
  const expected = toOutputTime(out.plan.keep, p.start)!;
  return { expected, ...findPiece(out.pcm, sourceOf(clip, p), Math.round(expected * RATE)) };
}

/** An audible sample: above -30 dBFS (the clip's noise floor is -60 dBFS, espeak's words peak near -3 dBFS). */
const AUDIBLE = 0.0316;

/** The loudest sample of piece `p` that no keep-range kept: under AUDIBLE means nothing of the word was cut. */
function lostPeak(clip: EditClip, keep: EditPlan['keep'], p: Piece): number {
  let peak = 0;
  for (let i = Math.round(p.start * RATE); i < Math.round(p.end * RATE); i++) {
    const t = i / RATE;
    if (!keep.some((r) => t >= r.start && t < r.end)) peak = Math.max(peak, Math.abs(clip.track[i]!));
  }
  return peak;
}

/** A piece is kept whole when no audible sample of it was cut and it lies in one keep-range (no join inside it). */
function keptWhole(clip: EditClip, keep: EditPlan['keep'], p: Piece): boolean {
  const span = wordOnOutput(keep, p.start, p.end);
  return span !== null && lostPeak(clip, keep, p) < AUDIBLE && !keep.some((r) => r.start > p.start + 0.005 && r.start < p.end - 0.005);
}

/** The output's energy where piece `p` was found, over the source piece's: a fade or a cut through the word lowers it. */
function energyKept(clip: EditClip, out: Burned, p: Piece, at: { expected: number; offset: number }): number {
  const ref = sourceOf(clip, p);
  const from = Math.round((at.expected + at.offset) * RATE);
  let a = 0;
  let b = 0;
  for (let i = 0; i < ref.length; i++) {
    a += (out.pcm[from + i] ?? 0) ** 2;
    b += ref[i]! ** 2;
  }
  return a / b;
}

/** The output times of the joins: where each keep-range but the last ends. */
const joins = (keep: EditPlan['keep']) => keep.slice(0, -1).map((_, i) => sum(keep.slice(0, i + 1)));

describe('silences and fillers cut (silences: fast, fillers: safe)', () => {
  let cut: Burned;

  beforeAll(async () => {
    cut = await burn(talk, { edit: { silences: 'fast', fillers: 'safe' } });
    const heard = cut.transcript.words.map((w) => `${w.text} ${w.start.toFixed(2)}-${w.end.toFixed(2)}${w.outputStart == null ? ' (cut)' : ''}`);
    console.log(`the talk clip says: ${talk.pieces.map((p) => `${p.text} ${p.start.toFixed(2)}-${p.end.toFixed(2)}`).join(', ')}`);
    console.log(`words of the talk clip: ${heard.join(', ')}`);
    console.log(
      `cuts of the talk clip: ${cut.plan.cuts.map((c) => `${c.start.toFixed(2)}-${c.end.toFixed(2)} ${c.reason} ${JSON.stringify(c.text)}`).join('; ')}`,
    );
  }, 400_000);

  it("the output lasts the sum of the plan's keep-ranges, within one frame", () => {
    const kept = sum(cut.plan.keep);
    expect(cut.plan.outputSeconds).toBeCloseTo(kept, 3);
    expect(cut.plan.sourceSeconds).toBeCloseTo(talk.seconds, 1);
    expect(kept).toBeLessThan(talk.seconds - 3); // the 1.5 s and 2.5 s pauses are cut to 0.15 s each
    console.log(
      `talk: source ${talk.seconds.toFixed(3)} s, keep-ranges ${kept.toFixed(3)} s, output video ${cut.probe.videoSeconds.toFixed(3)} s, audio ${cut.probe.audioSeconds.toFixed(3)} s`,
    );
    expect(Math.abs(cut.probe.videoSeconds - kept)).toBeLessThanOrEqual(FRAME + 1e-6);
    // AAC writes whole frames of 1024 samples: the audio may run up to one of them longer.
    expect(Math.abs(cut.probe.audioSeconds - kept)).toBeLessThanOrEqual(FRAME + 1024 / 16_000);
    // Every pause over the fast threshold (0.4 s) is shortened: none of its middle survives.
    for (const pause of talk.pauses.filter((x) => x.end - x.start > 0.4))
      expect(toOutputTime(cut.plan.keep, (pause.start + pause.end) / 2), JSON.stringify(pause)).toBeNull();
  });

  it('no word is clipped: every word is kept whole, and its audio is found in the output within 20 ms of its planned output time', () => {
    const rows = talk.pieces
      .filter((x) => x.kind === 'word')
      .map((p) => {
        const lost = lostPeak(talk, cut.plan.keep, p);
        const at = toOutputTime(cut.plan.keep, p.start) === null ? null : locate(talk, cut, p);
        return { p, lost, at, energy: at ? energyKept(talk, cut, p, at) : 0 };
      });
    const show = (r: (typeof rows)[number]) =>
      `${r.p.text} ${r.at ? `${(r.at.offset * 1000).toFixed(1)} ms r=${r.at.score.toFixed(2)} e=${r.energy.toFixed(2)}` : 'cut'}${r.lost >= AUDIBLE ? ` lost ${r.lost.toFixed(3)}` : ''}`;
    console.log(`words in the output (offset from the plan, correlation, energy kept, peak cut off): ${rows.map(show).join(', ')}`);
    for (const r of rows) {
      const what = `"${r.p.text}" ${r.p.start.toFixed(3)}-${r.p.end.toFixed(3)}`;
      expect.soft(keptWhole(talk, cut.plan.keep, r.p), `${what} is kept whole (its loudest cut-off sample ${r.lost.toFixed(3)})`).toBe(true);
      if (!r.at) continue; // its start was cut: reported above as not kept whole
      expect.soft(Math.abs(r.at.offset), `${what} found ${r.at.offset} s from ${r.at.expected}`).toBeLessThanOrEqual(WORD_TOLERANCE);
      expect.soft(r.at.score, `${what} is the same sound`).toBeGreaterThan(0.9);
      expect.soft(r.energy, `${what} keeps its loudness (no fade through it)`).toBeGreaterThan(0.8);
    }
  });

  it('the fillers are gone and the repeat is cut once; the cut list says why, the real words are in the transcript on the output timeline', () => {
    // Soft: each finding is reported, not only the first.
    const kept = (p: Piece) => (wordOnOutput(cut.plan.keep, p.start, p.end)?.end ?? 0) - (wordOnOutput(cut.plan.keep, p.start, p.end)?.start ?? 0);
    const pieces = talk.pieces.filter((x) => x.kind !== 'word');
    console.log(
      `fillers and repeats: ${pieces.map((p) => `"${p.text}" ${p.start.toFixed(2)}-${p.end.toFixed(2)} ${Math.round(kept(p) * 1000)} of ${Math.round((p.end - p.start) * 1000)} ms kept`).join(', ')}`,
    );
    for (const f of talk.pieces.filter((x) => x.kind === 'filler')) {
      expect.soft(wordOnOutput(cut.plan.keep, f.start + 0.03, f.end - 0.03), `"${f.text}" at ${f.start.toFixed(2)} is cut`).toBeNull();
      const why = cut.plan.cuts.find((c) => c.start <= (f.start + f.end) / 2 && c.end >= (f.start + f.end) / 2);
      expect.soft(['filler', 'voiced-gap'], JSON.stringify(why)).toContain(why?.reason);
    }
    const repeats = talk.pieces.filter((x) => x.kind === 'repeat');
    expect.soft(repeats.filter((p) => keptWhole(talk, cut.plan.keep, p)).length, 'one "we" of "we we" is kept').toBe(1);
    // The other one is gone (not a part of it left), cut as a repeat (or as a sound no word covers).
    for (const gone of repeats.filter((p) => !keptWhole(talk, cut.plan.keep, p)).slice(0, 1)) {
      expect.soft(wordOnOutput(cut.plan.keep, gone.start + 0.03, gone.end - 0.03), `"${gone.text}" at ${gone.start.toFixed(2)} is cut`).toBeNull();
      const why = cut.plan.cuts.find((c) => c.start <= (gone.start + gone.end) / 2 && c.end >= (gone.start + gone.end) / 2);
      expect.soft(['repeat', 'voiced-gap', 'filler'], JSON.stringify(why)).toContain(why?.reason);
    }

    const { words } = cut.transcript;
    const onOutput = words.filter((w) => w.outputStart != null);
    expect
      .soft(
        onOutput.filter((w) => /^(um+|uh+|erm|hmm)$/.test(norm(w.text))),
        'no filler on the output timeline',
      )
      .toEqual([]);
    // Each word's output span is the plan's mapping of its source span, or none for a word the plan
    // removed (a filler's recognized span may leave a sliver in a keep-range: the plan says it is gone).
    const removed = new Set(cut.plan.removed ?? []);
    for (const [i, w] of words.entries()) {
      const span = removed.has(i) ? null : wordOnOutput(cut.plan.keep, w.start, w.end);
      if (w.outputStart == null) expect.soft(span, `"${w.text}" has no output time because the cut removed it`).toBeNull();
      else {
        expect.soft(w.outputStart).toBeCloseTo(span!.start, 3);
        expect.soft(w.outputEnd!).toBeCloseTo(span!.end, 3);
      }
    }
    // Recognition accuracy is bench:accuracy's; here 90% of the reference words must be on the output timeline by text.
    const heard = new Set(onOutput.map((w) => norm(w.text)));
    const reference = talk.pieces.filter((p) => p.kind === 'word').map((p) => norm(p.text));
    const missing = reference.filter((r) => !heard.has(r));
    expect.soft(missing.length, `reference words not on the output timeline: ${missing.join(', ')}`).toBeLessThanOrEqual(Math.floor(reference.length * 0.1));
  });

  it('audio and video stay in sync: the flash frame and the beep placed together are within one frame in the output', async () => {
    const sync = talk.sync!;
    const expected = toOutputTime(cut.plan.keep, sync.time)!;
    expect(expected).not.toBeNull();
    const flashes = (await frameLumas(cut.video)).filter((f) => f.luma > 180);
    expect(flashes.length, JSON.stringify(flashes)).toBe(1);
    const beep = toneOnset(cut.pcm, RATE, expected - 0.3, expected + 0.3);
    console.log(`sync: flash frame at ${flashes[0]!.t.toFixed(3)} s, beep onset at ${beep?.toFixed(3)} s, the plan's ${expected.toFixed(3)} s`);
    expect(beep).not.toBeNull();
    expect(Math.abs(flashes[0]!.t - expected)).toBeLessThanOrEqual(FRAME / 2);
    expect(Math.abs(beep! - flashes[0]!.t)).toBeLessThanOrEqual(FRAME);
  });

  it("the joins do not click: no sample step within 5 ms of a join above the source speech's own 99.9th-percentile step", async () => {
    const source48 = await decodePcm(talk.file, 48_000);
    const limit = stepQuantile(source48, 0.999);
    const steps = joins(cut.plan.keep).map((t) => ({ t, step: maxStepNear(cut.pcm48, 48_000, t) }));
    console.log(`joins: ${steps.map((s) => `${s.t.toFixed(2)} s step ${s.step.toFixed(4)}`).join(', ')}; limit ${limit.toFixed(4)}`);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    for (const s of steps) expect(s.step, `join at ${s.t.toFixed(3)} s`).toBeLessThanOrEqual(limit);
  });

  it('captions on the output show each word while it is heard (karaoke yellow in its box at its output midpoint)', async () => {
    const shown = burnedWords(cut);
    const painter = createBandPainter({ words: shown, template: getBuiltinTemplate('karaoke')!, width: W, height: H, fps: FPS });
    const { units, pages } = painter.layout;
    expect(units.map((u) => u.wordIndex)).toEqual(shown.map((_, i) => i));
    let probed = 0;
    for (let k = 0; k < shown.length; k++) {
      const w = shown[k]!;
      if (w.end - w.start < 0.16) continue; // too short to sample a frame well inside it
      const t = (w.start + w.end) / 2;
      if (Math.abs(t - toOutputTime(cut.plan.keep, talk.sync!.time)!) < 2 * FRAME) continue; // the white flash frame
      const f = await rawFrame(cut.video, t, 'rgb24');
      const box = wordBox(painter.layout.units[k]!.ink);
      expect(yellowIn(f, box), `"${w.text}" is lit at ${t.toFixed(2)} s`).toBeGreaterThan(box.width * box.height * 0.1);
      const page = pages[units[k]!.page]!;
      // Words still to come (recognized words may overlap: one that has started is lit).
      for (const j of page.units.filter((j) => j > k && shown[j]!.start > t + FRAME)) {
        expect(yellowIn(f, wordBox(units[j]!.ink)), `"${shown[j]!.text}" is not lit yet while "${w.text}" is heard`).toBeLessThan(15);
      }
      probed++;
    }
    expect(probed).toBeGreaterThanOrEqual(12);
  });

  it("the record keeps exactly the spec's keys; quotedSeconds is the source's duration, resolution the output's", async () => {
    const job = JobRecordSchema.parse(cut.job);
    expect(Object.keys(cut.job).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    expect(job.quotedSeconds).toBe(Math.ceil(talk.seconds));
    expect(job.resolution).toEqual({ width: cut.probe.width, height: cut.probe.height });
    expect(job.percent).toBeNull();
    expect(cut.edit.edit).toEqual({ silences: 'fast', fillers: 'safe', zoom: 'off', keep: null });
  });

  describe('a fixed cut sent back as edit.keep', () => {
    it('renders exactly those ranges: a cut put back is heard, every piece inside the ranges at its output time', async () => {
      // The client undoes the plan's first cut of a filler, repeat or voiced blob (else its first
      // cut between two ranges): the two ranges around it become one.
      const keep = cut.plan.keep.map((r) => ({ ...r }));
      const undo = cut.plan.cuts.find((c) => c.reason !== 'silence' && c.start > 0.01) ?? cut.plan.cuts.find((c) => c.start > 0.01)!;
      const i = keep.findIndex((r, j) => r.end <= undo.start + 1e-6 && (keep[j + 1]?.start ?? 0) >= undo.end - 1e-6);
      expect(i, `a range on each side of the cut ${JSON.stringify(undo)}`).toBeGreaterThanOrEqual(0);
      keep.splice(i, 2, { start: keep[i]!.start, end: keep[i + 1]!.end });
      const again = await burn(talk, { edit: { keep }, transcript: { language: 'en', words: cut.transcript.words } });
      expect(again.plan.keep.length).toBe(keep.length);
      again.plan.keep.forEach((r, j) => {
        expect(r.start).toBeCloseTo(keep[j]!.start, 6);
        expect(r.end).toBeCloseTo(keep[j]!.end, 6);
      });
      expect(again.plan.cuts.every((c) => c.reason === 'client')).toBe(true);
      expect(Math.abs(again.probe.videoSeconds - sum(keep))).toBeLessThanOrEqual(FRAME + 1e-6);
      const inside = talk.pieces.filter((p) => keep.some((r) => p.start >= r.start && p.end <= r.end));
      const restored = inside.filter((p) => p.start < undo.end && p.end > undo.start);
      console.log(
        `put back ${undo.start}-${undo.end} (${undo.reason} ${JSON.stringify(undo.text)}): ${restored.map((p) => `"${p.text}"`).join(', ') || 'no whole piece'} back in`,
      );
      expect(inside.length).toBeGreaterThan(10);
      for (const p of inside) {
        const at = locate(talk, again, p);
        expect(Math.abs(at.offset), `"${p.text}"`).toBeLessThanOrEqual(WORD_TOLERANCE);
        expect(at.score, `"${p.text}"`).toBeGreaterThan(0.9);
      }
    });

    it('a range past the end of the source fails the job with edit-out-of-range, and the minutes come back', async () => {
      const before = await farm.balance(accountId);
      const keep = [
        { start: 0, end: 2 },
        { start: talk.seconds + 1, end: talk.seconds + 3 },
      ];
      const created = await submitUpload(api, await readFile(talk.file), { language: 'en', edit: { keep } });
      const { job } = await watchJob(api, created.id, terminal);
      expect(job, JSON.stringify(job)).toMatchObject({ status: 'failed', failureCode: 'edit-out-of-range', downloadUrl: null });
      expect(await farm.balance(accountId)).toBe(before);
    });

    it('ranges out of order, or keep with silences on, are refused at creation with the documented error body', async () => {
      const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'x.mp4', sizeBytes: 10 });
      for (const edit of [
        {
          keep: [
            { start: 3, end: 4 },
            { start: 1, end: 2 },
          ],
        },
        { silences: 'fast', keep: [{ start: 0, end: 1 }] },
      ]) {
        const res = await api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: 'karaoke', edit });
        expect(res.status).toBe(400);
        expect(ErrorBodySchema.parse(res.body).error.code).toBe('invalid_request');
        expect(JSON.stringify(res.body.error.details ?? res.body.error.message)).toMatch(/keep/);
      }
    });
  });

  describe('punch-in zoom and a hook title (zoom: emphasis, hookTitle)', () => {
    const HOOK_SECONDS = 2;
    let zoomed: Burned;

    beforeAll(async () => {
      // The same words as the cut job (its export sent back), so the same keep-ranges: frames compare at the same output times.
      zoomed = await burn(talk, {
        edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis' },
        hookTitle: { text: 'Three cuts that save a short', seconds: HOOK_SECONDS },
        transcript: { language: 'en', words: cut.transcript.words },
      });
    }, 400_000);

    it('cuts the same, and plans short eased punch-ins of 1.06-1.15x', () => {
      expect(zoomed.plan.keep).toEqual(cut.plan.keep);
      console.log(`zooms: ${zoomed.plan.zooms.map((z) => `${z.start.toFixed(2)}-${z.end.toFixed(2)} x${z.scale}`).join(', ')}`);
      expect(zoomed.plan.zooms.length).toBeGreaterThan(0);
      for (const z of zoomed.plan.zooms) {
        expect(z.scale).toBeGreaterThanOrEqual(1.06);
        expect(z.scale).toBeLessThanOrEqual(1.15);
        expect(z.end).toBeLessThanOrEqual(zoomed.plan.outputSeconds + 1e-6);
      }
      expect(zoomed.edit.hookTitle).toEqual({ text: 'Three cuts that save a short', seconds: HOOK_SECONDS });
    });

    it('the hook title is drawn outside the caption band over its first seconds, and gone after', async () => {
      const band = bandOf(cut);
      const at = async (b: Burned, t: number) => drawnOutside(await rawFrame(b.video, t, 'rgb24'), band);
      const early = [0.4, HOOK_SECONDS - 0.4].filter((t) => !nearFlash(cut, t));
      for (const t of early) {
        expect(await at(zoomed, t), `hook drawn at ${t} s`).toBeGreaterThan(500);
        expect(await at(cut, t), `nothing outside the band without a hook at ${t} s`).toBeLessThan(50);
      }
      const later = HOOK_SECONDS + 0.3;
      expect(await at(zoomed, nearFlash(cut, later) ? later + 0.2 : later), 'the hook is gone after its seconds').toBeLessThan(50);
    });

    it("the picture is zoomed while an emphasised word is spoken, the captions are not: their pixels match the unzoomed job's", async () => {
      const band = bandOf(cut);
      const z = zoomed.plan.zooms.find((x) => (x.start + x.end) / 2 > HOOK_SECONDS + 0.2 && !nearFlash(cut, (x.start + x.end) / 2)) ?? zoomed.plan.zooms[0]!;
      const t = (z.start + z.end) / 2;
      const [a, b] = await Promise.all([rawFrame(zoomed.video, t, 'rgb24'), rawFrame(cut.video, t, 'rgb24')]);
      const outside = { x: 0, y: 0, width: W, height: Math.max(1, band.y - 1) };
      expect(psnr(a, b, outside), `the picture above the band is zoomed at ${t.toFixed(2)} s (x${z.scale})`).toBeLessThan(30);
      const iou = maskIou(a, b, band);
      console.log(`zoom at ${t.toFixed(2)} s x${z.scale}: picture PSNR ${psnr(a, b, outside).toFixed(1)} dB, caption pixels IoU ${iou.toFixed(3)}`);
      expect(iou, 'the caption pixels are where the unzoomed job has them').toBeGreaterThan(0.85);
      // And away from every zoom, after the title, the two pictures are the same.
      const calm = findCalm(zoomed.plan, HOOK_SECONDS + 0.3, cut);
      if (calm !== null) {
        const [c, d] = await Promise.all([rawFrame(zoomed.video, calm, 'rgb24'), rawFrame(cut.video, calm, 'rgb24')]);
        expect(psnr(c, d, outside), `no zoom at ${calm.toFixed(2)} s`).toBeGreaterThan(32);
      }
    });
  });
});

describe('profanity: bleep', () => {
  let bleeped: Burned;

  beforeAll(async () => {
    const put = await api('PUT', '/v1/profanity-words', { words: ['pickles'] });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    bleeped = await burn(profane, { profanity: 'bleep' });
  }, 400_000);

  it('the profane words are masked in the transcript, the plan bleeps exactly their spans, the rest is uncut', () => {
    const masked = bleeped.transcript.words.filter((w) => w.text.includes('*'));
    console.log(`masked: ${masked.map((w) => `${w.text} ${w.outputStart}-${w.outputEnd}`).join(', ')}; bleeps ${JSON.stringify(bleeped.plan.bleeps)}`);
    expect(masked.map((w) => norm(w.text))).toEqual(['s***', 'p******']);
    expect(bleeped.transcript.words.some((w) => /shit|pickles/i.test(w.text))).toBe(false);
    expect(bleeped.plan.keep).toEqual([{ start: 0, end: expect.closeTo(profane.seconds, 1) }]);
    expect(bleeped.plan.bleeps.length).toBe(2);
    // Each bleep is its word's output span (to the frame: the tone is laid on the output timeline).
    masked.forEach((w, i) => {
      expect(Math.abs(bleeped.plan.bleeps[i]!.start - w.outputStart!), `bleep ${i} starts with "${w.text}"`).toBeLessThanOrEqual(FRAME);
      expect(Math.abs(bleeped.plan.bleeps[i]!.end - w.outputEnd!), `bleep ${i} ends with "${w.text}"`).toBeLessThanOrEqual(FRAME);
    });
  });

  it('the output audio is a 1 kHz tone over each profane word, and the words beside it are intact', () => {
    const pieces = profane.pieces;
    const checks = pieces.flatMap((p, i) => {
      if (p.kind !== 'profane') return [];
      // The spoken word itself (known to the sample) is under the tone, not just the recognizer's span of it.
      const share = toneFraction(bleeped.pcm, RATE, p.start + 0.03, p.end - 0.03);
      const bleep = bleeped.plan.bleeps.find((x) => x.end > p.start && x.start < p.end);
      const neighbours = [pieces[i - 1]!, pieces[i + 1]!].map((n) => ({
        n,
        at: locate(profane, bleeped, n),
        tone: toneFraction(bleeped.pcm, RATE, n.start + 0.02, n.end - 0.02),
      }));
      const edges = bleep
        ? `bleep ${bleep.start.toFixed(3)}-${bleep.end.toFixed(3)} (${((bleep.start - p.start) * 1000).toFixed(0)} / ${((bleep.end - p.end) * 1000).toFixed(0)} ms from the word)`
        : 'no bleep';
      const beside = neighbours
        .map((x) => `"${x.n.text}" r=${x.at.score.toFixed(2)} ${(x.at.offset * 1000).toFixed(1)} ms tone ${(x.tone * 100).toFixed(0)}%`)
        .join(', ');
      console.log(
        `"${p.text}" ${p.start.toFixed(3)}-${p.end.toFixed(3)}: tone in ${(share * 100).toFixed(0)}% of its 10 ms windows; ${edges}; beside it ${beside}`,
      );
      return [{ p, share, neighbours }];
    });
    expect(checks.length).toBe(2);
    for (const { p, share, neighbours } of checks) {
      expect.soft(share, `"${p.text}" is bleeped`).toBeGreaterThan(0.8);
      for (const { n, at, tone } of neighbours) {
        expect.soft(Math.abs(at.offset), `"${n.text}" beside "${p.text}"`).toBeLessThanOrEqual(WORD_TOLERANCE);
        expect.soft(at.score, `"${n.text}" beside "${p.text}" is intact`).toBeGreaterThan(0.9);
        expect.soft(tone, `no tone over "${n.text}"`).toBeLessThan(0.1);
      }
    }
  });
});

describe('billing: minutes on the source, not the output', () => {
  it('a 62 s clip cut to its first sentence is quoted and charged 62 s (2 minutes); its output lasts the keep-range', async () => {
    const long = await makeEditClip(path.join(farm.dir, 'long'), 'long.mp4', {
      script: [...words('Captions make every short video easier to follow'), { pause: 54 }, ...words('the end')],
      width: 120,
      height: 216,
      fps: FPS,
    });
    expect(long.seconds).toBeGreaterThan(60);
    const { api: payer, accountId: payerId } = await farm.account('pro', 'payer');
    const before = await farm.balance(payerId);
    // The words are known (the clip was laid word by word): given, so no recognition runs.
    const given = long.pieces.map((p) => ({ text: p.text, start: p.start, end: p.end }));
    const keep = [{ start: 0, end: Math.ceil((long.pieces[7]!.end + 0.2) * FPS) / FPS }];
    const created = await submitUpload(payer, await readFile(long.file), { edit: { keep }, transcript: { language: 'en', words: given } });
    const { job } = await watchJob(payer, created.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect(job.quotedSeconds).toBe(Math.ceil(long.seconds));
    expect(await farm.balance(payerId)).toBe(before - 2);
    const video = path.join(farm.dir, 'long-out.mp4');
    await writeFile(video, Buffer.from(await (await fetch(job.downloadUrl)).arrayBuffer()));
    const probe = await probeMedia(video);
    expect(Math.abs(probe.videoSeconds - keep[0]!.end)).toBeLessThanOrEqual(FRAME + 1e-6);
    expect(job.resolution).toEqual({ width: 120, height: 216 });
  });
});

/** Within two frames of the talk clip's white flash on `b`'s output timeline. */
function nearFlash(b: Burned, t: number): boolean {
  return Math.abs(t - toOutputTime(b.plan.keep, talk.sync!.time)!) < 2 * FRAME;
}

/** The caption band of the cut job's words on the output timeline (the same words for the zoomed job). */
function bandOf(b: Burned): Rect {
  return createBandPainter({ words: burnedWords(b), template: getBuiltinTemplate('karaoke')!, width: W, height: H, fps: FPS }).band;
}

/**
 * The words the video shows, on the output timeline: the export's words with an output time, less
 * those the plan's cut list says a cut removed (their middle is in a cut: a filler's sliver left
 * at a frame edge is not drawn).
 */
function burnedWords(b: Burned): { text: string; start: number; end: number; confidence: number }[] {
  return b.transcript.words
    .filter((w) => w.outputStart != null && !b.plan.cuts.some((c) => (w.start + w.end) / 2 >= c.start && (w.start + w.end) / 2 <= c.end))
    .map((w) => ({ text: w.text, start: w.outputStart!, end: w.outputEnd!, confidence: 1 }));
}

/** An output time after `from`, 0.3 s from every zoom and the flash, or null. */
function findCalm(plan: EditPlan, from: number, b: Burned): number | null {
  for (let t = from; t < plan.outputSeconds - 0.2; t += FRAME) {
    if (!nearFlash(b, t) && plan.zooms.every((z) => t < z.start - 0.3 || t > z.end + 0.3)) return t;
  }
  return null;
}

const wordBox = (ink: Rect): Rect => ({ x: ink.x - 2, y: ink.y - 2, width: ink.width + 4, height: ink.height + 4 });
const isYellow = (f: Buffer, i: number) => f[i]! > 190 && f[i + 1]! > 160 && f[i + 2]! < 110 && f[i]! - f[i + 2]! > 120;
/** Drawn over the dimmed grey picture (luma under about 120, no colour): a bright or a coloured pixel. */
const isDrawn = (f: Buffer, i: number) =>
  Math.max(f[i]!, f[i + 1]!, f[i + 2]!) > 160 || Math.max(f[i]!, f[i + 1]!, f[i + 2]!) - Math.min(f[i]!, f[i + 1]!, f[i + 2]!) > 50;

function forEachPixel(r: Rect, fn: (i: number) => void): void {
  for (let y = Math.max(0, Math.floor(r.y)); y < Math.min(H, Math.ceil(r.y + r.height)); y++) {
    for (let x = Math.max(0, Math.floor(r.x)); x < Math.min(W, Math.ceil(r.x + r.width)); x++) fn((y * W + x) * 3);
  }
}

function yellowIn(f: Buffer, r: Rect): number {
  let n = 0;
  forEachPixel(r, (i) => {
    if (isYellow(f, i)) n++;
  });
  return n;
}

/** Drawn pixels outside the caption band. */
function drawnOutside(f: Buffer, band: Rect): number {
  let n = 0;
  forEachPixel({ x: 0, y: 0, width: W, height: H }, (i) => {
    const x = (i / 3) % W;
    const y = Math.floor(i / 3 / W);
    const inBand = x >= band.x && x < band.x + band.width && y >= band.y && y < band.y + band.height;
    if (!inBand && isDrawn(f, i)) n++;
  });
  return n;
}

/** Intersection over union of the drawn pixels of two frames in `r`. */
function maskIou(a: Buffer, b: Buffer, r: Rect): number {
  let both = 0;
  let either = 0;
  forEachPixel(r, (i) => {
    const [p, q] = [isDrawn(a, i), isDrawn(b, i)];
    if (p && q) both++;
    if (p || q) either++;
  });
  return either === 0 ? 1 : both / either;
}

function psnr(a: Buffer, b: Buffer, r: Rect): number {
  let se = 0;
  let n = 0;
  forEachPixel(r, (i) => {
    for (let c = 0; c < 3; c++) {
      const d = a[i + c]! - b[i + c]!;
      se += d * d;
      n++;
    }
  });
  return se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / n));
}
