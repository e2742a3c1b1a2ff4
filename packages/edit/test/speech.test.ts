import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { espeakPath } from '@captionfarm/process/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planEdit, voicedRegions } from '../src/index.ts';
import { readWavSamples } from '../src/wav.ts';

/** The media tools, by the path the process package resolves (FFMPEG_PATH, ESPEAK_NG_PATH) or on PATH (sox). */
const run = (file: string, args: string[]) => execFileSync(file, args);

// Real speech (espeak-ng, joined with sox): "So I think" [0.6 s] "umm" [0.6 s] "this is a great
// render farm", with 1 s of silence around. Each part is trimmed to its audible bounds first, so
// the test knows where each sound is.

const dir = mkdtempSync(join(tmpdir(), 'edit-speech-'));
const sox = (...args: string[]) => run('sox', args);
const seconds = (path: string) => Number(run('soxi', ['-D', path]).toString());

function say(name: string, text: string): string {
  const raw = join(dir, `${name}-raw.wav`);
  const out = join(dir, `${name}.wav`);
  run(espeakPath(), ['-w', raw, text]);
  // Trim espeak's own silence at both ends (below 1% of full scale), as 16 kHz mono 16-bit.
  sox(raw, '-r', '16000', '-c', '1', '-b', '16', out, 'silence', '1', '0.01', '1%', 'reverse', 'silence', '1', '0.01', '1%', 'reverse');
  return out;
}

let spans: { a: [number, number]; um: [number, number]; b: [number, number] };
let clip: { samples: Float32Array; sampleRate: number; seconds: number };

beforeAll(async () => {
  const a = say('a', 'So I think');
  const um = say('um', 'umm');
  const b = say('b', 'this is a great render farm');
  const gap1 = join(dir, 'gap1.wav');
  const gap06 = join(dir, 'gap06.wav');
  sox('-n', '-r', '16000', '-c', '1', '-b', '16', gap1, 'trim', '0', '1');
  sox('-n', '-r', '16000', '-c', '1', '-b', '16', gap06, 'trim', '0', '0.6');
  const path = join(dir, 'clip.wav');
  sox(gap1, a, gap06, um, gap06, b, gap1, path);
  const [la, lu, lb] = [seconds(a), seconds(um), seconds(b)];
  spans = { a: [1, 1 + la], um: [1.6 + la, 1.6 + la + lu], b: [2.2 + la + lu, 2.2 + la + lu + lb] };
  const { samples, sampleRate } = await readWavSamples(path);
  clip = { samples, sampleRate, seconds: samples.length / sampleRate };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const overlap = (r: { start: number; end: number }, [a, b]: [number, number]) => Math.max(0, Math.min(r.end, b) - Math.max(r.start, a));

describe('on real speech (espeak-ng)', () => {
  it('voicedRegions finds the spoken "umm" within 30 ms of its edges', () => {
    const regions = voicedRegions(clip.samples, clip.sampleRate);
    const um = regions.filter((r) => overlap(r, spans.um) > 0);
    expect(um).toHaveLength(1);
    expect(Math.abs(um[0]!.start - spans.um[0])).toBeLessThanOrEqual(0.03);
    expect(Math.abs(um[0]!.end - spans.um[1])).toBeLessThanOrEqual(0.03);
  });

  it('fillers safe cuts the "umm" no word covers (voiced-gap), and keeps words whole even when their recognized times are 100 ms short', () => {
    const voiced = voicedRegions(clip.samples, clip.sampleRate);
    // As whisper might time them: each phrase ends 100 ms early, starts 60 ms late; no word for "umm".
    const words = [
      { text: 'So I think', start: spans.a[0] + 0.06, end: spans.a[1] - 0.1 },
      { text: 'this is a great render farm.', start: spans.b[0] + 0.06, end: spans.b[1] - 0.1 },
    ];
    const edit = { silences: 'fast', fillers: 'safe', zoom: 'off', keep: null } as const;
    const { plan } = planEdit({ words, voiced, sourceSeconds: clip.seconds, fps: 25, language: 'en', edit, profanity: 'off', profanityWords: [] });
    const gaps = plan.cuts.filter((c) => c.reason === 'voiced-gap');
    expect(gaps).toHaveLength(1);
    // At most one frame of the "umm" survives the frame alignment at either edge.
    const umKept = plan.keep.reduce((s, r) => s + overlap(r, spans.um), 0);
    expect(umKept).toBeLessThanOrEqual(0.04 * 2);
    for (const span of [spans.a, spans.b]) {
      expect(plan.keep.some((r) => r.start <= span[0] + 0.005 && span[1] - 0.005 <= r.end)).toBe(true);
    }
    const off = planEdit({
      words,
      voiced,
      sourceSeconds: clip.seconds,
      fps: 25,
      language: 'en',
      edit: { ...edit, fillers: 'off' },
      profanity: 'off',
      profanityWords: [],
    });
    expect(off.plan.cuts.map((c) => c.reason)).not.toContain('voiced-gap');
  });
});
