import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptRecord } from '@captionfarm/contracts';
import { createClient, type CaptionfarmClient } from '../../packages/sdk/src/index.ts';
import { makeClip, rawFrame, startFarm, type Farm } from './e2e-harness.ts';

/**
 * The words the speaker meant, through the public API with a real agent (whisper.cpp base,
 * ffmpeg): a brand name base misspells is spelled as written once it is in the job's
 * `vocabulary`, and a `replacements` pair is in the transcript, the SRT and the pixels.
 */
const W = 360;
const H = 640;
const SPEECH = 'Welcome to Captionfarm. Captionfarm burns your captions in minutes, and Zorblax pays the bill.';
let farm: Farm;
let cf: CaptionfarmClient;
let clip: string;

beforeAll(async () => {
  farm = await startFarm();
  await farm.startAgent({ name: 'words' });
  const { key } = await farm.account('pro', 'words');
  cf = createClient({ baseUrl: farm.url, apiKey: key });
  // A plain dark background: word-pop's green active word is the only green in the frame.
  clip = await makeClip(farm.dir, 'brand.mp4', {
    width: W,
    height: H,
    seconds: 8,
    video: `color=c=0x303030:s=${W}x${H}:r=25:d=8`,
    speech: SPEECH,
    speechRate: 150,
  });
}, 240_000);
afterAll(async () => {
  await farm?.close();
});

async function burn(extra: {
  vocabulary?: string[];
  replacements?: { from: string; to: string }[];
}): Promise<{ id: string; video: string; words: TranscriptRecord['words'] }> {
  const upload = await cf.uploadFile(clip);
  const created = await cf.createJob({ uploadId: upload.uploadId, templateId: 'word-pop', language: 'en', ...extra });
  const done = await cf.waitForJob(created.id, { poll: { initialDelayMs: 200, maxDelayMs: 1000 } });
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  const video = path.join(farm.dir, `${created.id}.mp4`);
  await cf.downloadOutput(done, video);
  return { id: created.id, video, words: (await cf.getTranscript(created.id)).words };
}

/** Width of word-pop's active-word green (#3CFF6B) in the frame at `t` seconds. */
async function greenWidth(video: string, t: number): Promise<number> {
  const rgb = await rawFrame(video, t, 'rgb24');
  let minX = W;
  let maxX = -1;
  for (let i = 0; i + 2 < rgb.length; i += 3) {
    const [r, g, b] = [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
    if (g > 170 && r < 150 && b < 180 && g - r > 60) {
      const x = (i / 3) % W;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
    }
  }
  return maxX >= minX ? maxX - minX + 1 : 0;
}

const text = (words: { text: string }[]) => words.map((w) => w.text).join(' ');

describe('vocabulary and replacements, end to end', () => {
  let plain: Awaited<ReturnType<typeof burn>>;

  it('base misspells the brand names without a vocabulary and spells them as written with one', async () => {
    plain = await burn({});
    console.log(`without vocabulary: ${text(plain.words)}`);
    expect(text(plain.words)).not.toMatch(/Captionfarm|Zorblax/);
    expect(text(plain.words)).toMatch(/caption farm/i); // what base hears instead

    const told = await burn({ vocabulary: ['Captionfarm', 'Zorblax'] });
    console.log(`with vocabulary: ${text(told.words)}`);
    expect(text(told.words).match(/Captionfarm/g)).toHaveLength(2);
    expect(text(told.words)).toMatch(/Zorblax/);
  });

  it('a replacement is in the transcript, the SRT and the pixels, with the timings of the words it replaced', async () => {
    const fixed = await burn({ replacements: [{ from: 'caption farm', to: 'Captionfarm' }] });
    console.log(`with the replacement: ${text(fixed.words)}`);
    expect(text(fixed.words).match(/Captionfarm/g)).toHaveLength(2);
    expect(text(fixed.words)).not.toMatch(/caption farm/i);
    const srt = await cf.getTranscript(fixed.id, { format: 'srt' });
    expect(srt).toContain('Captionfarm');
    expect(srt).not.toMatch(/caption farm/i);

    // The two words "Caption Farm" became one word from the first's start to the second's end.
    const i = plain.words.findIndex((w, k) => /^caption$/i.test(w.text) && /^farm/i.test(plain.words[k + 1]?.text ?? ''));
    const one = fixed.words.find((w) => w.text.startsWith('Captionfarm'))!;
    expect(one.start).toBe(plain.words[i]!.start);
    expect(one.end).toBe(plain.words[i + 1]!.end);

    // Pixels: while "Caption" is spoken, the recognized video highlights "Caption" alone, the
    // replaced one all of "Captionfarm".
    const at = plain.words[i]!.start + Math.min(0.5 * (plain.words[i]!.end - plain.words[i]!.start), 0.2);
    const [before, after] = await Promise.all([greenWidth(plain.video, at), greenWidth(fixed.video, at)]);
    console.log(`active word width at ${at.toFixed(2)} s: ${before} px recognized, ${after} px replaced`);
    expect(before).toBeGreaterThan(20);
    expect(after / before).toBeGreaterThan(1.3);
  });
});
