import { runFf } from './call-ff.ts';
import { RenderError } from './errors.ts';

export interface MediaInfo {
  /** Seconds, from the container (else the video stream). */
  durationSeconds: number;
  /** Displayed size: coded size with rotation metadata applied (a phone's 1920x1080 + 90 deg is 1080x1920). */
  width: number;
  height: number;
  /** Degrees clockwise the player turns the picture (0, 90, 180, 270). ffmpeg applies it while decoding. */
  rotation: number;
  /** Average frame rate (frames / duration): also right for variable-frame-rate sources. */
  fps: number;
  hasVideo: boolean;
  hasAudio: boolean;
  videoCodec: string | null;
  audioCodec: string | null;
}

/** ffmpeg's AVERROR_INVALIDDATA and AVERROR_EOF: the bytes are there but are not a media container. */
const NOT_MEDIA_ERRORS = new Set([-1094995529, -541478725]);

const HTTP_URL = /^https?:\/\//i;

/** A local path, or an http(s) URL (the control plane probes a presigned GET of an upload: ffprobe reads only what it needs, with ranges). */
function ffprobeArgs(path: string): string[] {
  // `-show_error` puts ffprobe's error code into the JSON, so failures are classified by
  // number, never by message text. `file:` keeps a path like `a:b.mp4` from being read as a protocol.
  // A URL gets a 15 s read/write timeout, so a stalled store cannot hold the probe.
  const input = HTTP_URL.test(path) ? ['-rw_timeout', '15000000', path] : [toFileUrl(path)];
  return ['-v', 'error', '-print_format', 'json', '-show_error', '-show_format', '-show_streams', ...input];
}

/** ffmpeg treats `scheme:rest` as a protocol; absolute or `./` paths are always files. */
export function toFileUrl(path: string): string {
  return path.startsWith('/') || path.startsWith('./') || path.startsWith('../') ? path : `./${path}`;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: { rotation?: number }[];
}

interface ProbeOutput {
  error?: { code?: number; string?: string };
  format?: { duration?: string };
  streams?: ProbeStream[];
}

/** Turns ffprobe's JSON (see ffprobeArgs) into MediaInfo, or throws a classified RenderError. */
export function parseProbeOutput(json: string, stderrTail = ''): MediaInfo {
  let out: ProbeOutput;
  try {
    out = JSON.parse(json) as ProbeOutput;
  } catch (cause) {
    throw new RenderError('ingest-failed', 'ffprobe printed no readable JSON; retry the job', { stderrTail, cause });
  }
  if (out.error) {
    const code = out.error.code ?? 0;
    if (NOT_MEDIA_ERRORS.has(code)) {
      throw new RenderError(
        'source-unreadable',
        `The file is not a readable media container (${out.error.string ?? code}); upload an mp4, mov, webm, mkv or avi video`,
        { stderrTail },
      );
    }
    throw new RenderError('ingest-failed', `ffprobe could not open the file (${out.error.string ?? code}); retry the job`, { stderrTail });
  }
  const streams = out.streams ?? [];
  // A cover picture in an audio file is a one-frame "video" stream: not a video.
  const video = streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const durationSeconds = positive(out.format?.duration) ?? positive(video?.duration) ?? null;
  if (!video?.width || !video.height || durationSeconds === null) {
    throw new RenderError(
      'source-unreadable',
      video ? 'The video has no duration or size (a still image?); upload a video file' : 'The file has no video stream; upload a video file',
      { stderrTail },
    );
  }
  const rotation = rotationOf(video);
  const turned = rotation % 180 !== 0;
  return {
    durationSeconds,
    width: turned ? video.height : video.width,
    height: turned ? video.width : video.height,
    rotation,
    fps: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate) ?? 30,
    hasVideo: true,
    hasAudio: audio !== undefined,
    videoCodec: video.codec_name ?? null,
    audioCodec: audio?.codec_name ?? null,
  };
}

function rotationOf(s: ProbeStream): number {
  const fromMatrix = s.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const degrees = fromMatrix ?? Number(s.tags?.rotate ?? 0);
  if (!Number.isFinite(degrees)) return 0;
  return (((Math.round(degrees / 90) * 90) % 360) + 360) % 360;
}

function positive(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** "30000/1001" -> 29.97; "0/0" and garbage -> undefined. */
function rate(value: string | undefined): number | undefined {
  const [num, den] = (value ?? '').split('/').map(Number);
  if (num === undefined || !Number.isFinite(num) || num <= 0) return undefined;
  const r = den === undefined ? num : num / den;
  return Number.isFinite(r) && r > 0 ? r : undefined;
}

/**
 * Probes a local file (or an http(s) URL) with ffprobe. Rejects with RenderError 'source-unreadable'
 * (not media) or 'ingest-failed' (the probe itself failed).
 */
export async function probeMedia(path: string, opts: { signal?: AbortSignal } = {}): Promise<MediaInfo> {
  let result;
  try {
    result = await runFf({ bin: 'ffprobe', args: ffprobeArgs(path), signal: opts.signal }).done;
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new RenderError('ingest-failed', 'Could not run ffprobe; install ffmpeg or set FFMPEG_PATH', { cause: err });
  }
  return parseProbeOutput(result.stdout, result.stderrTail);
}
