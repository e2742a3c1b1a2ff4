import { mkdtemp, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseTemplate } from '@captionfarm/captions';
import { CONTENT_TYPES, fitWords, replaceFinalWords, replaceWords, type LeasedJob, type RecognitionChecks, type Word } from '@captionfarm/contracts';
import {
  BandOverflow,
  CaptionsChanged,
  createBandPainter,
  probeMedia,
  renderVideo,
  RenderError,
  type OutputFrame,
  type RenderVideoOptions,
} from '@captionfarm/renderer';
import type { SafeFetchFn } from '@captionfarm/net';
import { JobAborted, JobFailure } from './errors.ts';
import { extractWhisperWav, startAudioTap } from './audio-tap.ts';
import { downloadSource, uploadFile } from './ingest.ts';
import { loadJobFonts } from './fonts.ts';
import { createCaptionFeed } from './caption-feed.ts';
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
  }): Promise<LeaseAnswer>;
  outputUploadUrl(sizeBytes: number): Promise<string>;
  complete(result: { resolution: { width: number; height: number }; outputBytes: number; phaseSeconds: PhaseSeconds }): Promise<LeaseAnswer>;
}

export interface PipelineDeps {
  workDir: string;
  transcriber: Transcriber;
  safeFetch: SafeFetchFn;
  encoder: 'auto' | 'cpu' | 'nvenc';
  /** libx264 threads (the hardware plan); default x264's own. */
  x264Threads?: number | undefined;
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
 * lost lease, shutdown). Failures are thrown as JobFailure with the spec's failure code.
 */
