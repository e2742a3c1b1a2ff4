import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ffmpegToWavArgs, isWhisperWav, parseWavHeader, toWhisperWav } from '../src/audio.ts';
import { runToEnd } from '@captionfarm/process';

const JFK = new URL('../../../../shared/media/jfk.wav', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'transcriber-audio-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const ffmpeg = (...args: string[]) => runToEnd('ffmpeg', { args: ['-nostdin', '-v', 'error', '-y', ...args] });

describe('WAV header', () => {
  it('reads 16 kHz mono s16 from jfk.wav', () => {
    const info = parseWavHeader(readFileSync(JFK).subarray(0, 4096));
    expect(info).toMatchObject({ format: 1, channels: 1, sampleRate: 16000, bitsPerSample: 16, dataBytes: 352000 });
    expect(isWhisperWav(info)).toBe(true);
  });

  it('is null for anything else', () => {
    expect(parseWavHeader(Buffer.from('ID3\x03 not a wav'))).toBeNull();
    expect(isWhisperWav(parseWavHeader(Buffer.from('RIFF\0\0\0\0WAVE')))).toBe(false);
  });
});

describe('toWhisperWav', () => {
  it('uses a 16 kHz mono WAV as it is', async () => {
    expect(await toWhisperWav({ input: JFK, workDir: work, ffmpegPath: 'ffmpeg' })).toEqual({ path: JFK, duration: 11 });
  });

  it('converts a 44.1 kHz stereo mp3 with ffmpeg', async () => {
    const mp3 = join(work, 'tone.mp3');
    await ffmpeg('-f', 'lavfi', '-i', 'sine=f=440:r=44100:d=2', '-ac', '2', mp3);
    const dir = mkdtempSync(join(work, 'a-'));
    const out = await toWhisperWav({ input: mp3, workDir: dir, ffmpegPath: 'ffmpeg' });
    expect(out?.path).toBe(join(dir, 'audio-16k.wav'));
    expect(out?.duration).toBeGreaterThan(1.9);
    expect(isWhisperWav(parseWavHeader(readFileSync(out!.path).subarray(0, 4096)))).toBe(true);
  });

  it('says null for a video without an audio track', async () => {
    const mp4 = join(work, 'silent-video.mp4');
    await ffmpeg('-f', 'lavfi', '-i', 'color=c=black:s=64x64:d=1', '-c:v', 'libx264', mp4);
    expect(await toWhisperWav({ input: mp4, workDir: mkdtempSync(join(work, 'b-')), ffmpegPath: 'ffmpeg' })).toBeNull();
  });

  it('fails with transcription-failed for unreadable media, a missing file or a missing ffmpeg', async () => {
    const junk = join(work, 'junk.mp4');
    // Text, not random bytes: ffmpeg's probe sometimes finds an MP3 frame in random data.
    writeFileSync(junk, 'this is not a video\n'.repeat(250));
    await expect(toWhisperWav({ input: junk, workDir: work, ffmpegPath: 'ffmpeg' })).rejects.toMatchObject({
      code: 'transcription-failed',
      message: expect.stringMatching(/ffmpeg could not read/),
    });
    await expect(toWhisperWav({ input: join(work, 'nope.wav'), workDir: work, ffmpegPath: 'ffmpeg' })).rejects.toMatchObject({
      code: 'transcription-failed',
      message: expect.stringMatching(/ENOENT/),
    });
    await expect(toWhisperWav({ input: junk, workDir: work, ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toMatchObject({
      code: 'transcription-failed',
      message: expect.stringMatching(/FFMPEG_PATH/),
    });
  });

  it('kills ffmpeg on abort and rejects with the reason', async () => {
    const slow = join(work, 'slow-ffmpeg');
    // It never ends by itself: only the abort can settle this conversion (the test times out otherwise).
    writeFileSync(slow, `#!/bin/sh\necho $$ > ${work}/slow.pid\nexec sleep 3600\n`, { mode: 0o755 });
    const mp3 = join(work, 'any.mp3');
    writeFileSync(mp3, 'not a wav');
    const ac = new AbortController();
    const reason = new Error('job cancelled');
    const pending = toWhisperWav({ input: mp3, workDir: work, ffmpegPath: slow, signal: ac.signal }).catch((e: unknown) => e);
    while (!existsSync(join(work, 'slow.pid'))) await new Promise((r) => setTimeout(r, 20));
    ac.abort(reason);
    expect(await pending).toBe(reason);
    const pid = Number(readFileSync(join(work, 'slow.pid'), 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (const end = Date.now() + 10_000; alive() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(false); // killed, not left sleeping
  });

  it('builds args as an array, first audio stream only', () => {
    expect(ffmpegToWavArgs('in put.mp4', '/t/out.wav')).toEqual([
      '-nostdin',
      '-hide_banner',
      '-v',
      'error',
      '-y',
      '-i',
      'in put.mp4',
      '-map',
      '0:a:0?',
      '-vn',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      '/t/out.wav',
    ]);
  });
});
