import { inkBounds, unionRect, type CaptionLayout, type CustomFontFace, type Rect as BandRect, type Template } from '@captionfarm/captions';
import type { EditPlan, LeasedJob, SafeAreaName, Word } from '@captionfarm/contracts';
import {
  createBandPainter,
  renderRenditions,
  type BandPainter,
  paintHookTitle,
  renderVideo,
  type CaptionStream,
  type OutputFrame,
  type RenderResult,
  type RenderVideoOptions,
} from '@captionfarm/renderer';
import { failureOf, JobFailure } from './errors.ts';
import type { RenditionPlan } from './framing-stage.ts';
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
  /**
   * Issue 43: every rendition of a framed job from `words`, in one ffmpeg run; `subtitles`, a
   * WebVTT file of the words, muxed as a track into each (subtitles track or both).
   */
  withRenditions(
    words: Word[],
    renditions: RenditionPlan[],
    subtitles: string | undefined,
  ): Promise<{ results: RenderResult[] /** Each rendition's caption painter: the poster's captions when they are not burned. */; painters: BandPainter[] }>;
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
        ...(job.hookTitle ? { overlayImage: hookImage(job.hookTitle, o.template, ingested, bandOf, job.safeArea) } : {}),
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
          made = {
            key,
            painter: createBandPainter({ words, template: o.template, width: size.width, height: size.height, fps: info.fps, fonts, safeArea: job.safeArea }),
          };
        return made.painter;
      };
      bandOf = (size) => painter(size).band;
      return render({ painter }, o.signal);
    },
    following: (captionStream, signal) => render({ captionStream }, signal),
    withRenditions: async (words, renditions, subtitles) => {
      percent = 0;
      const plan = changesPicture(o.edit?.(), info.durationSeconds);
      const painters = renditions.map((r) =>
        createBandPainter({
          words,
          template: o.template,
          width: r.size.width,
          height: r.size.height,
          fps: info.fps,
          fonts,
          safeArea: job.safeArea,
          placement: job.placement,
          avoid: r.avoid,
        }),
      );
      try {
        const results = await renderRenditions({
          input: ingested.source,
          source: info,
          quality: job.quality,
          maxPixels: job.frameBudget,
          signal: o.signal,
          onProgress: (p) => {
            percent = p;
            if (reporting) o.channel.percent(p);
          },
          encoder: o.deps.encoder,
          threads: o.deps.x264Threads,
          ...(plan ? { edit: { keep: plan.keep, zooms: plan.zooms, bleeps: plan.bleeps } } : {}),
          renditions: renditions.map((r, i) => {
            const painter = painters[i]!;
            return {
              output: r.output,
              format: r.format,
              resolution: r.size,
              crop: r.crop,
              painter: job.subtitles === 'track' ? null : painter,
              ...(job.hookTitle
                ? { overlayImage: hookImage(job.hookTitle, o.template, ingested, () => bandDuring(painter, o.template, job.hookTitle!.seconds), job.safeArea) }
                : {}),
              ...(subtitles ? { subtitles: { path: subtitles, language: job.language } } : {}),
            };
          }),
        });
        return { results, painters };
      } catch (err) {
        throw failureOf(err, 'renderer');
      }
    },
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
  safeArea: SafeAreaName,
): NonNullable<RenderVideoOptions['overlayImage']> {
  return (frame) => {
    const { png, x, y } = paintHookTitle({ hook, template, fonts: ingested.fonts, width: frame.width, height: frame.height, band: bandOf(frame), safeArea });
    return { png, x, y, until: hook.seconds };
  };
}

/**
 * Where the captions paint during the first `seconds` (the hook title's): the ink of the pages on
 * screen then. With placement auto the painter's band also holds every place a later page moved
 * to, which could leave the title no room; the title only has to keep clear of what shares its time.
 */
function bandDuring(painter: BandPainter & { layout: CaptionLayout }, template: Template, seconds: number): BandRect {
  const { pages } = inkBounds(painter.layout, template);
  let box: BandRect | null = null;
  painter.layout.pages.forEach((page, i) => {
    const ink = pages[i];
    if (ink && page.start < seconds) box = unionRect(box, ink);
  });
  return box ?? { x: 0, y: 0, width: 0, height: 0 };
}

/** The template's uploaded font must be among the job's: one deleted after the job was created fails it. */
export function checkFont(template: Template, fonts: ReadonlyMap<string, CustomFontFace>): void {
  if (template.font.fontId && !fonts.has(template.font.fontId)) {
    throw new JobFailure('render-failed', `Font ${template.font.fontId} is no longer available (deleted after the job was created).`);
  }
}
