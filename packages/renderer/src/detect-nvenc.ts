import { runFf } from './call-ff.ts';
import { ffmpegPaths } from '@captionfarm/process/tools';

/** Listing the encoder is not enough (Debian's ffmpeg lists h264_nvenc on machines without a GPU): a tiny trial encode decides. */
const NVENC_TRIAL_ARGS: readonly string[] = [
  '-hide_banner',
  '-nostdin',
  '-loglevel',
  'error',
  '-f',
  'lavfi',
  '-i',
  'color=c=black:s=256x256:r=30:d=0.2',
  '-c:v',
  'h264_nvenc',
  '-f',
  'null',
  '-',
];

/** NVENC, or why not: what `captionfarm agent --self-test` prints. */
export interface NvencStatus {
  available: boolean;
  /** 'ok', or the reason it is missing in words (ffmpeg's own last error line included). */
  reason: string;
}

const cache = new Map<string, Promise<NvencStatus>>();

/** Whether this ffmpeg can encode with NVENC here, checked once per process (about 0.1-0.5 s). */
export async function nvencAvailable(): Promise<boolean> {
  return (await nvencStatus()).available;
}

/** nvencAvailable() with the reason: no h264_nvenc in this ffmpeg, no driver, or the GPU has no encoder (A100/H100/H200). */
export function nvencStatus(): Promise<NvencStatus> {
  const key = ffmpegPaths().ffmpeg;
  let found = cache.get(key);
  if (!found) {
    found = detect(key);
    cache.set(key, found);
  }
  return found;
}

async function detect(ffmpeg: string): Promise<NvencStatus> {
  try {
    const list = await runFf({ bin: 'ffmpeg', args: ['-hide_banner', '-encoders'] }).done;
    if (!/\bh264_nvenc\b/.test(list.stdout)) return { available: false, reason: `${ffmpeg} was built without h264_nvenc` };
    const trial = await runFf({ bin: 'ffmpeg', args: NVENC_TRIAL_ARGS }).done;
    if (trial.exitCode === 0) return { available: true, reason: 'ok' };
    return { available: false, reason: `a trial h264_nvenc encode failed: ${explain(trial.stderrTail)}` };
  } catch (err) {
    return { available: false, reason: `${ffmpeg} could not run: ${(err as Error).message}` };
  }
}

/** ffmpeg's most telling line, with what it means for the usual cases. */
function explain(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^\[[^\]]*\]\s*/, '').trim())
    .filter(Boolean);
  const line = lines.find((l) => /OpenEncodeSessionEx|Cannot load|No capable devices|unsupported device|No NVENC/i.test(l)) ?? lines[0] ?? 'no message';
  if (/Cannot load (libcuda|libnvidia-encode)/i.test(line)) return `${line} (no NVIDIA driver here)`;
  if (/unsupported device|No capable devices/i.test(line)) return `${line} (this GPU has no NVENC encoder: A100, H100 and H200 have none)`;
  return line;
}
