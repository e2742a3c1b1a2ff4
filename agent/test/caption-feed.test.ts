import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bandForAnyWords,
  builtinTemplates,
  createApproxMeasurer,
  getBuiltinTemplate,
  layoutCaptions,
  settledUntil,
  type Template,
} from '@captionfarm/captions';
import type { Word } from '@captionfarm/contracts';
import { BandOverflow, CaptionsChanged, createBandPainter, renderVideo } from '@captionfarm/renderer';
import { createCaptionFeed, samePage } from '../src/caption-feed.ts';
import { makeClip, run } from './e2e-harness.ts';

/**
 * Overlapped stages: a render that starts with the first final words and follows recognition
 * must burn exactly what a render with every word known from the start burns.
 */

const W = 360;
const H = 640;
const FPS = 25;
const SECONDS = 12;

/** Three sentences with pauses, the second with a comma; a keyword phrase across a sentence break. */
function wordsOf(text: string, from: number, gap = 0.32): Word[] {
  let t = from;
  return text.split(' ').map((w) => {
    const word = { text: w, start: Math.round(t * 1000) / 1000, end: Math.round((t + 0.26) * 1000) / 1000, confidence: 1 };
    t += gap;
    return word;
  });
}
const CHUNKS: Word[][] = [
  wordsOf('Captions make every video easier to follow for everyone.', 0.4),
  wordsOf('Burned in, they play on every phone and every feed.', 4.0),
  wordsOf('New York loves them, and so does the rest of the world.', 7.9),
];
const ALL = CHUNKS.flat();

let dir: string;
let source: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-feed-'));
  source = await makeClip(dir, 'source.mp4', { width: W, height: H, seconds: SECONDS, fps: FPS });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function frameHashes(file: string): Promise<string[]> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:v', '-f', 'framemd5', '-']);
  return stdout
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(',').at(-1)!.trim());
}

describe('createCaptionFeed', () => {
  it('a render fed chunk by chunk, starting before the words are known, burns the same frames as one given every word', async () => {
    const template = getBuiltinTemplate('word-pop')!;
    const fonts = new Map();
    const whole = path.join(dir, 'whole.mov');
    await renderVideo({
      input: source,
      output: whole,
      painter: (f) => createBandPainter({ words: ALL, template, width: f.width, height: f.height, fps: f.fps }),
      format: 'mov',
      overlay: true,
      quality: 'low',
    });

    const feed = createCaptionFeed({ template, fonts });
    const streamed = path.join(dir, 'streamed.mov');
    const percents: number[] = [];
    const rendering = renderVideo({
      input: source,
      output: streamed,
      captionStream: (frame) => feed.stream(frame),
      format: 'mov',
      overlay: true,
      quality: 'low',
      onProgress: (p) => percents.push(p),
    });
    const outcome = rendering.then(
      () => null,
      (err: unknown) => err,
    );
    // Recognition: the first chunk's words, then (once the encode has started on them, so it
    // provably ran before the rest existed) the second and the third, each with the start of the next.
    feed.push(CHUNKS[0]!, CHUNKS[1]![0]!.start);
    for (const end = Date.now() + 60_000; !(percents.at(-1)! > 0); await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > end) throw new Error('the render made no progress on the first chunk in 60 s');
    }
    feed.push([...CHUNKS[0]!, ...CHUNKS[1]!], CHUNKS[2]![0]!.start);
    // The first chunk's captions are final up to 3.9 s of 12 (32%): past 40% the render is on the second's.
    for (const end = Date.now() + 60_000; !(percents.at(-1)! >= 40); await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > end) throw new Error('the render made no progress on the second chunk in 60 s');
    }
    const atSecond = percents.at(-1)!;
    feed.push(ALL, Infinity);
    expect(await outcome).toBeNull();
    expect(atSecond).toBeLessThan(100);
    const [a, b] = await Promise.all([frameHashes(whole), frameHashes(streamed)]);
    expect(a.length).toBe(SECONDS * FPS);
    expect(b).toEqual(a);
    // Not a blank overlay matching a blank overlay: the captions change over the video.
    expect(new Set(a).size).toBeGreaterThan(20);
  }, 120_000);

  it('stops the render with the recognition error when recognition fails', async () => {
    const feed = createCaptionFeed({ template: getBuiltinTemplate('karaoke')!, fonts: new Map() });
    const rendering = renderVideo({ input: source, output: path.join(dir, 'failed.mp4'), captionStream: (f) => feed.stream(f), format: 'mp4', quality: 'low' });
    rendering.catch(() => undefined);
    feed.push(CHUNKS[0]!, CHUNKS[1]![0]!.start);
    await new Promise((r) => setTimeout(r, 300));
    const failure = new Error('whisper crashed');
    feed.fail(failure);
    await expect(rendering).rejects.toBe(failure);
  }, 60_000);

  it('says CaptionsChanged when a page already painted would change, and BandOverflow when words outgrow the band', async () => {
    const template = getBuiltinTemplate('karaoke')!;
    const feed = createCaptionFeed({ template, fonts: new Map() });
    const stream = feed.stream({ width: W, height: H, fps: FPS });
    // Claimed final up to 3.9 s, then a word inside that time turns up: the first page changes.
    feed.push(CHUNKS[0]!, 3.9);
    const first = await stream.next();
    expect(first.until).toBeGreaterThan(0);
    feed.push([{ ...CHUNKS[0]![0]!, text: 'Subtitles' }, ...CHUNKS[0]!.slice(1), ...CHUNKS[1]!], 7.9);
    await expect(stream.next()).rejects.toBeInstanceOf(CaptionsChanged);

    const tall = createCaptionFeed({ template, fonts: new Map() });
    const s2 = tall.stream({ width: W, height: H, fps: FPS });
    // Stacked marks far above any font's ascent.
    tall.push([{ text: `A${'\u0301'.repeat(40)}`, start: 0.5, end: 1, confidence: 1 }], Infinity);
    await expect(s2.next()).rejects.toBeInstanceOf(BandOverflow);
  });
});

