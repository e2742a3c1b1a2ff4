import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
}

/**
 * Where ffmpeg and ffprobe are: `FFMPEG_PATH` / `FFPROBE_PATH`, else an ffprobe next to
 * FFMPEG_PATH, else the system binaries on PATH (Debian's ffmpeg 5.1, installed by setup).
 * Not ffmpeg-static: its install downloads from GitHub (fails offline) and it lacks NVENC.
 * The only place in this package that reads the environment.
 */
export function resolveFfmpegPaths(env: NodeJS.ProcessEnv = process.env): FfmpegPaths {
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
