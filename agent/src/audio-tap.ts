import { open, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { runFf, type FfRun } from '@captionfarm/renderer';
import { ffmpegToWavArgs, isWhisperWav, parseWavHeader } from '@captionfarm/transcriber';

/**
 * Overlapped ingest: the whisper WAV (16 kHz mono s16) is extracted while the source downloads,
 * ffmpeg reading the bytes from a pipe as they arrive, so transcription starts as soon as the probe
 * has passed instead of after one more read of the whole file.
 *
 * An MP4/MOV whose index (moov) comes after its media (mdat), as cameras and phones write them,
 * cannot be read from a pipe (ffmpeg exits 0 with an empty WAV, "partial file"): the first bytes
 * tell, and such a source is not streamed. Its WAV is extracted from the file once downloaded,
 * while the probe and the ingest report run (extractWhisperWav).
 */
export interface AudioTap {
  /** Each downloaded chunk, in order; resolves when ffmpeg can take more (its backpressure bounds the download's). */
  write(chunk: Buffer): Promise<void>;
  /** The download is complete: the WAV path when the streamed extraction made it whole, else null (extract from the file). */
  end(): Promise<string | null>;
  /** The download failed: ffmpeg is stopped; resolves once it is gone. */
  cancel(): Promise<void>;
}

/** How much of the head is looked at to find the index before the media; past it the source is not streamed. */
const SNIFF_BYTES = 256 * 1024;

export function startAudioTap(wavPath: string, signal: AbortSignal): AudioTap {
  const stop = new AbortController();
  const both = AbortSignal.any([signal, stop.signal]);
  let state: 'sniffing' | 'streaming' | 'off' = 'sniffing';
  let head: Buffer[] = [];
  let headBytes = 0;
  let ff: FfRun | undefined;
  let exited: Promise<{ ok: boolean; detail: string }> | undefined;

  const spawn = (): void => {
    // -flush_packets 1: the WAV on disk keeps up with the download (ffmpeg otherwise holds a seekable
    // output's samples in memory until the end), so how far extraction has got can be seen.
    const args = [...ffmpegToWavArgs('pipe:3', wavPath).slice(0, -1), '-flush_packets', '1', wavPath];
    const run = runFf({ bin: 'ffmpeg', args, signal: both, inputPipe: true });
    ff = run;
    exited = run.done.then(
      (r) => ({ ok: r.exitCode === 0 && r.stderrTail.trim() === '', detail: r.stderrTail }),
      () => ({ ok: false, detail: 'stopped' }),
    );
    state = 'streaming';
  };

  const feed = async (chunk: Buffer): Promise<void> => {
    const input = ff?.input;
    if (!input || input.destroyed || input.writableEnded) return;
    if (input.write(chunk)) return;
    await drained(input, both);
  };

  return {
    async write(chunk) {
      if (state === 'off') return;
      if (state === 'sniffing') {
        head.push(chunk);
        headBytes += chunk.length;
        const verdict = indexBeforeMedia(Buffer.concat(head));
        if (verdict === undefined && headBytes < SNIFF_BYTES) return;
        if (verdict !== true) {
          state = 'off';
          head = [];
          return;
        }
        spawn();
        chunk = Buffer.concat(head);
        head = [];
      }
      await feed(chunk);
    },
    async end() {
      if (state === 'sniffing') {
        // A source smaller than the sniff window: stream it if its head allows.
        if (indexBeforeMedia(Buffer.concat(head)) !== true) return null;
        spawn();
        await feed(Buffer.concat(head));
        head = [];
      }
      if (state === 'off') return null;
      ff!.input!.end();
      const { ok } = await exited!;
      if (signal.aborted) throw signal.reason;
      if (ok && (await isWholeWav(wavPath))) return wavPath;
      await rm(wavPath, { force: true });
      return null;
    },
    async cancel() {
      state = 'off';
      stop.abort();
      await exited;
      await rm(wavPath, { force: true });
    },
  };
}

/**
 * Extracts the whisper WAV from a downloaded file; false when ffmpeg could not (the transcriber is
 * then given the source itself and reports why in its own words).
 */
export async function extractWhisperWav(source: string, wavPath: string, signal: AbortSignal): Promise<boolean> {
  const r = await runFf({ bin: 'ffmpeg', args: ffmpegToWavArgs(source, wavPath), signal }).done;
  if (r.exitCode === 0 && (await isWholeWav(wavPath))) return true;
  await rm(wavPath, { force: true });
  return false;
}

/**
 * ISO base media (MP4/MOV) top-level boxes: true when `moov` (the index) comes before `mdat`
 * (the media), false when the media comes first, undefined when more bytes are needed. Any other
 * container (Matroska/WebM, MPEG-TS, AVI...) is read by ffmpeg from a pipe: true.
 */
export function indexBeforeMedia(head: Buffer): boolean | undefined {
  if (head.length < 8) return undefined;
  if (!ISO_FIRST_BOXES.has(head.toString('latin1', 4, 8))) return true;
  let o = 0;
  while (o + 8 <= head.length) {
    let size = head.readUInt32BE(o);
    const type = head.toString('latin1', o + 4, o + 8);
    if (type === 'moov') return true;
    if (type === 'mdat') return false;
    if (size === 1) {
      if (o + 16 > head.length) return undefined;
      size = Number(head.readBigUInt64BE(o + 8));
    }
    // 0: the box runs to the end of the file, so no index can follow it; < 8: not a valid box.
    if (size < 8) return false;
    o += size;
  }
  return undefined;
}

const ISO_FIRST_BOXES = new Set(['ftyp', 'styp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pdin', 'uuid']);

/** A 16 kHz mono s16 WAV whose header ffmpeg finalized with a non-empty data chunk. */
async function isWholeWav(file: string): Promise<boolean> {
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return false;
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(4096), 0, 4096, 0);
    const { size } = await fh.stat();
    const info = parseWavHeader(buffer.subarray(0, bytesRead));
    return isWhisperWav(info) && info.dataBytes > 0 && info.dataOffset + info.dataBytes <= size;
  } finally {
    await fh.close();
  }
}

function drained(pipe: Writable, signal: AbortSignal): Promise<void> {
  // 'close' and abort too: a dead ffmpeg never drains, and the download must not hang on it.
  return new Promise<void>((resolve) => {
    const done = (): void => {
      pipe.off('drain', done).off('close', done).off('error', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    pipe.on('drain', done).on('close', done).on('error', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
