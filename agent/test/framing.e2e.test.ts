import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Box,
  ErrorBodySchema,
  JobOutputsSchema,
  JobRecordSchema,
  safeAreaZones,
  TranscriptRecordSchema,
  type TranscriptRecord,
} from '@captionfarm/contracts';
import type { Api } from '../../apps/control-plane/test/harness.ts';
import { type Clip, makeClip } from '../../packages/framing/test/clips.ts';
import { startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';
import {
  captionMask,
  countIn,
  facePatch,
  grayFrames,
  maskBounds,
  type Match,
  parseCues,
  probeStreams,
  rgbFrames,
  rgbImage,
  subtitleCues,
  trackPatch,
  withSpeech,
} from './framing-media.ts';

/**
 * Issue 43 end to end, through the public API and a real agent (whisper.cpp base, the framing
 * analysis, ffmpeg, canvas): clips built from a real photograph of a face (packages/framing's test
 * clips: the astronaut portrait over a blurred photograph, its face's box in every source frame
 * known by construction) with an espeak-ng voice, reframed from 960x540 to 540x960 (the issue's
 * 1920x1080 -> 1080x1920 at half size: the app zones scale with the output); the outputs are read
 * back and the face is found in every output frame by normalized cross-correlation of the still's
 * face patch (not by our detector); caption pixels are the difference between a job that burns
 * the captions and the same rendition of a job that only carries them as a track (the same
 * analysis, the same crop, the same picture).
 */

const SRC = { width: 960, height: 540 };
const OUT = { width: 540, height: 960 };
const FPS = 25;
const FRAMES = 175; // 7 s
/** The photo's scale in the clips: her face (90x92 in the still) is 112x115 source pixels. */
const SCALE = 1.25;
/** Source pixels to output pixels for a full-height 9:16 window: 960 / 540. */
const K = OUT.height / SRC.height;
/** Face tracking runs on frames at half size. */
const HALF = 0.5;
/** A match of the face patch counts as the face at this normalized cross-correlation (the astronaut scores 0.96-0.98 in the clips). */
const FOUND = 0.7;
/**
 * "No jump larger than a few pixels per frame": the crop's step within a shot at most 1% of the
 * output's width per frame at 30 fps (5.4 px here, 10.8 at 1080 wide; the clip is 25 fps, so its
 * steps are scaled by 25/30), plus 1 px for the measurement's own error (the face found to a
 * sub-pixel in the source and in the half-size output).
 */
const MAX_STEP = 0.01 * 540 + 1;
/** Every 5th frame is read in full colour for caption pixels (35 frames of 175). */
const EVERY = 5;
/** A frame's pixels that differ by more than the encodes' own noise when nothing is drawn: measured 0 in the clips (see the tests' logs). */
const NOISE_PIXELS = 20;
const SPEECH = 'Captions should never cover a face, and they keep clear of the buttons that every app draws over the video.';

let farm: Farm;
let api: Api;
let accountId: string;
let one: Clip;
let two: Clip;
/** The words of the first job, sent back with the others (the same speech): one recognition for the file. */
let words: TranscriptRecord;

beforeAll(async () => {
  farm = await startFarm();
  const face = (x: number) => ({ from: { x, y: 290 }, to: { x, y: 290 } });
  [one, two] = await Promise.all([
    // One face at a third of the width (its centre at x 320 of 960), still.
    makeClip(farm.dir, 'one-pictures.mp4', { ...SRC, fps: FPS, scale: SCALE, shots: [{ frames: FRAMES, background: 'coffee.png', face: face(320) }] }).then(
      (c) => withSpeech(c, 'one.mp4', SPEECH),
    ),
    // Two shots cut at frame 76 (3.04 s, on no 2, 4, 5 or 10 per second sampling grid): the face
    // about a quarter of the width in, moving 100 px right (1.3 px a frame: out of any dead band,
    // so the crop has to pan), then about three quarters in, moving 100 px left.
    makeClip(farm.dir, 'two-pictures.mp4', {
      ...SRC,
      fps: FPS,
      scale: SCALE,
      shots: [
        { frames: 76, background: 'coffee.png', face: { from: { x: 200, y: 290 }, to: { x: 300, y: 290 } } },
        { frames: FRAMES - 76, background: 'rocket.jpg', face: { from: { x: 760, y: 290 }, to: { x: 660, y: 290 } } },
      ],
    }).then((c) => withSpeech(c, 'two.mp4', SPEECH)),
  ]);
  await farm.startAgent();
  ({ api, accountId } = await farm.account('pro', 'framing'));
}, 240_000);
afterAll(async () => {
  await farm?.close();
});

interface Burned {
  id: string;
  job: any;
  video: string;
}

/** Upload `clip`, create the job with `body`, wait for it to succeed, download its video. */
async function burn(clip: Clip, name: string, body: Record<string, unknown>): Promise<Burned> {
  const given = words ? { transcript: { language: 'en', words: words.words.map(({ text, start, end }) => ({ text, start, end })) } } : {};
  const created = await submitUpload(api, await readFile(clip.file), { templateId: 'karaoke', language: 'en', ...given, ...body });
  const { job } = await watchJob(api, created.id, terminal);
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
  const video = path.join(farm.dir, name);
  await download(job.downloadUrl, video);
  return { id: created.id, job, video };
}

async function download(url: string, file: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  await writeFile(file, bytes);
  return bytes;
}

const insideMiddle = (b: Box, width: number) => b.x >= 0.2 * width && b.x + b.width <= 0.8 * width;
const faceOut = (m: Match, patch: { width: number; height: number }): Box => ({
  x: m.x / HALF,
  y: m.y / HALF,
  width: patch.width / HALF,
  height: patch.height / HALF,
});
/** Where the face's top edge falls in a full-height 9:16 output at half size (the crop moves only sideways). */
const faceRow = (clip: Clip) => Math.round((clip.faceAt(0)!.y * K * HALF) as number);

/** The face found in every frame of a 540x960 output of `clip` (half size, by cross-correlation). */
async function faceTrack(video: string, clip: Clip) {
  const patch = await facePatch(SCALE * K * HALF);
  const frames = await grayFrames(video, { ...OUT, factor: HALF });
  const row = faceRow(clip);
  const matches = trackPatch(frames, patch, { y0: row - 8, y1: row + 8 });
  return { patch, matches, boxes: matches.map((m) => faceOut(m, patch)) };
}

/** The face found in every source frame of `clip` (full size, near its box by construction). */
async function sourceFaces(clip: Clip): Promise<Match[]> {
  const frames = await grayFrames(clip.file, { ...SRC, factor: 1 });
  const matches = trackPatch(frames, await facePatch(SCALE), { y0: clip.faceAt(0)!.y - 6, y1: clip.faceAt(0)!.y + 6 });
  matches.forEach((m, i) => {
    expect(m.score, `the face in source frame ${i}`).toBeGreaterThan(0.9);
    expect(Math.abs(m.x - clip.faceAt(i)!.x), `the face in source frame ${i} where the clip put it`).toBeLessThanOrEqual(3);
  });
  return matches;
}

describe('reframe subject (960x540 -> 540x960, one face at a third of the width)', () => {
  let subject: Burned;
  let center: Burned;
  let track: Awaited<ReturnType<typeof faceTrack>>;

  beforeAll(async () => {
    // The first job recognizes the speech; its words go with every later job.
    subject = await burn(one, 'subject.mp4', { resolution: OUT, reframe: 'subject', subtitles: 'track' });
    const t = await api('GET', `/v1/automation-jobs/${subject.id}/transcript`);
    expect(t.status).toBe(200);
    words = TranscriptRecordSchema.parse(t.body);
    console.log(`words: ${words.words.map((w) => `${w.text} ${w.start.toFixed(2)}-${w.end.toFixed(2)}`).join(', ')}`);
    center = await burn(one, 'center.mp4', { resolution: OUT, subtitles: 'track' });
    track = await faceTrack(subject.video, one);
  }, 400_000);

  it('keeps the face inside the middle 60% of the output width in every frame (175 of 175)', () => {
    expect(track.matches.length).toBe(FRAMES);
    const xs = track.boxes.map((b) => b.x + b.width / 2);
    console.log(
      `subject: face centre x ${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)} of ${OUT.width} ` +
        `(middle 60%: ${0.2 * OUT.width}-${0.8 * OUT.width}), correlation ${Math.min(...track.matches.map((m) => m.score)).toFixed(3)} at worst`,
    );
    const lost = track.matches.flatMap((m, i) =>
      m.score >= FOUND && insideMiddle(track.boxes[i]!, OUT.width) ? [] : [`frame ${i}: x ${track.boxes[i]!.x.toFixed(0)} r=${m.score.toFixed(2)}`],
    );
    expect(lost).toEqual([]);
  });

  it('where center loses it: by construction the face lies partly outside the middle 60%, and it is found there in no frame', async () => {
    const window = { x: (SRC.width - (SRC.height * OUT.width) / OUT.height) / 2 };
    const f = one.faceAt(0)!;
    const box = { x: (f.x - window.x) * K, y: f.y * K, width: f.width * K, height: f.height * K };
    console.log(`center: the face by construction at output x ${box.x.toFixed(0)}-${(box.x + box.width).toFixed(0)} of ${OUT.width}`);
    expect(insideMiddle(box, OUT.width)).toBe(false);
    const c = await faceTrack(center.video, one);
    const found = c.matches.filter((m, i) => m.score >= FOUND && insideMiddle(c.boxes[i]!, OUT.width));
    console.log(`center: best correlation of the face patch ${Math.max(...c.matches.map((m) => m.score)).toFixed(3)}`);
    expect(found.length).toBe(0);
  });
});

describe('reframe subject across a shot change (face at 1/4, cut at 3.04 s, face at 3/4)', () => {
  let cut: Burned;
  /**
   * The crop window's left edge in source pixels at each frame: the face found in the source frame
   * less the face found in the output frame (both by cross-correlation; the construction's formula
   * is off by up to a pixel, ffmpeg's overlay placing the photo at even x in yuv420p, and a step of
   * the crop is measured to a pixel).
   */
  let cropX: number[];
  let boxes: Box[];
  let scores: number[];

  beforeAll(async () => {
    cut = await burn(two, 'two-shots.mp4', { resolution: OUT, reframe: 'subject', subtitles: 'track' });
    const t = await faceTrack(cut.video, two);
    boxes = t.boxes;
    scores = t.matches.map((m) => m.score);
    const source = await sourceFaces(two);
    cropX = boxes.map((b, i) => source[i]!.x - b.x / K);
  }, 400_000);

  it("keeps the face's centre inside the middle 60% in every frame of both shots (175 of 175), the face moving", () => {
    // The centre, not the whole face: a moving face may drift within the crop's dead band before the crop follows.
    const lost = boxes.flatMap((b, i) => {
      const x = b.x + b.width / 2;
      return scores[i]! >= FOUND && x >= 0.2 * OUT.width && x <= 0.8 * OUT.width ? [] : [`frame ${i}: centre x ${x.toFixed(0)} r=${scores[i]!.toFixed(2)}`];
    });
    const xs = boxes.map((b) => b.x + b.width / 2);
    console.log(`two shots: face centre x ${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)} of ${OUT.width}`);
    expect(lost).toEqual([]);
  });

  it('the crop cuts at the shot change: one step within a frame of the cut, no pan across it', () => {
    const c = two.shotFrames[1]!;
    const steps = cropX.slice(1).map((x, i) => x - cropX[i]!);
    const big = steps.map((s, i) => ({ frame: i + 1, step: s })).sort((a, b) => Math.abs(b.step) - Math.abs(a.step))[0]!;
    const before = cropX[c - 2]!;
    const after = cropX[c + 1]!;
    console.log(
      `two shots: crop left edge (source px) ${cropX
        .slice(c - 4, c + 4)
        .map((x) => x.toFixed(1))
        .join(', ')} around the cut (frame ${c}); largest step ${big.step.toFixed(1)} at frame ${big.frame}`,
    );
    expect(Math.abs(big.frame - c)).toBeLessThanOrEqual(1);
    // The step is the whole move: nothing of it is spread over the frames either side.
    expect(Math.abs(big.step)).toBeGreaterThanOrEqual(0.9 * Math.abs(after - before));
    expect(after - before).toBeGreaterThan(300); // from around the first shot's face (x 200-300) to around the second's (760-660)
  });

  it(`within each shot the crop moves at most ${MAX_STEP.toFixed(1)} output pixels per 1/30 s`, () => {
    const c = two.shotFrames[1]!;
    // Output pixels per 1/30 s.
    const steps = cropX.slice(1).map((x, i) => ({ frame: i + 1, px: (Math.abs(x - cropX[i]!) * K * FPS) / 30 }));
    const inShot = steps.filter((s) => s.frame !== c);
    const worst = inShot.reduce((a, b) => (b.px > a.px ? b : a));
    console.log(
      `two shots: largest in-shot crop step ${worst.px.toFixed(2)} output px per 1/30 s (${((worst.px * 30) / FPS).toFixed(2)} in its 1/25 s frame) at frame ${worst.frame}`,
    );
    console.log(`two shots: crop left edge (source px) by frame: ${cropX.map((x, i) => `${i}:${x.toFixed(1)}`).join(' ')}`);
    expect(inShot.filter((s) => s.px > MAX_STEP).map((s) => `frame ${s.frame}: ${s.px.toFixed(1)} px`)).toEqual([]);
  });
});

/** The sampled frames (every EVERY-th) of a 540x960 output, rgb24. */
const sampled = (video: string) => rgbFrames(video, { ...OUT, every: EVERY });

describe('captions that keep clear (540x960 subject: safeArea tiktok + placement auto + subtitles both, against fixed)', () => {
  const WIDE = { font: { size: 9 } };
  let clean: Buffer[];
  let faces: Box[];
  let auto: Burned;
  let fixed: Burned;
  let autoMasks: Uint8Array[];
  let fixedMasks: Uint8Array[];

  beforeAll(async () => {
    // The captions-free reference: the same rendition with the captions only as a track.
    const reference = await burn(one, 'reference.mp4', { resolution: OUT, reframe: 'subject', subtitles: 'track' });
    // Karaoke's text at 9% of the frame's short side (7% by default): lines up to the generic
    // margins' full width (70-470 of 540), which reaches TikTok's button column (458-540).
    auto = await burn(one, 'auto.mp4', { resolution: OUT, reframe: 'subject', safeArea: 'tiktok', placement: 'auto', subtitles: 'both', style: WIDE });
    fixed = await burn(one, 'fixed.mp4', { resolution: OUT, reframe: 'subject', style: WIDE });
    clean = await sampled(reference.video);
    const t = await faceTrack(reference.video, one);
    faces = t.boxes.filter((_, i) => i % EVERY === 0);
    autoMasks = (await sampled(auto.video)).map((f, i) => captionMask(f, clean[i]!, OUT.width, OUT.height));
    fixedMasks = (await sampled(fixed.video)).map((f, i) => captionMask(f, clean[i]!, OUT.width, OUT.height));
    const show = (masks: Uint8Array[]) => masks.map((m) => `${m.reduce((a, b) => a + b, 0)}${JSON.stringify(maskBounds(m, OUT.width))}`).join(' ');
    console.log(`caption pixels per sampled frame, auto: ${show(autoMasks)}`);
    console.log(`caption pixels per sampled frame, fixed: ${show(fixedMasks)}`);
  }, 600_000);

  it('the captions are burned (both): caption pixels in most sampled frames, and a mov_text track', async () => {
    expect(clean.length).toBe(FRAMES / EVERY);
    const drawn = autoMasks.filter((m) => m.reduce((a, b) => a + b, 0) > 500).length;
    expect(drawn).toBeGreaterThan(autoMasks.length / 2);
    const { streams } = await probeStreams(auto.video);
    expect(streams.map((s) => s.codec_name)).toContain('mov_text');
  });

  it('safeArea tiktok: no caption pixel inside the zones (scaled to 540x960) in any of the 35 sampled frames', () => {
    const zones = safeAreaZones('tiktok', OUT);
    const inZones = autoMasks.flatMap((m, i) =>
      zones.flatMap((z) => (countIn(m, OUT.width, z) > 0 ? [`frame ${i * EVERY} zone ${JSON.stringify(z)}: ${countIn(m, OUT.width, z)} px`] : [])),
    );
    // The fixed job without safeArea, the same text.
    const fixedIn = fixedMasks.reduce((a, m) => a + zones.reduce((s, z) => s + countIn(m, OUT.width, z), 0), 0);
    console.log(
      `tiktok zones ${JSON.stringify(zones)}: caption pixels inside, auto+tiktok ${inZones.length ? inZones.join('; ') : 'none'}; fixed without safeArea ${fixedIn}`,
    );
    expect(inZones).toEqual([]);
    // The same text without safeArea does reach into them: the test can tell.
    expect(fixedIn).toBeGreaterThan(NOISE_PIXELS);
  });

  it('placement auto: no caption pixel covers the face in any sampled frame, where fixed does', () => {
    const covering = (masks: Uint8Array[]) =>
      masks.flatMap((m, i) => (countIn(m, OUT.width, faces[i]!) > NOISE_PIXELS ? [`frame ${i * EVERY}: ${countIn(m, OUT.width, faces[i]!)} px`] : []));
    const fixedCovers = covering(fixedMasks);
    console.log(`face boxes (output px) ${JSON.stringify(faces[0])}; fixed covers the face in ${fixedCovers.length} of ${fixedMasks.length} sampled frames`);
    expect(covering(autoMasks)).toEqual([]);
    expect(fixedCovers.length).toBeGreaterThan(0);
  });
});

describe('three renditions and a poster from one job (subtitles track)', () => {
  const OUTPUTS = [
    { resolution: OUT, format: 'mp4', reframe: 'subject' },
    { resolution: SRC, format: 'webm' },
    { resolution: { width: 540, height: 540 }, format: 'mp4', reframe: 'subject' },
  ] as const;
  let job: any;
  let listing: ReturnType<typeof JobOutputsSchema.parse>;
  let files: string[];
  let bytes: Buffer[];
  let charged: number;

  beforeAll(async () => {
    const before = await farm.balance(accountId);
    const burned = await burn(one, 'multi-0.mp4', { outputs: OUTPUTS, poster: true, subtitles: 'track' });
    job = burned.job;
    charged = before - (await farm.balance(accountId));
    const res = await api('GET', `/v1/automation-jobs/${burned.id}/outputs`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    listing = JobOutputsSchema.parse(res.body);
    files = listing.outputs.map((o) => path.join(farm.dir, `multi-${o.index}.${o.format}`));
    bytes = await Promise.all(listing.outputs.map((o, i) => download(o.downloadUrl!, files[i]!)));
  }, 400_000);

  it("the job record keeps exactly the spec's keys: the first rendition's format, resolution and download; minutes charged once", async () => {
    expect(Object.keys(job).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    const record = JobRecordSchema.parse(job);
    expect(record.format).toBe('mp4');
    expect(record.resolution).toEqual(OUT);
    const first = Buffer.from(await (await fetch(record.downloadUrl!)).arrayBuffer());
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(first)).toBe(sha(bytes[0]!));
    expect(record.quotedSeconds).toBe(Math.ceil(one.durationSeconds));
    expect(charged).toBe(1); // a 7 s source: one minute, not one per rendition
  });

  it('GET .../outputs lists the three, each downloads with its size, format and resolution', async () => {
    expect(listing).toMatchObject({ jobId: job.id, safeArea: 'none', placement: 'fixed', subtitles: 'track' });
    expect(listing.outputs.map((o) => [o.index, o.format, o.reframe])).toEqual([
      [0, 'mp4', 'subject'],
      [1, 'webm', 'center'],
      [2, 'mp4', 'subject'],
    ]);
    for (const [i, o] of listing.outputs.entries()) {
      expect(o.resolution).toEqual(OUTPUTS[i]!.resolution);
      expect(o.requestedResolution).toEqual(OUTPUTS[i]!.resolution);
      expect(o.sizeBytes).toBe(bytes[i]!.length);
      expect(Date.parse(o.outputExpiresAt!)).toBeGreaterThan(Date.now());
      const p = await probeStreams(files[i]!);
      const video = p.streams.find((s) => s.codec_type === 'video')!;
      expect({ width: video.width, height: video.height }).toEqual(OUTPUTS[i]!.resolution);
      expect(video.codec_name).toBe(o.format === 'webm' ? 'vp9' : 'h264');
      expect(p.format).toContain(o.format === 'webm' ? 'webm' : 'mp4');
      expect(p.streams.map((s) => s.codec_name)).toContain(o.format === 'webm' ? 'webvtt' : 'mov_text');
    }
  });

  it("the poster is a JPEG of the first rendition's size, its frame with the caption drawn on", async () => {
    const poster = listing.poster!;
    expect(poster).not.toBeNull();
    const file = path.join(farm.dir, 'poster.jpg');
    const jpeg = await download(poster.downloadUrl, file);
    expect([...jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect(poster.sizeBytes).toBe(jpeg.length);
    expect({ width: poster.width, height: poster.height }).toEqual(OUT);
    const p = await probeStreams(file);
    expect(p.streams[0]).toMatchObject({ codec_name: 'mjpeg', ...OUT });
    expect(poster.at).toBeLessThanOrEqual(one.durationSeconds);
    // The rendition carries the captions only as a track: the poster's caption is drawn on its frame.
    const at = Math.min(FRAMES - 1, Math.round(poster.at * FPS));
    const frame = (await rgbFrames(files[0]!, { ...OUT, every: 1 }))[at]!;
    const mask = captionMask(await rgbImage(file), frame, OUT.width, OUT.height);
    const n = mask.reduce((a, b) => a + b, 0);
    console.log(`poster at ${poster.at} s: ${n} caption pixels ${JSON.stringify(maskBounds(mask, OUT.width))}`);
    expect(n).toBeGreaterThan(500);
  });

  it("the tracks' cues are the job's WebVTT and SRT exports, and track burns nothing", async () => {
    const vtt = await api('GET', `/v1/automation-jobs/${job.id}/transcript?format=vtt`);
    const srt = await api('GET', `/v1/automation-jobs/${job.id}/transcript?format=srt`);
    expect(vtt.status).toBe(200);
    expect(srt.status).toBe(200);
    const want = parseCues(vtt.body);
    expect(want.length).toBeGreaterThan(1);
    expect(parseCues(srt.body)).toEqual(want);
    for (const file of [files[0]!, files[1]!]) {
      const got = await subtitleCues(file);
      const show = (cues: typeof got) => cues.map((c) => `${c.start.toFixed(3)}-${c.end.toFixed(3)} ${JSON.stringify(c.text)}`).join(' | ');
      console.log(`${path.basename(file)} track: ${show(got)}\n  the VTT export: ${show(want)}`);
      expect(
        got.map((c) => c.text),
        file,
      ).toEqual(want.map((c) => c.text));
      got.forEach((c, i) => {
        expect(Math.abs(c.start - want[i]!.start)).toBeLessThanOrEqual(0.002);
        expect(Math.abs(c.end - want[i]!.end)).toBeLessThanOrEqual(0.002);
      });
    }
    // The 960x540 rendition is the source's picture: against the source, nothing drawn in any sampled frame.
    const src = await rgbFrames(one.file, { ...SRC, every: EVERY });
    const out = await rgbFrames(files[1]!, { ...SRC, every: EVERY });
    expect(out.length).toBe(src.length);
    const drawn = out.map((f, i) => captionMask(f, src[i]!, SRC.width, SRC.height).reduce((a, b) => a + b, 0));
    console.log(`track only: pixels differing from the source per sampled frame ${drawn.join(' ')}`);
    expect(drawn.filter((n) => n > NOISE_PIXELS)).toEqual([]);
  });
});

describe('bad input is refused at creation with the documented error body', () => {
  // Each problem at its path (docs/api.md): 400 invalid_request, details [{ path, message }].
  const cases: [string, Record<string, unknown>, string][] = [
    ['5 outputs', { outputs: [360, 480, 540, 720, 1080].map((w) => ({ resolution: { width: w, height: w } })) }, 'outputs'],
    ['an odd size', { outputs: [{ resolution: { width: 541, height: 960 } }] }, 'outputs.0.resolution.width'],
    ['reframe on an overlay', { overlay: true, format: 'webm', reframe: 'subject', resolution: OUT }, 'reframe'],
    ['an unknown safeArea', { safeArea: 'instagram' }, 'safeArea'],
  ];
  for (const [what, body, where] of cases) {
    it(what, async () => {
      const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'x.mp4', sizeBytes: 10 });
      const res = await api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: 'karaoke', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const { error } = ErrorBodySchema.parse(res.body);
      expect(error.code).toBe('invalid_request');
      expect((error.details as { path: string }[]).map((d) => d.path)).toContain(where);
    });
  }
});
