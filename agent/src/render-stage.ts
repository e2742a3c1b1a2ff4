import type { CustomFontFace, Rect as BandRect, Template } from '@captionfarm/captions';
import type { EditPlan, LeasedJob, Word } from '@captionfarm/contracts';
import {
  createBandPainter,
  paintHookTitle,
  renderVideo,
  type CaptionStream,
  type OutputFrame,
  type RenderResult,
  type RenderVideoOptions,
} from '@captionfarm/renderer';
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
  /** An edited job's plan (issue 42), known once its words are: the render cuts, zooms and bleeps by it. */
  edit?: (() => EditPlan | undefined) | undefined;
}): JobRender {
  const { job, ingested } = o;
  const { info, fonts } = ingested;
  let reporting = false;
  let percent = 0;
  // Where the captions go at an output size: the hook title keeps clear of it.
  let bandOf: (size: OutputFrame) => BandRect = () => ({ x: 0, y: 0, width: 0, height: 0 });
  const render = async (captions: Pick<RenderVideoOptions, 'painter' | 'captionStream'>, signal: AbortSignal) => {
    percent = 0;
    const plan = changesPicture(o.edit?.(), info.durationSeconds);
    try {
      return await renderVideo({
        input: ingested.source,
        output: o.output,
        ...captions,
        ...(plan ? { edit: { keep: plan.keep, zooms: plan.zooms, bleeps: plan.bleeps } } : {}),
        ...(job.hookTitle ? { overlayImage: hookImage(job.hookTitle, o.template, ingested, bandOf) } : {}),
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
    withWords: (words) => {
      // One painter per output size, for the render and for where the hook title goes.
      let made: { key: string; painter: ReturnType<typeof createBandPainter> } | undefined;
      const painter = (size: OutputFrame) => {
        const key = `${size.width}x${size.height}`;
        if (made?.key !== key)
          made = { key, painter: createBandPainter({ words, template: o.template, width: size.width, height: size.height, fps: info.fps, fonts }) };
        return made.painter;
      };
      bandOf = (size) => painter(size).band;
      return render({ painter }, o.signal);
    },
    following: (captionStream, signal) => render({ captionStream }, signal),
  };
}

/**
 * A plan the render must apply: null when it keeps the whole source with no zoom and no bleep (a
 * masked job, or cuts that found nothing to cut), so the render stays the plain one (audio copied,
 * no edit graph: 2-7 CPU-s of 30 on a 30 s 1080x1920 clip).
 */
function changesPicture(plan: EditPlan | undefined, sourceSeconds: number): EditPlan | undefined {
  if (!plan) return undefined;
  const [only, ...more] = plan.keep;
  const whole = only !== undefined && more.length === 0 && only.start <= 0.001 && only.end >= sourceSeconds - 0.001;
  return whole && plan.zooms.length === 0 && plan.bleeps.length === 0 ? undefined : plan;
}

/** The hook title (issue 42) painted at the output size, clear of the caption band, shown for its seconds. */
function hookImage(
  hook: NonNullable<LeasedJob['hookTitle']>,
  template: Template,
  ingested: Ingested,
  bandOf: (size: OutputFrame) => BandRect,
): NonNullable<RenderVideoOptions['overlayImage']> {
  return (frame) => {
    const { png, x, y } = paintHookTitle({ hook, template, fonts: ingested.fonts, width: frame.width, height: frame.height, band: bandOf(frame) });
    return { png, x, y, until: hook.seconds };
  };
}

/** The template's uploaded font must be among the job's: one deleted after the job was created fails it. */
export function checkFont(template: Template, fonts: ReadonlyMap<string, CustomFontFace>): void {
  if (template.font.fontId && !fonts.has(template.font.fontId)) {
    throw new JobFailure('render-failed', `Font ${template.font.fontId} is no longer available (deleted after the job was created).`);
  }
}
