import path from 'node:path';
import { toOutputTime, type CropPath, type EditPlan, type LeasedJob, type LeasedOutput, type TimedBox } from '@captionfarm/contracts';
import { analyzeFraming, centerCrop, choosePosterTime, facesOnOutput, planCrop, type FramingAnalysis } from '@captionfarm/framing';
import { planOutputSize, type MediaInfo, type Size } from '@captionfarm/renderer';
import { failureOf, firstLine, JobFailure } from './errors.ts';
import type { SideWork } from './side-work.ts';

// Issue 43: the renditions of a job, the picture's analysis (faces, shots) they need, and what it
// gives each rendition: the crop that follows the subject, the faces its captions keep off, the
// poster's frame.

/** Every rendition of the job, the first being its own (a lease from before issue 43 lists none: one, centre-cropped). */
function renditionsOf(job: Pick<LeasedJob, 'outputs' | 'resolution' | 'format'>): LeasedOutput[] {
  const listed = job.outputs ?? [];
  return listed.length > 0 ? listed : [{ resolution: job.resolution, format: job.format, reframe: 'center' }];
}

/**
 * Whether the job is framed: several renditions, one reframed on its subject, captions placed
 * off faces, or captions as a subtitle track. A framed job renders once every word is known (no
 * overlapped render), every rendition in one ffmpeg run.
 */
export function isFramed(job: LeasedJob): boolean {
  const renditions = renditionsOf(job);
  return renditions.length > 1 || renditions.some((r) => r.reframe === 'subject') || job.placement === 'auto' || job.subtitles !== 'burn';
}

/** Whether the picture must be analysed: a subject to follow, faces to keep captions off, a poster to choose. */
function needsAnalysis(job: LeasedJob): boolean {
  return renditionsOf(job).some((r) => r.reframe === 'subject') || job.placement === 'auto' || (job.poster !== null && job.poster.at === null);
}

/**
 * The picture's analysis, started beside recognition (it decodes the source once, small), or null
 * when the job needs none. A failure fails the job (render-failed, retried on another attempt):
 * a reframe silently left centred would be a success the user did not ask for.
 */
export function startFramingAnalysis(o: {
  job: LeasedJob;
  source: string;
  info: MediaInfo;
  work: SideWork;
  /** ffmpeg's decoding threads (the hardware plan's analysisThreads); default ffmpeg's choice. */
  threads?: number | undefined;
}): Promise<FramingAnalysis> | null {
  if (!needsAnalysis(o.job)) return null;
  const { info } = o;
  return o.work.keep(
    analyzeFraming({
      input: o.source,
      source: { width: info.width, height: info.height, durationSeconds: info.durationSeconds, fps: info.fps },
      signal: o.work.signal,
      ...(o.threads ? { threads: o.threads } : {}),
    }).catch((err: unknown) => {
      if (o.work.signal.aborted) throw err;
      throw new JobFailure('render-failed', `The picture's analysis (faces, shots) failed: ${firstLine(String((err as Error).message ?? err))}`);
    }),
  );
}

/** One rendition as the render makes it. */
export interface RenditionPlan {
  index: number;
  output: string;
  format: 'mp4' | 'webm';
  /** The output size (the plan's frame budget applied). */
  size: Size;
  /** reframe subject: the window following the subject; else undefined (the centre crop). */
  crop: CropPath | undefined;
  /** placement auto: the faces its captions keep off (output pixels and seconds); else empty. */
  avoid: TimedBox[];
}

/** Each rendition's size, crop and faces to avoid, once the words (and an edit's cuts) are known. */
export function planRenditions(o: {
  job: LeasedJob;
  info: MediaInfo;
  analysis: FramingAnalysis | null;
  dir: string;
  plan: EditPlan | undefined;
}): RenditionPlan[] {
  const { job, info, analysis } = o;
  const toOutput = outputClock(o.plan);
  return renditionsOf(job).map((r, index) => {
    let size: Size;
    try {
      size = planOutputSize({ source: info, resolution: r.resolution ?? undefined, maxPixels: job.frameBudget });
    } catch (err) {
      throw failureOf(err, 'renderer');
    }
    const format = r.format === 'webm' ? 'webm' : 'mp4';
    const crop = r.reframe === 'subject' && analysis ? planCrop(analysis, size) : undefined;
    const avoid =
      job.placement === 'auto' && analysis
        ? facesOnOutput({ analysis, crop: crop ?? centerCrop(info, size), out: size, ...(toOutput ? { toOutput } : {}) })
        : [];
    const output = path.join(o.dir, index === 0 ? `output.${format}` : `output-${index}.${format}`);
    return { index, output, format, size, crop, avoid };
  });
}

/** The poster's time on the output timeline: the one asked for (clamped to the output), else chosen from the picture. */
export function posterTime(o: {
  job: LeasedJob;
  analysis: FramingAnalysis | null;
  plan: EditPlan | undefined;
  outputSeconds: number;
  captions: readonly { start: number; end: number }[];
  /** The first rendition's window: a face is central in what the poster shows. */
  crop: CropPath | undefined;
}): number {
  const last = Math.max(0, o.outputSeconds - 0.05);
  const asked = o.job.poster?.at ?? null;
  if (asked !== null) return Math.min(asked, last);
  if (!o.analysis) return Math.min(o.outputSeconds / 3, last);
  const toOutput = outputClock(o.plan);
  const at = choosePosterTime({
    analysis: o.analysis,
    outputSeconds: o.outputSeconds,
    captions: o.captions,
    ...(o.crop ? { crop: o.crop } : {}),
    ...(toOutput ? { toOutput } : {}),
  });
  return Math.min(Math.max(0, at), last);
}

/** Source -> output seconds for an edited job (null: cut); undefined when the job keeps the source's timeline. */
function outputClock(plan: EditPlan | undefined): ((t: number) => number | null) | undefined {
  if (!plan) return undefined;
  return (t) => toOutputTime(plan.keep, t);
}
