/**
 * Audio in whisper.cpp's input format: 16 kHz mono 16-bit PCM WAV. Files already in it are used
 * as they are; anything else ffmpeg reads (video, mp3, 44.1 kHz stereo WAV...) is converted.
 * One spawn wrapper for ffmpeg here: args from a pure function, stderr kept for the message,
 * killed on abort.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess } from '@captionfarm/process';
import { TranscriptionError } from './errors.ts';

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** 1 = PCM, 3 = IEEE float, 0xfffe = extensible */
  format: number;
  dataOffset: number;
  dataBytes: number;
}

/** whisper.cpp's input: 16 kHz mono s16 PCM. */
export const WHISPER_SAMPLE_RATE = 16_000;

/** The 44-byte header of a 16 kHz mono s16 PCM WAV holding `dataBytes` of samples (pure). */
export function whisperWavHeader(dataBytes: number): Buffer {
  const rate = WHISPER_SAMPLE_RATE;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/**
 * Samples [from, to) seconds of a 16 kHz mono s16 WAV (whisper's input, toWhisperWav), as their
 * s16le bytes; empty when the file is not a WAV.
 */
export async function readSpanPcm(wavPath: string, from: number, to: number): Promise<Buffer> {
  const rate = WHISPER_SAMPLE_RATE;
  const fh = await open(wavPath, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const info = parseWavHeader(head.subarray(0, bytesRead));
    if (!info) return Buffer.alloc(0);
    const first = Math.max(0, Math.round(from * rate));
    const count = Math.max(0, Math.min(Math.round(to * rate), Math.floor(info.dataBytes / 2)) - first);
    const buf = Buffer.alloc(count * 2);
    await fh.read(buf, 0, buf.length, info.dataOffset + first * 2);
    return buf;
  } finally {
    await fh.close();
  }
}

/** Parses a RIFF/WAVE header from the first bytes of a file; null when it is not one. */
export function parseWavHeader(buf: Buffer): WavInfo | null {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return null;
  let o = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes'> | null = null;
  while (o + 8 <= buf.length) {
    const id = buf.toString('ascii', o, o + 4);
    const size = buf.readUInt32LE(o + 4);
    if (id === 'fmt ' && o + 24 <= buf.length) {
      fmt = {
        format: buf.readUInt16LE(o + 8),
        channels: buf.readUInt16LE(o + 10),
        sampleRate: buf.readUInt32LE(o + 12),
        bitsPerSample: buf.readUInt16LE(o + 22),
      };
    } else if (id === 'data') {
      return fmt ? { ...fmt, dataOffset: o + 8, dataBytes: size } : null;
    }
    o += 8 + size + (size % 2);
  }
  return null;
}

export const isWhisperWav = (w: WavInfo | null): w is WavInfo =>
  w !== null && w.format === 1 && w.channels === 1 && w.sampleRate === WHISPER_SAMPLE_RATE && w.bitsPerSample === 16;

/** ffmpeg args: first audio stream, if any, -> 16 kHz mono s16 WAV. */
export function ffmpegToWavArgs(input: string, output: string): string[] {
  return [
    '-nostdin',
    '-hide_banner',
    '-v',
    'error',
    '-y',
    '-i',
    input,
    '-map',
    '0:a:0?',
    '-vn',
    '-ac',
    '1',
    '-ar',
    String(WHISPER_SAMPLE_RATE),
    '-c:a',
    'pcm_s16le',
    '-f',
    'wav',
    output,
  ];
}

/** What ffmpeg says when the optional audio map matched nothing: the media has no audio track. */
const NO_AUDIO = /does not contain any stream/;

/** Runs ffmpeg; resolves false when the input has no audio stream. */
async function runFfmpeg(ffmpegPath: string, args: string[], signal?: AbortSignal): Promise<boolean> {
  const { exitCode, exitSignal, stderrTail } = await runProcess(ffmpegPath, { args, signal, stdout: 'ignore' }).done.catch((err: unknown) => {
    if (signal?.aborted) throw signal.reason;
    const message = err instanceof Error ? err.message : String(err);
    throw new TranscriptionError('transcription-failed', `could not run ffmpeg (${ffmpegPath}): ${message}; install ffmpeg or set FFMPEG_PATH`, { cause: err });
  });
  if (exitCode === 0) return true;
  if (NO_AUDIO.test(stderrTail)) return false;
  throw new TranscriptionError(
    'transcription-failed',
    `ffmpeg could not read the audio (exit ${exitCode ?? exitSignal}): ${stderrTail.trim() || 'no message'}`,
  );
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const fh = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new TranscriptionError('transcription-failed', `cannot read audio ${path}: ${err.code ?? err.message}`, { cause: err });
  });
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(bytes), 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Returns a 16 kHz mono s16 WAV path for `input` and its duration in seconds: `input` itself when
 * it already is one, else a file ffmpeg writes into `workDir`; null when the media has no audio.
 */
export async function toWhisperWav(opts: {
  input: string;
  workDir: string;
  ffmpegPath: string;
  signal?: AbortSignal;
}): Promise<{ path: string; duration: number } | null> {
  let info = parseWavHeader(await readHead(opts.input, 4096));
  let path = opts.input;
  if (!isWhisperWav(info)) {
    path = join(opts.workDir, 'audio-16k.wav');
    if (!(await runFfmpeg(opts.ffmpegPath, ffmpegToWavArgs(opts.input, path), opts.signal))) return null;
    info = parseWavHeader(await readHead(path, 4096));
    if (!isWhisperWav(info)) throw new TranscriptionError('transcription-failed', `ffmpeg did not write a 16 kHz mono WAV for ${opts.input}`);
  }
  return { path, duration: info.dataBytes / 2 / WHISPER_SAMPLE_RATE };
}
