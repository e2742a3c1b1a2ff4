import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { afterAll, describe, expect, it } from 'vitest';
import { voicedRegions } from '../src/index.ts';
import { readWavSamples } from '../src/wav.ts';
import { seeded } from './helpers.ts';

/** The media tools, by the path the process package resolves (FFMPEG_PATH, ESPEAK_NG_PATH) or on PATH (sox). */
const run = (file: string, args: string[]) => execFileSync(file, args);

const RATE = 16_000;

/** Noise at about -46 dBFS with 440 Hz bursts (amplitude 0.3) over the given spans. */
function burstsInNoise(seconds: number, bursts: readonly [number, number][], seed = 1): Float32Array {
  const random = seeded(seed);
  const out = new Float32Array(Math.round(seconds * RATE));
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    const on = bursts.some(([a, b]) => t >= a && t < b);
    out[i] = (random() - 0.5) * 0.02 + (on ? 0.3 * Math.sin(2 * Math.PI * 440 * t) : 0);
  }
  return out;
}

describe('voicedRegions', () => {
  it('finds sine bursts in noise within 30 ms of their edges', () => {
    const bursts: [number, number][] = [
      [0.5, 0.9],
      [1.5, 1.62],
      [2.0, 2.6],
      [3.1, 4.25],
    ];
    const regions = voicedRegions(burstsInNoise(5, bursts), RATE);
    expect(regions).toHaveLength(bursts.length);
    regions.forEach((r, i) => {
      expect(Math.abs(r.start - bursts[i]![0])).toBeLessThanOrEqual(0.03);
      expect(Math.abs(r.end - bursts[i]![1])).toBeLessThanOrEqual(0.03);
    });
  });

  it('reaches back over a quiet onset (hysteresis): a soft 100 ms lead-in before a loud burst belongs to it', () => {
    const samples = burstsInNoise(3, [[1.1, 1.5]]);
    for (let i = Math.round(1.0 * RATE); i < 1.1 * RATE; i++) samples[i]! += 0.018 * Math.sin((2 * Math.PI * 440 * i) / RATE);
    const [region] = voicedRegions(samples, RATE);
    expect(region!.start).toBeGreaterThanOrEqual(0.97);
    expect(region!.start).toBeLessThanOrEqual(1.03);
    expect(region!.end).toBeCloseTo(1.5, 1);
  });

  it('merges bursts less than 100 ms apart and drops blobs under 60 ms', () => {
    const regions = voicedRegions(
      burstsInNoise(4, [
        [0.5, 0.8],
        [0.86, 1.2],
        [2.0, 2.03],
        [3.0, 3.3],
      ]),
      RATE,
    );
    expect(regions.map((r) => [Math.round(r.start * 10) / 10, Math.round(r.end * 10) / 10])).toEqual([
      [0.5, 1.2],
      [3.0, 3.3],
    ]);
  });

  it('finds nothing in silence or in steady noise', () => {
    expect(voicedRegions(new Float32Array(RATE * 2), RATE)).toEqual([]);
    expect(voicedRegions(burstsInNoise(2, []), RATE)).toEqual([]);
    expect(voicedRegions(new Float32Array(0), RATE)).toEqual([]);
  });
});

