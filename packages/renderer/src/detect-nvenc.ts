import { runFf } from './call-ff.ts';
import { ffmpegPaths } from './ffmpeg-path.ts';

/** Listing the encoder is not enough (Debian's ffmpeg lists h264_nvenc on machines without a GPU): a tiny trial encode decides. */
export const NVENC_TRIAL_ARGS: readonly string[] = [
  '-hide_banner', '-nostdin', '-loglevel', 'error',
  '-f', 'lavfi', '-i', 'color=c=black:s=256x256:r=30:d=0.2',
  '-c:v', 'h264_nvenc', '-f', 'null', '-',
];

const cache = new Map<string, Promise<boolean>>();

/** Whether this ffmpeg can encode with NVENC here, checked once per process (about 0.1-0.5 s). */
export function nvencAvailable(): Promise<boolean> {
  const key = ffmpegPaths().ffmpeg;
  let found = cache.get(key);
  if (!found) {
    found = detect();
    cache.set(key, found);
  }
  return found;
}

async function detect(): Promise<boolean> {
  try {
    const list = await runFf({ bin: 'ffmpeg', args: ['-hide_banner', '-encoders'] }).done;
    if (!/\bh264_nvenc\b/.test(list.stdout)) return false;
    const trial = await runFf({ bin: 'ffmpeg', args: NVENC_TRIAL_ARGS }).done;
    return trial.exitCode === 0;
  } catch {
    return false;
  }
}
