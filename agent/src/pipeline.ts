import { mkdtemp, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseTemplate } from '@captionfarm/captions';
import { CONTENT_TYPES, fitWords, type LeasedJob, type Word } from '@captionfarm/contracts';
import { createBandPainter, probeMedia, renderVideo, RenderError } from '@captionfarm/renderer';
import type { SafeFetchFn } from '@captionfarm/net';
import { JobAborted, JobFailure } from './errors.ts';
import { extractWhisperWav, startAudioTap } from './audio-tap.ts';
import { downloadSource, uploadFile } from './ingest.ts';
import { loadJobFonts } from './fonts.ts';
import { jobDirPrefix } from './work-dir.ts';

/** What the pipeline needs of a transcriber (packages/transcriber implements it). */
export interface Transcriber {
  transcribe(opts: {
    audioPath: string;
    language?: string | undefined;
    signal?: AbortSignal;
    workDir?: string;
  }): Promise<{ language: string; languageProbability?: number | null; words: Word[] }>;
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

    // --- transcribe
    // A transcript given at creation replaces recognition: exactly its words are burned.
    phaseSeconds.ingest = lap();
    await channel.phase('transcribing', null);
    let words: Word[];
    if (job.transcript) {
      words = job.transcript.words.map((w) => ({ ...w, confidence: 1 }));
    } else {
      let recognized;
      try {
        const audioPath = (await audio?.catch(() => undefined)) ?? source;
        recognized = await deps.transcriber.transcribe({ audioPath, language: job.language ?? undefined, signal, workDir: dir });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new JobFailure('transcription-failed', firstLine((err as Error).message));
      }
      // Exported words must be valid to send back as a transcript (end > start, within the source).
      words = fitWords(recognized.words, info.durationSeconds);
      const kept = await channel.transcribed({
        language: recognized.language,
        languageProbability: recognized.languageProbability ?? null,
        words: words.map(({ text, start, end }) => ({ text, start, end })),
      });
      if (!kept.ok) throw new JobAborted(kept.reason);
    }

    // --- render
    phaseSeconds.transcribe = lap();
    await channel.phase('rendering', 0);
    const template = parseTemplate(job.template);
    if (template.font.fontId && !fonts.has(template.font.fontId)) {
      throw new JobFailure('render-failed', `Font ${template.font.fontId} is no longer available (deleted after the job was created).`);
    }
    const output = path.join(dir, `output.${job.format}`);
    let result;
    try {
      result = await renderVideo({
        input: source,
        output,
        painter: (size) => createBandPainter({ words, template, width: size.width, height: size.height, fps: info.fps, fonts }),
        format: job.format,
        overlay: job.overlay,
        quality: job.quality,
        resolution: job.resolution ?? undefined,
        maxPixels: job.frameBudget,
        signal,
        onProgress: (p) => channel.percent(p),
        encoder: deps.encoder,
        threads: deps.x264Threads,
        source: info,
      });
    } catch (err) {
      if (err instanceof RenderError) throw new JobFailure(err.code, firstLine(err.message));
      throw err;
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
    await audio?.catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 500);
}
