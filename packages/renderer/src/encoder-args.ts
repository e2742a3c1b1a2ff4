/** 'mov' is ProRes 4444 and exists only as a transparent overlay (`overlay: true`). */
export type OutputFormat = 'mp4' | 'webm' | 'mov';
export type Quality = 'low' | 'medium' | 'high';
/** The video encoder actually used: libx264 / libvpx-vp9 on 'cpu', h264_nvenc on 'nvenc'. */
export type VideoEncoder = 'cpu' | 'nvenc';

/**
 * Constant-quality levels per encoder. x264 CRF 20/23/28 (23 is x264's default); NVENC CQ sits
 * about one step above CRF for the same look; VP9 CRF runs on a wider 0-63 scale.
 */
export const QUALITY_LEVELS: Record<'x264' | 'nvenc' | 'vp9', Record<Quality, number>> = {
  x264: { high: 20, medium: 23, low: 28 },
  nvenc: { high: 21, medium: 25, low: 30 },
  vp9: { high: 30, medium: 34, low: 40 },
};

/** Video encoder arguments, shared by the render and the bench's plain re-encode so both encode alike. */
export function videoEncoderArgs(opts: {
  format: OutputFormat;
  quality: Quality;
  encoder: VideoEncoder;
  threads?: number | undefined;
  overlay?: boolean;
}): string[] {
  const { format, quality, encoder } = opts;
  // x264 picks 1.5 x cores itself; an agent passes its plan (every core) so jobs at once share them knowingly.
  const threads = opts.threads ? ['-threads', String(opts.threads)] : [];
  if (format === 'mov') {
    // ProRes 4444 with a 16-bit alpha plane; an intermediate codec for editors, so quality is fixed high.
    return ['-c:v', 'prores_ks', '-profile:v', '4444', '-pix_fmt', 'yuva444p10le', '-alpha_bits', '16', '-vendor', 'apl0', ...threads];
  }
  if (format === 'webm') {
    // Realtime VP9: cpu-used 8 encoded 1080x1920 at 0.46 CPU-s per video second here, cpu-used 5 at 0.72.
    // An overlay keeps alpha in a second stream; libvpx refuses alternate reference frames with it.
    return [
      '-c:v',
      'libvpx-vp9',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-row-mt',
      '1',
      '-crf',
      String(QUALITY_LEVELS.vp9[quality]),
      '-b:v',
      '0',
      '-pix_fmt',
      opts.overlay ? 'yuva420p' : 'yuv420p',
      ...(opts.overlay ? ['-auto-alt-ref', '0'] : []),
      ...threads,
    ];
  }
  if (encoder === 'nvenc') {
    return [
      '-c:v',
      'h264_nvenc',
      '-preset',
      'p4',
      '-rc',
      'vbr',
      '-cq',
      String(QUALITY_LEVELS.nvenc[quality]),
      '-b:v',
      '0',
      '-profile:v',
      'high',
      '-pix_fmt',
      'yuv420p',
    ];
  }
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(QUALITY_LEVELS.x264[quality]), '-profile:v', 'high', '-pix_fmt', 'yuv420p', ...threads];
}

/**
 * Audio arguments: the source's first audio track, copied when it already fits the container (no
 * re-encode) and is not `filtered` (an edit's cuts and bleeps), else AAC / Opus.
 */
export function audioEncoderArgs(opts: { format: OutputFormat; sourceAudioCodec: string | null; filtered?: boolean }): string[] {
  const { format, sourceAudioCodec } = opts;
  if (sourceAudioCodec === null) return [];
  const native = format === 'mp4' ? 'aac' : 'opus';
  if (sourceAudioCodec === native && !opts.filtered) return ['-c:a', 'copy'];
  return format === 'mp4' ? ['-c:a', 'aac', '-b:a', '160k'] : ['-c:a', 'libopus', '-b:a', '128k'];
}

/** Container arguments; mp4 gets its index up front so players can start before the download ends. */
export function muxerArgs(format: OutputFormat): string[] {
  if (format === 'mov') return ['-f', 'mov', '-movflags', '+faststart'];
  return format === 'mp4' ? ['-f', 'mp4', '-movflags', '+faststart'] : ['-f', 'webm'];
}
