export * from './paint/index.ts';
export { paintHookTitle, type HookTitleImage, type HookTitleOptions } from './paint/hook-title.ts';
export { runFf, type FfResult, type FfRun } from './call-ff.ts';
export { nvencAvailable, nvencStatus, type NvencStatus } from './detect-nvenc.ts';
export { QUALITY_LEVELS, type OutputFormat, type Quality, type VideoEncoder } from './encoder-args.ts';
export type { RenderEdit, TimeSpan } from './edit-graph.ts';
export { RenderError, type RenderErrorCode } from './errors.ts';
export { createProgressReporter, parseFfmpegProgress } from './parse-ffmpeg-progress.ts';
export { planOutputSize, type Size } from './plan-output-size.ts';
export { renderRenditions, type Rendition, type RenderRenditionsOptions } from './render-renditions.ts';
export { probeMedia, type MediaInfo } from './probe-media.ts';
export { renderPoster, type PosterOptions, type PosterResult } from './poster.ts';
export {
  CaptionsChanged,
  reencodeVideo,
  renderVideo,
  type CaptionStream,
  type OutputFrame,
  type OverlayImage,
  type ReencodeOptions,
  type RenderResult,
  type RenderVideoOptions,
} from './render-video.ts';
export * from './font-file/index.ts';