describe('settledUntil and bandForAnyWords', () => {
  const measurer = createApproxMeasurer();
  const layout = (template: Template, words: Word[]) => layoutCaptions({ words, template, width: 1080, height: 1920, measurer });

  it('the pages before settledUntil are the same whatever words come after it', () => {
    for (const template of builtinTemplates) {
      let known: Word[] = [];
      for (let i = 0; i < CHUNKS.length - 1; i++) {
        known = [...known, ...CHUNKS[i]!];
        const partial = layout(template, known);
        const until = settledUntil(partial, template, known, CHUNKS[i + 1]![0]!.start);
        expect(until, template.id).toBeGreaterThan(CHUNKS[i]![0]!.start);
        const full = layout(template, ALL);
        const settled = partial.pages.filter((p) => p.start < until);
        expect(settled.length, template.id).toBeGreaterThan(0);
        for (const page of settled) expect(samePage(partial, full, page.index, until), `${template.id} page ${page.index}`).toBe(true);
        // The check is not blind: a page's text moving is seen.
        const moved = { ...full, units: full.units.map((u, k) => (k === settled[0]!.units[0] ? { ...u, x: u.x + 1 } : u)) };
        expect(samePage(partial, moved, settled[0]!.index, until)).toBe(false);
      }
      expect(settledUntil(layout(template, ALL), template, ALL, Infinity)).toBe(Infinity);
    }
  });

  it('waits for a keyword of several words that a phrase break does not stop', () => {
    const template = { ...getBuiltinTemplate('keyword-emphasis')!, keywords: ['new york loves'] };
    const known = [...CHUNKS[0]!, ...CHUNKS[1]!, ...CHUNKS[2]!.slice(0, 2)];
    const until = settledUntil(layout(template, known), template, known, CHUNKS[2]![2]!.start);
    // "New York" may still become a keyword: its page is not settled.
    expect(until).toBeLessThanOrEqual(CHUNKS[2]![0]!.start);
  });

  it("the band for any words holds every built-in template's band for real words, at several sizes", () => {
    const sentences = [ALL, wordsOf('Ça déjà vu? Ünïcödé ÅÉÎ quickly jumps 123 over the lazy dog 🔥 fire', 0.2)];
    for (const template of builtinTemplates) {
      for (const [width, height] of [
        [1080, 1920],
        [1920, 1080],
        [720, 720],
      ] as const) {
        const any = bandForAnyWords({ template, width, height, measurer });
        for (const words of sentences) {
          const band = layoutCaptions({ words, template, width, height, measurer }).band;
          expect(
            band.x >= any.x && band.y >= any.y && band.x + band.width <= any.x + any.width && band.y + band.height <= any.y + any.height,
            `${template.id} ${width}x${height}: ${JSON.stringify(band)} in ${JSON.stringify(any)}`,
          ).toBe(true);
        }
      }
    }
  });
});