export async function runPipeline(job: LeasedJob, channel: JobChannel, deps: PipelineDeps, signal: AbortSignal): Promise<void> {
  const dir = await mkdtemp(path.join(deps.workDir, jobDirPrefix(job.jobId)));
  let mark = performance.now();
  const lap = () => {
    const t = performance.now();
    const s = (t - mark) / 1000;
    mark = t;
    return Math.round(s * 1000) / 1000;
  };
  const phaseSeconds: PhaseSeconds = { ingest: 0, transcribe: 0, render: 0, upload: 0 };
  // Work beside the main line (the audio extraction): stopped, and awaited, before the work dir goes.
  const side = new AbortController();
  const sideSignal = AbortSignal.any([signal, side.signal]);
  let audio: Promise<string> | undefined;
  // An overlapped render (started before the words are final): stopped, and awaited, before the work dir goes.
  let early: ReturnType<typeof renderVideo> | undefined;
  const stopEarly = new AbortController();
  try {
    // --- ingest
    await channel.phase('ingesting', null);
    const source = path.join(dir, 'source');
    // The whisper WAV is made while the source downloads (or, for an MP4 indexed at its end, from
    // the file while the probe and the ingest report run): see audio-tap.ts.
    const wav = path.join(dir, 'audio-16k.wav');
    const tap = job.transcript ? undefined : startAudioTap(wav, sideSignal);
    try {
      await downloadSource({ source: job.source, dest: source, maxBytes: job.maxSourceBytes, safeFetch: deps.safeFetch, signal, tap });
    } catch (err) {
      await tap?.cancel();
      throw err;
    }
    if (tap) {
      audio = (async () => (await tap.end()) ?? ((await extractWhisperWav(source, wav, sideSignal)) ? wav : source))();
      // Awaited before the work dir goes; a failure here only means the transcriber reads the source itself.
      audio.catch(() => undefined);
    }
    let info;
    try {
      info = await probeMedia(source, { signal });
    } catch (err) {
      if (err instanceof RenderError) throw new JobFailure(err.code === 'source-unreadable' ? 'source-unreadable' : 'ingest-failed', firstLine(err.message));
      throw err;
    }
    if (!info.hasVideo) throw new JobFailure('source-unreadable', 'The file has no video stream.');
    if (!info.hasAudio) throw new JobFailure('ingest-failed', 'The video has no audio track, so there is no speech to caption.');
    if (!(info.durationSeconds > 0)) throw new JobFailure('source-unreadable', 'The video has no measurable duration.');
    const verdict = await channel.ingested({ durationSeconds: info.durationSeconds, width: info.width, height: info.height });
    if (!verdict.ok) throw new JobAborted(verdict.reason);
    // Uploaded fonts before the costly part: a font that cannot be used fails the job early.
    const fonts = await loadJobFonts(job.fonts, path.join(deps.workDir, 'font-cache'), signal);

    // --- transcribe (with overlapped stages, the render runs from the first final words on)
    phaseSeconds.ingest = lap();
    await channel.phase('transcribing', null);
    const template = parseTemplate(job.template);
    const checkFont = () => {
      if (template.font.fontId && !fonts.has(template.font.fontId)) {
        throw new JobFailure('render-failed', `Font ${template.font.fontId} is no longer available (deleted after the job was created).`);
      }
    };
    const output = path.join(dir, `output.${job.format}`);
    let rendering = false;
    let percent = 0;
    const render = async (captions: Pick<RenderVideoOptions, 'painter' | 'captionStream'>, renderSignal = signal) => {
      try {
        return await renderVideo({
          input: source,
          output,
          ...captions,
          format: job.format,
          overlay: job.overlay,
          quality: job.quality,
          resolution: job.resolution ?? undefined,
          maxPixels: job.frameBudget,
          signal: renderSignal,
          onProgress: (p) => {
            percent = p;
            if (rendering) channel.percent(p);
          },
          encoder: deps.encoder,
          threads: deps.x264Threads,
          source: info,
        });
      } catch (err) {
        if (err instanceof RenderError) throw new JobFailure(err.code, firstLine(err.message));
        throw err;
      }
    };
    // Both come with every lease; `?? []` for a lease answered by a control plane from before them (not parsed).
    const vocabulary = job.vocabulary ?? [];
    const replacements = job.replacements ?? [];
    const painterFor = (words: Word[]) => (size: OutputFrame) =>
      createBandPainter({ words, template, width: size.width, height: size.height, fps: info.fps, fonts });
    const recognize = async (
      onWords?: (progress: { words: readonly Word[]; finalUntil: number }) => void,
      recognizeSignal = signal,
      threads?: (now: { wordsComing: boolean }) => number | undefined,
    ): Promise<Word[]> => {
      let recognized;
      try {
        const audioPath = (await audio?.catch(() => undefined)) ?? source;
        recognized = await deps.transcriber.transcribe({
          audioPath,
          language: job.language ?? undefined,
          ...(vocabulary.length > 0 ? { vocabulary } : {}),
          signal: recognizeSignal,
          workDir: dir,
          ...(onWords ? { onWords } : {}),
          ...(threads ? { threads } : {}),
        });
      } catch (err) {
        if (recognizeSignal.aborted) throw err;
        throw new JobFailure('transcription-failed', firstLine((err as Error).message));
      }
      // Exported words must be valid to send back as a transcript (end > start, within the source),
      // and are the words the job burns: the replacements applied first.
      const words = fitWords(replaceWords(recognized.words, replacements), info.durationSeconds);
      const kept = await channel.transcribed({
        language: recognized.language,
        languageProbability: recognized.languageProbability ?? null,
        words: words.map(({ text, start, end }) => ({ text, start, end })),
        ...(recognized.checks ? { checks: recognized.checks } : {}),
      });
      if (!kept.ok) throw new JobAborted(kept.reason);
      // Speech was recognized and our checks left none of it: a failure of ours, never a silent
      // success (words the job's own replacements removed are the job's choice, not a failure).
      const dropped = recognized.checks?.dropped ?? [];
      if (recognized.words.length === 0 && dropped.length > 0) {
        throw new JobFailure('transcription-failed', `every recognized word was left out by our checks (${firstLine(dropped[0]!.reason)})`);
      }
      return words;
    };

    let words: Word[];
    let result: Awaited<ReturnType<typeof renderVideo>> | undefined;
    if (job.transcript) {
      // A transcript given at creation replaces recognition: exactly its words are burned.
      words = job.transcript.words.map((w) => ({ ...w, confidence: 1 }));
    } else if (!deps.overlap) {
      words = await recognize();
    } else {
      checkFont();
      const feed = createCaptionFeed({ template, fonts });
      // The render reads the words as recognition makes them final, and waits where they are not.
      early = render({ captionStream: (frame) => feed.stream(frame) }, AbortSignal.any([signal, stopEarly.signal]));
      // A render that fails for its own reasons stops recognition at once; one whose captions
      // outgrew what was planned (BandOverflow, CaptionsChanged) is redone once the words are in.
      const recognition = new AbortController();
      // The render waits for the first final words; from then on it runs beside recognition, until
      // it ends (one that starts over leaves the cores to recognition until the words are in).
      let renderUnderWay = false;
      let renderEnded = false;
      early.catch((err: unknown) => {
        renderEnded = true;
        if (!startsOver(err)) recognition.abort(err);
      });
      try {
        words = await recognize(
          (p) => {
            renderUnderWay = true;
            // Replaced as the final list will be: words a several-word replacement could still join are held back.
            const replaced = replaceFinalWords(p.words, p.finalUntil, replacements);
            feed.push(fitWords(replaced.words, info.durationSeconds), replaced.finalUntil);
          },
          AbortSignal.any([signal, recognition.signal]),
          ({ wordsComing }) => ((renderUnderWay || wordsComing) && !renderEnded ? deps.whisperThreadsBesideRender : undefined),
        );
      } catch (err) {
        feed.fail(err);
        stopEarly.abort();
        const renderFailure = await early.then(
          () => undefined,
          (e: unknown) => e,
        );
        if (recognition.signal.aborted && !signal.aborted) throw renderFailure;
        throw err;
      }
      feed.push(words, Infinity);
      deps.log?.(`overlapped stages: the words are final with the render at ${percent}%`);
    }

    // --- render
    phaseSeconds.transcribe = lap();
    await channel.phase('rendering', percent);
    // Percents from here on: none goes out before the phase that carries them.
    rendering = true;
    if (early) {
      try {
        result = await early;
      } catch (err) {
        if (!startsOver(err)) throw err;
        deps.log?.(`overlapped render started over after the words were in: ${firstLine((err as Error).message)}`);
        percent = 0;
        result = await render({ painter: painterFor(words) });
      }
    } else {
      checkFont();
      result = await render({ painter: painterFor(words) });
    }

    // --- upload
    phaseSeconds.render = lap();
    const size = (await stat(output)).size;
    const url = await channel.outputUploadUrl(size);
    await uploadFile(url, output, size, CONTENT_TYPES[job.format], signal);
    phaseSeconds.upload = lap();
    const done = await channel.complete({ resolution: { width: result.width, height: result.height }, outputBytes: size, phaseSeconds });
    if (!done.ok) throw new JobAborted(done.reason);
  } finally {
    side.abort();
    stopEarly.abort();
    await early?.catch(() => undefined);
    await audio?.catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 500);
}

/** An overlapped render that failed only because the captions outgrew what it planned for: redone with every word known. */
function startsOver(err: unknown): boolean {
  return err instanceof BandOverflow || err instanceof CaptionsChanged;
}
