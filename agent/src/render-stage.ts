import type { CustomFontFace, Template } from '@captionfarm/captions';
import type { LeasedJob, Word } from '@captionfarm/contracts';
import { createBandPainter, renderVideo, type CaptionStream, type OutputFrame, type RenderResult, type RenderVideoOptions } from '@captionfarm/renderer';
import { failureOf, JobFailure } from './errors.ts';
import type { Ingested } from './ingest-stage.ts';
import type { JobChannel, PipelineDeps } from './pipeline.ts';

/** The job's render into its output file: with every word known, or following a caption stream. */
export interface JobRender {
  /** The last percent encoded (the phase `rendering` starts at it). */
  readonly percent: number;
  /** Percents go to the control plane from now on: none goes out before the phase that carries them. */
  reportPercents(): void;
  /** Renders `words` (each render starts at 0%). */
  withWords(words: Word[]): Promise<RenderResult>;
  /** Renders what `captionStream` gives, under `signal` (an overlapped render). */
  following(captionStream: (frame: OutputFrame) => CaptionStream, signal: AbortSignal): Promise<RenderResult>;
}

export function jobRender(o: {
  job: LeasedJob;
  channel: JobChannel;
  deps: Pick<PipelineDeps, 'encoder' | 'x264Threads'>;
  ingested: Ingested;
  template: Template;
  output: string;
  signal: AbortSignal;
}): JobRender {
  const { job, ingested } = o;
  const { info, fonts } = ingested;
  let reporting = false;
  let percent = 0;
  const render = async (captions: Pick<RenderVideoOptions, 'painter' | 'captionStream'>, signal: AbortSignal) => {
    percent = 0;
    try {
      return await renderVideo({
        input: ingested.source,
        output: o.output,
        ...captions,
        format: job.format,
        overlay: job.overlay,
        quality: job.quality,
        resolution: job.resolution ?? undefined,
        maxPixels: job.frameBudget,
        signal,
        onProgress: (p) => {
          percent = p;
          if (reporting) o.channel.percent(p);
        },
        encoder: o.deps.encoder,
        threads: o.deps.x264Threads,
        source: info,
      });
    } catch (err) {
      throw failureOf(err, 'renderer');
    }
  };
  return {
    get percent() {
      return percent;
    },
    reportPercents() {
      reporting = true;
    },
    withWords: (words) =>
      render({ painter: (size) => createBandPainter({ words, template: o.template, width: size.width, height: size.height, fps: info.fps, fonts }) }, o.signal),
    following: (captionStream, signal) => render({ captionStream }, signal),
  };
}

/** The template's uploaded font must be among the job's: one deleted after the job was created fails it. */
export function checkFont(template: Template, fonts: ReadonlyMap<string, CustomFontFace>): void {
  if (template.font.fontId && !fonts.has(template.font.fontId)) {
    throw new JobFailure('render-failed', `Font ${template.font.fontId} is no longer available (deleted after the job was created).`);
  }
}
