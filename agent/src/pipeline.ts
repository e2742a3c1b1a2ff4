import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseTemplate, toVtt } from '@captionfarm/captions';
import {
  CONTENT_TYPES,
  type CompletedOutput,
  type CompletedPoster,
  type CropPath,
  type EditPlan,
  type LeasedJob,
  type RecognitionChecks,
  type Word,
} from '@captionfarm/contracts';
import type { SafeFetchFn } from '@captionfarm/net';
import { centerCrop, type FramingAnalysis } from '@captionfarm/framing';
import { renderPoster, type BandPainter, type MediaInfo, type RenderResult } from '@captionfarm/renderer';
import { isEdited, planJobEdit } from './edit-stage.ts';
import { failureOf, JobAborted } from './errors.ts';
import { isFramed, planRenditions, posterTime, startFramingAnalysis } from './framing-stage.ts';
import { uploadFile } from './ingest.ts';
import { ingest } from './ingest-stage.ts';
import { recognizeBesideRender, renderedWithEveryWord } from './overlapped-stages.ts';
import { checkFont, jobRender } from './render-stage.ts';
import { sideWork } from './side-work.ts';
import { recognizer } from './transcribe-stage.ts';
import { jobDirPrefix } from './work-dir.ts';

/** What the pipeline needs of a transcriber (packages/transcriber implements it). */
export interface Transcriber {
  transcribe(opts: {
    audioPath: string;
    language?: string | undefined;
    /** Names, brands and jargon to spell as written (whisper.cpp's initial prompt). */
    vocabulary?: readonly string[];
    signal?: AbortSignal;
    workDir?: string;
    onWords?: (progress: { words: readonly Word[]; finalUntil: number }) => void;
    /**
     * whisper.cpp threads for each request from now on (undefined: the transcriber's own);
     * `wordsComing`: an earlier chunk's words are being aligned meanwhile, for onWords next.
     */
    threads?: (now: { wordsComing: boolean }) => number | undefined;
  }): Promise<{ language: string; languageProbability?: number | null; words: Word[]; checks?: RecognitionChecks }>;
  /** Loads the model now rather than in the first job (the agent calls it at start, without waiting). */
  warmUp?(): Promise<void>;
}

export type LeaseAnswer = { ok: true } | { ok: false; reason: 'lease-lost' | 'job-ended' };

/** The control-plane calls of one job, bound to its lease. */
export interface JobChannel {
  phase(phase: 'ingesting' | 'transcribing' | 'rendering', percent: number | null): Promise<void>;
  percent(percent: number): void;
  ingested(info: { durationSeconds: number; width: number; height: number }): Promise<LeaseAnswer>;
  /** The recognized words, kept by the control plane for the transcript exports. */
  transcribed(transcript: {
    language: string;
    languageProbability: number | null;
    words: { text: string; start: number; end: number }[];
    checks?: RecognitionChecks;
    /** An edited job's edit plan (issue 42). */
    edit?: EditPlan;
  }): Promise<LeaseAnswer>;
  /** A presigned PUT for the job's output: rendition `output` (default 0), or the poster (issue 43). */
  outputUploadUrl(sizeBytes: number, what?: { output?: number; target?: 'video' | 'poster' }): Promise<string>;
  complete(result: {
    resolution: { width: number; height: number };
    outputBytes: number;
    phaseSeconds: PhaseSeconds;
    /** Issue 43: every rendition uploaded (index 0 is the one above). */
    outputs?: CompletedOutput[];
    poster?: CompletedPoster;
  }): Promise<LeaseAnswer>;
}

export interface PipelineDeps {
  workDir: string;
  transcriber: Transcriber;
  safeFetch: SafeFetchFn;
  encoder: 'auto' | 'cpu' | 'nvenc';
  /** libx264 threads (the hardware plan); default x264's own. */
  x264Threads?: number | undefined;
  /** ffmpeg threads of the picture's analysis (the hardware plan); default ffmpeg's choice. */
  analysisThreads?: number | undefined;
  /**
   * Overlapped stages: the render starts with the first final words and follows recognition
   * (caption-feed.ts), rather than after the last word. Default false.
   */
  overlap?: boolean | undefined;
  /**
   * With overlap, whisper.cpp threads from the first recognized words on (whisper goes on to the
   * next chunk while their onsets are aligned, and the render starts once they are), while the
   * render runs beside recognition; undefined: the transcriber's own throughout. On a CPU-only
   * machine both share the cores: whisper's threads wait on each other at every step, so the
   * encode preempting one stalls them all, and fewer threads give the encode (niceness 10) the
   * cores whisper leaves.
   */
  whisperThreadsBesideRender?: number | undefined;
  /** A job's notable events (an overlapped render started over). */
  log?: ((message: string) => void) | undefined;
}

