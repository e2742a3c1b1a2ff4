import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { captionfarmCacheDir, type ToolEnv } from '@captionfarm/process/tools';

/** The environment variables this package reads (the tools' are @captionfarm/process/tools's); pass your config module's values. */
export interface TranscriberEnv extends ToolEnv {
  /** Tests and benches only: the real Whisper weights to use (testModelPath). */
  CAPTIONFARM_TEST_MODEL?: string | undefined;
}

/** Where `bash scripts/fetch-test-model` (run by scripts/setup) puts the Whisper base weights. */
export function cachedBaseModelPath(env: TranscriberEnv = process.env): string {
  return join(captionfarmCacheDir(env), 'test-models', 'ggml-base.bin');
}

/** The real Whisper weights tests and benches use: CAPTIONFARM_TEST_MODEL, else cachedBaseModelPath. */
export function testModelPath(env: TranscriberEnv = process.env): string {
  return env.CAPTIONFARM_TEST_MODEL || cachedBaseModelPath(env);
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
 * The build-info.json next to a bin directory from whisperBinDir() (@captionfarm/process/tools),
 * e.g. for an agent to report whether its whisper.cpp has CUDA; null for builds that did not come
 * from our script.
 */
export function readWhisperBuildInfo(binDir: string): WhisperBuildInfo | null {
  try {
    return JSON.parse(readFileSync(join(binDir, '..', 'build-info.json'), 'utf8')) as WhisperBuildInfo;
  } catch {
    return null;
  }
}
