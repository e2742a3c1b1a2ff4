import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBuiltinTemplate, type Rect } from '@captionfarm/captions';
import { TranscriptRecordSchema, type Word } from '@captionfarm/contracts';
import { createBandPainter } from '@captionfarm/renderer';
import { makeClip, rawFrame, run, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

/**
 * The product's promise, checked in the pixels of a video made through the public API by a real
 * agent (whisper.cpp base, canvas, ffmpeg): a spoken clip with 1.5 s of silence first, burned with
 * the karaoke template, compared frame by frame with a plain re-encode of the same source.
 * - Before the first word the caption band matches the plain re-encode; while words are spoken it
 *   does not.
 * - The word lit in karaoke yellow at a time is the transcript's word for that time: the yellow
 *   that the plain re-encode does not have covers that word's box (laid out by the renderer from
 *   the transcript export), the words after it on its page have none yet, and the rest of the band
 *   has none at all. Karaoke keeps spoken words yellow, so only the words of the page on screen are
 *   compared: the next page's words sit where this page's words are.
 */

const W = 432;
const H = 768;
const FPS = 25;
const LEAD = 1.5;
const SPEECH = 'Captions make every video easier to follow.';

let farm: Farm;
let output: string;
let plain: string;
let words: Word[];
let painter: ReturnType<typeof createBandPainter>;

beforeAll(async () => {
  farm = await startFarm();
  // A moving test pattern, so "matches the re-encode" is not a flat colour matching itself; in
  // grey, so the only yellow in the frame is the captions'.
  const source = await makeClip(farm.dir, 'source.mp4', {
    width: W,
    height: H,
    seconds: 6,
    video: `testsrc2=s=${W}x${H}:r=${FPS}:d=6,format=gray`,
    speech: SPEECH,
    speechRate: 130,
    leadSeconds: LEAD,
  });
  plain = path.join(farm.dir, 'plain.mp4');
  await run('ffmpeg', ['-y', '-loglevel', 'error', '-i', source, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-pix_fmt', 'yuv420p', '-an', plain]);

  await farm.startAgent();
  const { api } = await farm.account('pro', 'pixels');
  const created = await submitUpload(api, await readFile(source), { templateId: 'karaoke', language: 'en' });
  const { job } = await watchJob(api, created.id, terminal);
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
  expect(job.resolution).toEqual({ width: W, height: H });
  output = path.join(farm.dir, 'captioned.mp4');
  await writeFile(output, Buffer.from(await (await fetch(job.downloadUrl)).arrayBuffer()));
  const t = await api('GET', `/v1/automation-jobs/${created.id}/transcript`);
  expect(t.status).toBe(200);
  words = TranscriptRecordSchema.parse(t.body).words.map((w) => ({ ...w, confidence: 1 }));
  painter = createBandPainter({ words, template: getBuiltinTemplate('karaoke')!, width: W, height: H, fps: FPS });
}, 400_000);
afterAll(async () => {
  await farm?.close();
});

async function frame(video: string, t: number): Promise<Buffer> {
  const stdout = await rawFrame(video, t, 'rgb24');
  expect(stdout.length).toBe(W * H * 3);
  return stdout;
}

/** PSNR (dB) of two RGB frames over a rectangle. */
function psnr(a: Buffer, b: Buffer, r: Rect): number {
  let se = 0;
  let n = 0;
  for (let y = Math.max(0, r.y); y < Math.min(H, r.y + r.height); y++) {
    for (let x = Math.max(0, r.x); x < Math.min(W, r.x + r.width); x++) {
      for (let c = 0; c < 3; c++) {
        const d = a[(y * W + x) * 3 + c]! - b[(y * W + x) * 3 + c]!;
        se += d * d;
        n++;
      }
    }
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / n));
}

const isYellow = (f: Buffer, i: number) => f[i]! > 190 && f[i + 1]! > 160 && f[i + 2]! < 110 && f[i]! - f[i + 2]! > 120;

const inside = (r: Rect, x: number, y: number) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height;

/** Pixels that are karaoke yellow in the captioned frame but not in the plain one, inside `r` and outside every rect of `except`. */
function addedYellow(captioned: Buffer, base: Buffer, r: Rect, except: Rect[] = []): number {
  let n = 0;
  for (let y = Math.max(0, Math.floor(r.y)); y < Math.min(H, Math.ceil(r.y + r.height)); y++) {
    for (let x = Math.max(0, Math.floor(r.x)); x < Math.min(W, Math.ceil(r.x + r.width)); x++) {
      const i = (y * W + x) * 3;
      if (isYellow(captioned, i) && !isYellow(base, i) && !except.some((e) => inside(e, x, y))) n++;
    }
  }
  return n;
}

/**
 * Where word `k` is drawn: the ink of its glyphs (i-dots and accents rise above the cap height),
 * from the renderer's own layout of the transcript, with a margin for antialiasing and the
 * video's half-resolution chroma.
 */
function wordBox(k: number): Rect {
  const { ink } = painter.layout.units[k]!;
  return { x: ink.x - 2, y: ink.y - 2, width: ink.width + 4, height: ink.height + 4 };
}

describe('captions in the pixels', () => {
  it('the caption band matches a plain re-encode before the first word and differs while words are spoken', async () => {
    const band = painter.band;
    expect(words[0]!.start).toBeGreaterThan(LEAD - 0.3); // whisper saw the silence too
    for (const t of [0.3, 0.9]) {
      const db = psnr(await frame(output, t), await frame(plain, t), band);
      expect(db, `t=${t}: nothing drawn yet`).toBeGreaterThan(32);
    }
    for (const w of words.slice(0, 4)) {
      const t = (w.start + w.end) / 2;
      const db = psnr(await frame(output, t), await frame(plain, t), band);
      expect(db, `t=${t.toFixed(2)} ("${w.text}" spoken): captions drawn`).toBeLessThan(24);
    }
  });

  it("the word lit in yellow is the transcript's word for that time", async () => {
    // Recognition accuracy is measured elsewhere (bench:accuracy); here the words only need to be
    // this clip's words, so the probes below look at real captions.
    const heard = words.map((w) => w.text.toLowerCase().replace(/[^a-z]/g, ''));
    expect(heard).toEqual(expect.arrayContaining(['captions', 'video', 'follow']));
    // One unit per word (no word split or dropped), so unit k is where word k is drawn.
    const { units, pages } = painter.layout;
    expect(units.map((u) => u.wordIndex)).toEqual(words.map((_, i) => i));
    let probed = 0;
    for (let k = 0; k < words.length; k++) {
      const w = words[k]!;
      if (w.end - w.start < 0.16) continue; // too short to sample a frame well inside it
      const t = (w.start + w.end) / 2;
      const [out, base] = [await frame(output, t), await frame(plain, t)];
      // Karaoke: the word being spoken and the words before it on its page are yellow, the
      // words still to come on that page are white, and there is no yellow anywhere else in the
      // band (another page, a word off by one, a stale frame).
      const page = pages[units[k]!.page]!;
      const box = wordBox(k);
      expect(addedYellow(out, base, box), `"${w.text}" at ${t.toFixed(2)} s is lit`).toBeGreaterThan(box.width * box.height * 0.1);
      for (const j of page.units.filter((j) => j > k)) {
        expect(addedYellow(out, base, wordBox(j)), `"${words[j]!.text}" is not lit yet while "${w.text}" is spoken`).toBeLessThan(15);
      }
      const lit = page.units.filter((j) => j <= k).map(wordBox);
      expect(addedYellow(out, base, painter.band, lit), `no yellow but the words spoken so far at ${t.toFixed(2)} s`).toBeLessThan(15);
      probed++;
    }
    expect(probed).toBeGreaterThanOrEqual(4);
  });
});
