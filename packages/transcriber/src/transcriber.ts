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
import { detectSpeech, keepSpokenWords } from './vad.ts';
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
  /**
   * Beam size; 1 = greedy (best of 5). Default 5: en.wav, base, 2 threads: WER 5.3% vs 6.2%,
   * word onset error median/p90 92/289 ms vs 123/356 ms, for 8.3 s vs 5.7 s.
   */
  beamSize?: number;
  /**
   * Silero VAD model (path or name) gating hallucinated words; default
   * `ggml-silero-v6.2.3.bin` in modelsDir, else in the default models dir (where
   * scripts/build-whisper puts it). `false`: no gate (whisper then writes "Thank you." on silence).
   */
  vadModel?: string | false;
  /** Environment for the defaults above and for the whisper.cpp children; default process.env. */
  env?: TranscriberEnv & { FFMPEG_PATH?: string | undefined };
}

export interface TranscribeRequest {
  /** Any file ffmpeg can read, or a 16 kHz mono WAV (used as is). */
  audioPath: string;
  /** A whisper language code ('en', 'de'...); omitted: detected and reported. */
  language?: string;
  signal?: AbortSignal;
  /** Where temp files (the 16 kHz WAV) go; default the OS temp dir. An agent passes its job dir, so a killed attempt's debris is swept with it. */
  workDir?: string;
}

export interface TranscribeResult {
  language: string;
  /** Confidence (0..1) in a detected language; absent or null when the language was given or is not measured. */
  languageProbability?: number | null;
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

export const VAD_MODEL_NAME = 'silero-v6.2.3';

function findVadModel(option: string | undefined, modelsDir: string, fallbackDir: string): string {
  if (option !== undefined) return resolveModelPath(option, modelsDir);
  const inModelsDir = resolveModelPath(VAD_MODEL_NAME, modelsDir);
  return existsSync(inModelsDir) ? inModelsDir : resolveModelPath(VAD_MODEL_NAME, fallbackDir);
}

export function createTranscriber(opts: TranscriberOptions): Transcriber {
  const env = opts.env ?? process.env;
  const threads = opts.threads ?? Math.min(4, availableParallelism());
  const timing = opts.timing ?? 'token';
  const beamSize = opts.beamSize ?? 5;
  const ffmpegPath = opts.ffmpegPath ?? env.FFMPEG_PATH ?? 'ffmpeg';
  const modelsDir = opts.modelsDir ?? defaultModelsDir(env);
  const modelPath = resolveModelPath(opts.model, modelsDir);
  const vadModel = opts.vadModel === false ? null : findVadModel(opts.vadModel, modelsDir, defaultModelsDir(env));
  let binDir: string | null = opts.binDir ?? null;
  // OMP_WAIT_POLICY passes through and is left unset by default. whisper-cli, en.wav, 2 threads:
  // idle box 5.79 s unset / 5.72 s active / 7.06 s passive; on the box loaded by other builds,
  // jfk.wav took 16.4-18.4 s active vs 4.4-7.5 s passive. Dedicated agents: leave it; machines
  // whose cores are shared with other work: set OMP_WAIT_POLICY=passive.
  const childEnv: NodeJS.ProcessEnv = { ...env };
  const getBinDir = () => (binDir ??= resolveWhisperBinDir(env));

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
    server = startWhisperServer({ binDir: getBinDir(), model: modelPath, threads, dtw: timing === 'dtw' ? dtwPreset(modelPath) : undefined, env: childEnv });
    return server;
  };

  const run = async (req: TranscribeRequest): Promise<TranscribeResult> => {
    req.signal?.throwIfAborted();
    if (closed) throw new TranscriptionError('transcription-failed', 'transcriber is closed');
    if (req.language !== undefined && !Object.hasOwn(WHISPER_LANGUAGES, req.language)) {
      throw new TranscriptionError('transcription-failed', `whisper.cpp does not know language "${req.language}"`);
    }
    const workDir = await mkdtemp(join(req.workDir ?? tmpdir(), 'captionfarm-transcribe-'));
    try {
      const audio = await toWhisperWav({ input: req.audioPath, workDir, ffmpegPath, ...(req.signal ? { signal: req.signal } : {}) });
      // No audio track, or no speech in it: nothing was said (language: the one asked, else 'en').
      const nothing = { language: req.language ?? 'en', words: [] };
      if (!audio) return nothing;
      const whisper = await ensureServer();
      let speech = null;
      if (vadModel) {
        if (!existsSync(vadModel)) {
          throw new TranscriptionError('transcription-failed', `VAD model not found at ${vadModel}: run "bash scripts/build-whisper" (it makes it), or pass vadModel: false`);
        }
        // One thread: the VAD runs a tiny graph per 32 ms window, where waking a second thread
        // costs more than it brings (en.wav: 0.09 s with 1 thread, 0.94 s with 2).
        speech = await detectSpeech({ binDir: getBinDir(), model: vadModel, wav: audio.path, threads: 1, env: childEnv, ...(req.signal ? { signal: req.signal } : {}) });
        if (speech.length === 0) return nothing;
      }
      req.signal?.throwIfAborted();
      const fields = inferenceFields({ language: req.language ?? 'auto', beamSize, bestOf: beamSize > 1 ? beamSize : 5, noSpeechThreshold: 0.6 });
      const payload = await whisper.infer(audio.path, fields, req.signal);
      const result = toWords(payload, { timing, duration: audio.duration, ...(req.language ? { language: req.language } : {}) });
      return speech ? { ...result, words: keepSpokenWords(result.words, speech) } : result;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  };

  return {
    transcribe(req) {
      const result = queue.then(() => run(req));
      queue = result.catch(() => undefined);
      const signal = req.signal;
      if (!signal) return result;
      // A job cancelled while it waits behind another one rejects now, not when its turn comes
      // (its turn then ends at once: run() checks the signal first).
      return new Promise<TranscribeResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
      });
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
