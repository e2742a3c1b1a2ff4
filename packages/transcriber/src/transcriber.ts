/**
 * createTranscriber(): audio file -> { language, words } through one long-lived whisper-server
 * child per transcriber, so the model is loaded once per agent, not once per job.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Word } from '@captionfarm/contracts';
import { toWhisperWav } from './audio.ts';
import { TranscriptionError } from './errors.ts';
import { WHISPER_LANGUAGES } from './languages.ts';
import { defaultModelsDir, resolveModelPath } from './models.ts';
import { toWords, type WordTiming } from './to-words.ts';
import { resolveWhisperBinDir, type TranscriberEnv } from './whisper-bin.ts';
import { inferenceFields, startWhisperServer, type WhisperServer } from './whisper-server.ts';

export interface TranscriberOptions {
  /** A model path, or a name looked up as `<modelsDir>/ggml-<name>.bin` (e.g. 'base'). */
  model: string;
  /** whisper.cpp threads. Default: min(4, cores). */
  threads?: number;
  /** Directory with whisper-server; default resolveWhisperBinDir(env). */
  binDir?: string;
  /** Default `${XDG_CACHE_HOME:-~/.cache}/captionfarm/models`. */
  modelsDir?: string;
  /** Default `FFMPEG_PATH` from env, else `ffmpeg` on PATH. */
  ffmpegPath?: string;
  /** Word start times: whisper's token timestamps (default, measured better) or DTW. */
  timing?: WordTiming;
  /** Beam size; 1 = greedy. Default 1 (see README for the measurements). */
  beamSize?: number;
  /** Environment for the defaults above; default process.env. */
  env?: TranscriberEnv & { FFMPEG_PATH?: string | undefined };
}

export interface TranscribeRequest {
  /** Any file ffmpeg can read, or a 16 kHz mono WAV (used as is). */
  audioPath: string;
  /** A whisper language code ('en', 'de'...); omitted: detected and reported. */
  language?: string;
  signal?: AbortSignal;
}

export interface TranscribeResult {
  language: string;
  words: Word[];
}

export interface Transcriber {
  transcribe(req: TranscribeRequest): Promise<TranscribeResult>;
  /** Starts whisper.cpp and loads the model now rather than at the first job. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The DTW alignment-heads preset for a model file name (ggml-base.en.bin -> 'base.en'), as
 * whisper-server's --dtw expects; undefined for files that are not named after a preset.
 */
export function dtwPreset(modelPath: string): string | undefined {
  const m = /ggml-(tiny|base|small|medium|large-v[123](?:-turbo)?)(\.en)?[-.]/.exec(modelPath.split(/[\\/]/).pop() ?? '');
  if (!m) return undefined;
  return `${m[1]!.replace(/-/g, '.')}${m[2] ?? ''}`;
}

export function createTranscriber(opts: TranscriberOptions): Transcriber {
  const env = opts.env ?? process.env;
  const threads = opts.threads ?? Math.min(4, availableParallelism());
  const timing = opts.timing ?? 'token';
  const beamSize = opts.beamSize ?? 1;
  const ffmpegPath = opts.ffmpegPath ?? env.FFMPEG_PATH ?? 'ffmpeg';
  const modelPath = resolveModelPath(opts.model, opts.modelsDir ?? defaultModelsDir(env));

  let server: Promise<WhisperServer> | null = null;
  let closed = false;
  // whisper-server runs one inference at a time; queueing here keeps a waiting job's HTTP
  // request (and its abort) on our side rather than parked on the server's mutex.
  let queue: Promise<unknown> = Promise.resolve();

  const ensureServer = async (): Promise<WhisperServer> => {
    if (server) {
      const current = await server.catch(() => null);
      if (current?.alive) return current;
      server = null; // crashed or failed to start: the next job starts a fresh one
    }
    if (!existsSync(modelPath)) {
      const hint = modelPath === resolveModelPath(opts.model, '') ? 'check the path' : `run "captionfarm models pull ${opts.model}"`;
      throw new TranscriptionError('transcription-failed', `whisper model "${opts.model}" not found at ${modelPath}: ${hint}`);
    }
    const binDir = opts.binDir ?? resolveWhisperBinDir(env);
    server = startWhisperServer({ binDir, model: modelPath, threads, dtw: timing === 'dtw' ? dtwPreset(modelPath) : undefined });
    return server;
  };

  const run = async (req: TranscribeRequest): Promise<TranscribeResult> => {
    req.signal?.throwIfAborted();
    if (closed) throw new TranscriptionError('transcription-failed', 'transcriber is closed');
    if (req.language !== undefined && !Object.hasOwn(WHISPER_LANGUAGES, req.language)) {
      throw new TranscriptionError('transcription-failed', `whisper.cpp does not know language "${req.language}"`);
    }
    const workDir = await mkdtemp(join(tmpdir(), 'captionfarm-transcribe-'));
    try {
      const audio = await toWhisperWav({ input: req.audioPath, workDir, ffmpegPath, ...(req.signal ? { signal: req.signal } : {}) });
      if (!audio) return { language: req.language ?? 'en', words: [] }; // no audio track: nothing said
      const whisper = await ensureServer();
      req.signal?.throwIfAborted();
      const fields = inferenceFields({ language: req.language ?? 'auto', beamSize, bestOf: beamSize > 1 ? beamSize : 5, noSpeechThreshold: 0.6 });
      const payload = await whisper.infer(audio.path, fields, req.signal);
      return toWords(payload, { timing, duration: audio.duration, ...(req.language ? { language: req.language } : {}) });
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  };

  return {
    transcribe(req) {
      const result = queue.then(() => run(req));
      queue = result.catch(() => undefined);
      return result;
    },
    async warmUp() {
      await ensureServer();
    },
    async close() {
      closed = true;
      const current = await server?.catch(() => null);
      server = null;
      await current?.close();
    },
  };
}