/** A WAV file by hand: fmt, a LIST chunk of odd size (padded) before the data, 16-bit PCM, interleaved channels. */
function wav(channels: number[][], rate: number, options: { dataSize?: number; float?: boolean } = {}): Buffer {
  const frames = channels[0]!.length;
  const bytes = options.float ? 4 : 2;
  const data = Buffer.alloc(frames * channels.length * bytes);
  for (let i = 0; i < frames; i++) {
    channels.forEach((ch, c) => {
      const at = (i * channels.length + c) * bytes;
      if (options.float) data.writeFloatLE(ch[i]!, at);
      else data.writeInt16LE(Math.round(ch[i]! * 32767), at);
    });
  }
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(options.float ? 3 : 1, 8);
  fmt.writeUInt16LE(channels.length, 10);
  fmt.writeUInt32LE(rate, 12);
  fmt.writeUInt32LE(rate * channels.length * bytes, 16);
  fmt.writeUInt16LE(channels.length * bytes, 20);
  fmt.writeUInt16LE(bytes * 8, 22);
  const list = Buffer.concat([Buffer.from('LIST', 'latin1'), Buffer.from([5, 0, 0, 0]), Buffer.from('INFOx', 'latin1'), Buffer.from([0])]);
  const head = Buffer.alloc(8);
  head.write('data', 0, 'latin1');
  head.writeUInt32LE(options.dataSize ?? data.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), fmt, list, head, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

describe('readWavSamples', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edit-wav-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const left = [0, 0.5, -0.5, 0.25, -1];
  const right = [0.9, 0.9, 0.9, 0.9, 0.9];

  it('reads 16-bit PCM past a LIST chunk of odd size, the first channel of a stereo file', async () => {
    const path = join(dir, 'stereo.wav');
    writeFileSync(path, wav([left, right], 22_050));
    const { samples, sampleRate } = await readWavSamples(path);
    expect(sampleRate).toBe(22_050);
    expect(Array.from(samples)).toEqual(left.map((x) => Math.round(x * 32767) / 32768));
  });

  it('reads 32-bit float, and a data chunk with an unset size (streamed) to the end of the file', async () => {
    const floats = join(dir, 'float.wav');
    writeFileSync(floats, wav([left], RATE, { float: true }));
    expect(Array.from((await readWavSamples(floats)).samples)).toEqual(left.map((x) => Math.fround(x)));
    const streamed = join(dir, 'streamed.wav');
    writeFileSync(streamed, wav([left], RATE, { dataSize: 0xffffffff }));
    expect((await readWavSamples(streamed)).samples).toHaveLength(left.length);
  });

  it("reads sox's 24-bit and 32-bit PCM", async () => {
    for (const bits of ['24', '32']) {
      const path = join(dir, `sox${bits}.wav`);
      run('sox', ['-n', '-r', '16000', '-c', '1', '-b', bits, path, 'synth', '0.5', 'sine', '440', 'vol', '0.5']);
      const { samples, sampleRate } = await readWavSamples(path);
      expect(sampleRate).toBe(16_000);
      expect(samples).toHaveLength(8000);
      expect(samples.reduce((m, x) => Math.max(m, Math.abs(x)), 0)).toBeCloseTo(0.5, 2);
    }
  });

  it('refuses what is not a WAV, or an unsupported sample format, saying so', async () => {
    const text = join(dir, 'x.wav');
    writeFileSync(text, 'hello world, no riff here');
    await expect(readWavSamples(text)).rejects.toThrow(/not a WAV/);
    const eight = join(dir, 'u12.wav');
    const b = wav([left], RATE);
    b.writeUInt16LE(12, 34);
    writeFileSync(eight, b);
    await expect(readWavSamples(eight)).rejects.toThrow(/12-bit samples is not supported/);
  });

  it("reads ffmpeg's WAV (LIST chunk, 16 kHz mono) and voicedRegions finds its tone", async () => {
    const path = join(dir, 'ffmpeg.wav');
    // 0.5 s of silence, 1 s of 440 Hz, 0.5 s of silence.
    run(ffmpegPaths().ffmpeg, [
      '-nostdin',
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1:sample_rate=16000',
      '-af',
      'adelay=500,apad=pad_dur=0.5',
      '-ar',
      '16000',
      '-ac',
      '1',
      path,
    ]);
    const { samples, sampleRate } = await readWavSamples(path);
    expect(sampleRate).toBe(16_000);
    expect(samples.length / sampleRate).toBeCloseTo(2, 1);
    const peak = samples.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(peak).toBeGreaterThan(0.1);
    const regions = voicedRegions(samples, sampleRate);
    expect(regions).toHaveLength(1);
    expect(regions[0]!.start).toBeCloseTo(0.5, 1);
    expect(regions[0]!.end).toBeCloseTo(1.5, 1);
  });
});
