import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TranscriptionError } from './errors.ts';

/** The environment variables this package reads; pass your config module's values. */
export interface TranscriberEnv {
  WHISPER_CPP_DIR?: string | undefined;
  XDG_CACHE_HOME?: string | undefined;
  HOME?: string | undefined;
  /** Tests and benches only: the real Whisper weights to use (testModelPath). */
  CAPTIONFARM_TEST_MODEL?: string | undefined;
}

/** `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm`: where builds, models and test models are cached. */
export function captionfarmCacheDir(env: TranscriberEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'captionfarm');
}

/** Where `bash scripts/fetch-test-model` (run by scripts/setup) puts the Whisper base weights. */
export function cachedBaseModelPath(env: TranscriberEnv = process.env): string {
  return join(captionfarmCacheDir(env), 'test-models', 'ggml-base.bin');
}

/** The real Whisper weights tests and benches use: CAPTIONFARM_TEST_MODEL, else cachedBaseModelPath. */
export function testModelPath(env: TranscriberEnv = process.env): string {
  return env.CAPTIONFARM_TEST_MODEL || cachedBaseModelPath(env);
}

const hasBinaries = (dir: string) => existsSync(join(dir, 'whisper-server')) && existsSync(join(dir, 'whisper-cli'));

/**
 * The directory holding `whisper-server` and `whisper-cli`:
 * 1. `WHISPER_CPP_DIR` (the directory itself or its `bin/`), when set;
 * 2. else the build that `bash scripts/build-whisper` last returned:
 *    `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/whisper/current/bin`.
 * Throws a TranscriptionError that says what to run when neither has the binaries.
 */
export function resolveWhisperBinDir(env: TranscriberEnv = process.env): string {
  if (env.WHISPER_CPP_DIR) {
    for (const dir of [env.WHISPER_CPP_DIR, join(env.WHISPER_CPP_DIR, 'bin')]) if (hasBinaries(dir)) return dir;
    throw new TranscriptionError(
      'transcription-failed',
      `WHISPER_CPP_DIR=${env.WHISPER_CPP_DIR} has no whisper-server and whisper-cli (nor in its bin/): ` +
        `point it at a whisper.cpp build, or unset it and run "bash scripts/build-whisper"`,
    );
  }
  const cached = join(captionfarmCacheDir(env), 'whisper', 'current', 'bin');
  if (hasBinaries(cached)) return cached;
  throw new TranscriptionError(
    'transcription-failed',
    `whisper.cpp is not built (looked in ${cached}): run "bash scripts/build-whisper" (or set WHISPER_CPP_DIR)`,
  );
}

/** What scripts/build-whisper recorded about a build (`<build>/build-info.json`). */
export interface WhisperBuildInfo {
  whisperCpp: string;
  hash: string;
  cpu: 'portable' | 'native';
  cuda: boolean;
  buildSeconds: number;
  toolchain: string;
  cmakeArgs: string[];
  builtAt: string;
}

/**
 * The build-info.json next to a bin directory from resolveWhisperBinDir(), e.g. for an agent to
 * report whether its whisper.cpp has CUDA; null for builds that did not come from our script.
 */
export function readWhisperBuildInfo(binDir: string): WhisperBuildInfo | null {
  try {
    return JSON.parse(readFileSync(join(binDir, '..', 'build-info.json'), 'utf8')) as WhisperBuildInfo;
  } catch {
    return null;
  }
}
