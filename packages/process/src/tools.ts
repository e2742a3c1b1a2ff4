/**
 * Where the media tools we run are: ffmpeg and ffprobe, whisper.cpp's binaries, espeak-ng and
 * PocketSphinx. The one place that reads their environment variables (FFMPEG_PATH, FFPROBE_PATH,
 * WHISPER_CPP_DIR, ESPEAK_NG_PATH, POCKETSPHINX_DIR); every package that runs one asks here.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** The environment variables these resolvers read; default process.env. */
export interface ToolEnv {
  FFMPEG_PATH?: string | undefined;
  FFPROBE_PATH?: string | undefined;
  WHISPER_CPP_DIR?: string | undefined;
  ESPEAK_NG_PATH?: string | undefined;
  POCKETSPHINX_DIR?: string | undefined;
  XDG_CACHE_HOME?: string | undefined;
  HOME?: string | undefined;
}

/**
 * `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm`: where builds (whisper.cpp's), models and test
 * models are cached.
 */
export function captionfarmCacheDir(env: ToolEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'captionfarm');
}

export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
}

/**
 * Where ffmpeg and ffprobe are: `FFMPEG_PATH` / `FFPROBE_PATH`, else an ffprobe next to
 * FFMPEG_PATH, else the system binaries on PATH (Debian's ffmpeg 5.1, installed by setup).
 * Not ffmpeg-static: its install downloads from GitHub (fails offline) and it lacks NVENC.
 */
export function resolveFfmpegPaths(env: ToolEnv = process.env): FfmpegPaths {
  const ffmpeg = env.FFMPEG_PATH || 'ffmpeg';
  let ffprobe = env.FFPROBE_PATH || 'ffprobe';
  if (!env.FFPROBE_PATH && env.FFMPEG_PATH) {
    const sibling = join(dirname(env.FFMPEG_PATH), 'ffprobe');
    if (existsSync(sibling)) ffprobe = sibling;
  }
  return { ffmpeg, ffprobe };
}

let resolved: FfmpegPaths | undefined;

/** resolveFfmpegPaths(process.env), read once per process. */
export function ffmpegPaths(): FfmpegPaths {
  resolved ??= resolveFfmpegPaths();
  return resolved;
}

/** espeak-ng (speech synthesis: the transcriber's onset alignment, the self-test's speech): `ESPEAK_NG_PATH`, else on PATH. */
export function espeakPath(env: ToolEnv = process.env): string {
  return env.ESPEAK_NG_PATH || 'espeak-ng';
}

/** PocketSphinx's program and its US English model, as scripts/build-pocketsphinx lays them out. */
export interface PocketsphinxPaths {
  program: string;
  /** The acoustic model folder (`-hmm`). */
  acousticModel: string;
  /** The pronouncing dictionary (CMUdict). */
  dictionary: string;
}

/**
 * PocketSphinx (the transcriber's English forced alignment): `POCKETSPHINX_DIR`, else the build
 * `bash scripts/build-pocketsphinx` made (`${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/pocketsphinx/current`).
 * Null when neither holds `bin/pocketsphinx` and `model/en-us`: the aligner is optional.
 */
export function pocketsphinxPaths(env: ToolEnv = process.env): PocketsphinxPaths | null {
  const dir = env.POCKETSPHINX_DIR || join(captionfarmCacheDir(env), 'pocketsphinx', 'current');
  const paths = {
    program: join(dir, 'bin', 'pocketsphinx'),
    acousticModel: join(dir, 'model', 'en-us', 'en-us'),
    dictionary: join(dir, 'model', 'en-us', 'cmudict-en-us.dict'),
  };
  return Object.values(paths).every((p) => existsSync(p)) ? paths : null;
}

const hasWhisperBinaries = (dir: string) => existsSync(join(dir, 'whisper-server')) && existsSync(join(dir, 'whisper-cli'));

/**
 * The directory holding whisper.cpp's `whisper-server` and `whisper-cli` (and the VAD's
 * `whisper-vad-speech-segments`):
 * 1. `WHISPER_CPP_DIR` (the directory itself or its `bin/`), when set;
 * 2. else the build that `bash scripts/build-whisper` last returned:
 *    `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/whisper/current/bin`.
 * Throws an Error that says what to run when neither has the binaries.
 */
export function whisperBinDir(env: ToolEnv = process.env): string {
  if (env.WHISPER_CPP_DIR) {
    for (const dir of [env.WHISPER_CPP_DIR, join(env.WHISPER_CPP_DIR, 'bin')]) if (hasWhisperBinaries(dir)) return dir;
    throw new Error(
      `WHISPER_CPP_DIR=${env.WHISPER_CPP_DIR} has no whisper-server and whisper-cli (nor in its bin/): ` +
        `point it at a whisper.cpp build, or unset it and run "bash scripts/build-whisper"`,
    );
  }
  const cached = join(captionfarmCacheDir(env), 'whisper', 'current', 'bin');
  if (hasWhisperBinaries(cached)) return cached;
  throw new Error(`whisper.cpp is not built (looked in ${cached}): run "bash scripts/build-whisper" (or set WHISPER_CPP_DIR)`);
}