/** Wall seconds of each stage of one job, reported with complete (the control plane's phase histograms). */
interface PhaseSeconds {
  ingest: number;
  transcribe: number;
  render: number;
  upload: number;
}

/**
 * ingest -> transcribe -> render -> upload for one leased job, under one AbortSignal (cancel,
 * lost lease, shutdown), each stage in its own module: ingest-stage.ts, transcribe-stage.ts,
 * render-stage.ts, and overlapped-stages.ts for the render that starts with the first final words.
 * Failures are thrown as JobFailure with the spec's failure code (errors.ts, `failureOf`).
 */
export async function runPipeline(job: LeasedJob, channel: JobChannel, deps: PipelineDeps, signal: AbortSignal): Promise<void> {
  const dir = await mkdtemp(path.join(deps.workDir, jobDirPrefix(job.jobId)));
  const lap = stopwatch();
  const phaseSeconds: PhaseSeconds = { ingest: 0, transcribe: 0, render: 0, upload: 0 };
  // Work beside the main line, each stopped, and awaited, before the work dir goes: the audio
  // extraction, and an overlapped render (started before the words are final).
  const audioWork = sideWork(signal);
  const renderWork = sideWork(signal);
  // Issue 43: the picture's analysis (faces, shots), beside recognition.
  const framingWork = sideWork(signal);
  try {
    const ingested = await ingest({ job, channel, deps, dir, signal, audioWork });
    const analysis = startFramingAnalysis({ job, source: ingested.source, info: ingested.info, work: framingWork, threads: deps.analysisThreads });

    // --- transcribe (with overlapped stages, the render runs from the first final words on)
    phaseSeconds.ingest = lap();
    await channel.phase('transcribing', null);
    const template = parseTemplate(job.template);
    const output = path.join(dir, `output.${job.format}`);
    // An edited job (issue 42) plans its cuts from every word, then renders on their timeline;
    // a framed one (issue 43) renders every rendition at once, with every word known.
    const edited = isEdited(job);
    const framed = isFramed(job);
    let plan: EditPlan | undefined;
    const edit = async (given: Word[], language: string | null) => {
      const planned = await planJobEdit({ job, ingested, template, words: given, language, dir, signal });
      plan = planned.plan;
      const toWords = (list: typeof planned.words) => list.map((w) => ({ ...w, confidence: 1 }));
      return { plan: planned.plan, words: toWords(planned.words), sourceWords: toWords(planned.sourceWords) };
    };
    const render = jobRender({ job, channel, deps, ingested, template, output, signal, edit: () => plan });
    const recognize = recognizer({ job, channel, deps, ingested, dir, ...(edited ? { edit } : {}) });
    let words: Word[];
    let rendered: Promise<RenderResult> | undefined;
    if (job.transcript) {
      // A transcript given at creation replaces recognition: exactly its words are burned.
      words = job.transcript.words.map((w) => ({ ...w, confidence: 1 }));
      if (edited) words = await editGivenWords({ job, channel, words, edit });
    } else if (!deps.overlap || edited || framed) {
      words = await recognize({ signal });
    } else {
      const { fonts, info } = ingested;
      ({ words, rendered } = await recognizeBesideRender({
        job,
        deps,
        template,
        fonts,
        durationSeconds: info.durationSeconds,
        render,
        renderWork,
        recognize,
        signal,
      }));
    }

    // --- render
    phaseSeconds.transcribe = lap();
    await channel.phase('rendering', render.percent);
    render.reportPercents();
    let results: { path: string; format: 'mp4' | 'webm' | 'mov'; result: RenderResult }[];
    const seen = analysis ? await analysis : null;
    // The first rendition's window (the poster shows it): its subject's path, or the centre crop.
    let window: CropPath | undefined;
    // A framed job's first caption painter (the poster's captions when they are not burned).
    let painter: BandPainter | undefined;
    if (rendered) {
      results = [{ path: output, format: job.format, result: await renderedWithEveryWord({ rendered, render, words, log: deps.log }) }];
    } else if (framed) {
      checkFont(template, ingested.fonts);
      const renditions = planRenditions({ job, info: ingested.info, analysis: seen, dir, plan });
      window = renditions[0]!.crop;
      const subtitles = job.subtitles === 'burn' ? undefined : await writeSubtitles(dir, words);
      const made = await render.withRenditions(words, renditions, subtitles);
      painter = made.painters[0];
      results = renditions.map((r, i) => ({ path: r.output, format: r.format, result: made.results[i]! }));
    } else {
      checkFont(template, ingested.fonts);
      results = [{ path: output, format: job.format, result: await render.withWords(words) }];
    }
    const poster = job.poster
      ? await makePoster({ job, dir, first: results[0]!, analysis: seen, plan, words, painter, window, info: ingested.info, signal })
      : undefined;

    // --- upload
    phaseSeconds.render = lap();
    const outputs = await uploadRenditions({ job, channel, results, signal });
    if (poster) {
      const url = await channel.outputUploadUrl(poster.bytes, { target: 'poster' });
      await uploadFile(url, poster.path, poster.bytes, CONTENT_TYPES.jpg, signal);
    }
    phaseSeconds.upload = lap();
    const first = outputs[0]!;
    const done = await channel.complete({
      resolution: first.resolution,
      outputBytes: first.outputBytes,
      phaseSeconds,
      // A lease from before issue 43 lists no renditions: its control plane knows only the one.
      ...((job.outputs ?? []).length > 0 ? { outputs } : {}),
      ...(poster ? { poster: { at: poster.at, width: poster.width, height: poster.height, bytes: poster.bytes } } : {}),
    });
    if (!done.ok) throw new JobAborted(done.reason);
  } finally {
    audioWork.stop();
    renderWork.stop();
    framingWork.stop();
    await renderWork.ended();
    await audioWork.ended();
    await framingWork.ended();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Each rendition's file uploaded to its own presigned URL, in order; what complete reports of them. */
async function uploadRenditions(o: {
  job: LeasedJob;
  channel: JobChannel;
  results: { path: string; format: 'mp4' | 'webm' | 'mov'; result: RenderResult }[];
  signal: AbortSignal;
}): Promise<CompletedOutput[]> {
  const outputs: CompletedOutput[] = [];
  for (const [index, r] of o.results.entries()) {
    const size = (await stat(r.path)).size;
    const url = await o.channel.outputUploadUrl(size, index === 0 ? {} : { output: index });
    await uploadFile(url, r.path, size, CONTENT_TYPES[r.format], o.signal);
    outputs.push({ index, resolution: { width: r.result.width, height: r.result.height }, outputBytes: size });
  }
  return outputs;
}

/** The captions as a WebVTT file (issue 43's subtitle track), on the output timeline. */
async function writeSubtitles(dir: string, words: readonly Word[]): Promise<string> {
  const file = path.join(dir, 'captions.vtt');
  await writeFile(file, toVtt(words.map(({ text, start, end }) => ({ text, start, end }))));
  return file;
}

/** The poster (issue 43): a JPEG of the first rendition at the time asked for or chosen, with its caption. */
async function makePoster(o: {
  job: LeasedJob;
  dir: string;
  first: { path: string; result: RenderResult };
  analysis: FramingAnalysis | null;
  plan: EditPlan | undefined;
  words: readonly Word[];
  painter: BandPainter | undefined;
  window: CropPath | undefined;
  info: MediaInfo;
  signal: AbortSignal;
}): Promise<{ path: string; at: number; width: number; height: number; bytes: number }> {
  const { result } = o.first;
  const crop = o.window ?? centerCrop(o.info, { width: result.width, height: result.height });
  const at = posterTime({ job: o.job, analysis: o.analysis, plan: o.plan, outputSeconds: result.durationSeconds, captions: o.words, crop });
  const file = path.join(o.dir, 'poster.jpg');
  try {
    // Captions not burned (a subtitle track only): the poster gets them from the painter.
    const made = await renderPoster({
      video: o.first.path,
      at,
      output: file,
      painter: o.job.subtitles === 'track' ? (o.painter ?? null) : null,
      signal: o.signal,
    });
    return { path: file, ...made };
  } catch (err) {
    throw failureOf(err, 'renderer');
  }
}

/**
 * A given transcript's edit: planned from its words, reported (the control plane keeps the plan
 * beside the given words, which it does not replace), and its words on the output timeline.
 */
async function editGivenWords(o: {
  job: LeasedJob;
  channel: JobChannel;
  words: Word[];
  edit: (words: Word[], language: string | null) => Promise<{ plan: EditPlan; words: Word[]; sourceWords: Word[] }>;
}): Promise<Word[]> {
  const language = o.job.transcript?.language ?? o.job.language ?? null;
  const edited = await o.edit(o.words, language);
  const kept = await o.channel.transcribed({
    language: language ?? 'en',
    languageProbability: null,
    words: edited.sourceWords.map(({ text, start, end }) => ({ text, start, end })),
    edit: edited.plan,
  });
  if (!kept.ok) throw new JobAborted(kept.reason);
  return edited.words;
}

/** Seconds since the last lap (or the start), to the millisecond. */
function stopwatch(): () => number {
  let mark = performance.now();
  return () => {
    const t = performance.now();
    const s = (t - mark) / 1000;
    mark = t;
    return Math.round(s * 1000) / 1000;
  };
}
