import path from 'node:path';
import type { CustomFontFace } from '@captionfarm/captions';
import type { LeasedJob } from '@captionfarm/contracts';
import { probeMedia, type MediaInfo } from '@captionfarm/renderer';
import { extractWhisperWav, startAudioTap } from './audio-tap.ts';
import { failureOf, JobAborted, JobFailure } from './errors.ts';
import { loadJobFonts } from './fonts.ts';
import { downloadSource } from './ingest.ts';
import type { JobChannel, PipelineDeps } from './pipeline.ts';
import type { SideWork } from './side-work.ts';

/** What the ingest stage leaves for the later ones. */
export interface Ingested {
  /** The downloaded source file. */
  source: string;
  info: MediaInfo;
  /** The job's uploaded fonts by id, loaded and checked. */
  fonts: Map<string, CustomFontFace>;
  /** The whisper WAV (or the source, when it could not be made) on its way; undefined for a job with a transcript. */
  audio: Promise<string> | undefined;
}

/**
 * Download, probe and report the source, and load the job's fonts. The whisper WAV is made beside
 * the download (`audioWork`, awaited before the work dir goes): a failure there only means the
 * transcriber reads the source itself.
 */
export async function ingest(o: {
  job: LeasedJob;
  channel: JobChannel;
  deps: Pick<PipelineDeps, 'workDir' | 'safeFetch'>;
  /** The job's work dir. */
  dir: string;
  signal: AbortSignal;
  audioWork: SideWork;
}): Promise<Ingested> {
  const { job, channel, signal } = o;
  await channel.phase('ingesting', null);
  const source = path.join(o.dir, 'source');
  // The whisper WAV is made while the source downloads (or, for an MP4 indexed at its end, from
  // the file while the probe and the ingest report run): see audio-tap.ts.
  const wav = path.join(o.dir, 'audio-16k.wav');
  const tap = job.transcript ? undefined : startAudioTap(wav, o.audioWork.signal);
  try {
    await downloadSource({ source: job.source, dest: source, maxBytes: job.maxSourceBytes, safeFetch: o.deps.safeFetch, signal, tap });
  } catch (err) {
    await tap?.cancel();
    throw err;
  }
  const audio = tap
    ? o.audioWork.keep((async () => (await tap.end()) ?? ((await extractWhisperWav(source, wav, o.audioWork.signal)) ? wav : source))())
    : undefined;
  let info: MediaInfo;
  try {
    info = await probeMedia(source, { signal });
  } catch (err) {
    throw failureOf(err, 'probe');
  }
  if (!info.hasVideo) throw new JobFailure('source-unreadable', 'The file has no video stream.');
  if (!info.hasAudio) throw new JobFailure('ingest-failed', 'The video has no audio track, so there is no speech to caption.');
  if (!(info.durationSeconds > 0)) throw new JobFailure('source-unreadable', 'The video has no measurable duration.');
  const verdict = await channel.ingested({ durationSeconds: info.durationSeconds, width: info.width, height: info.height });
  if (!verdict.ok) throw new JobAborted(verdict.reason);
  // Uploaded fonts before the costly part: a font that cannot be used fails the job early.
  const fonts = await loadJobFonts(job.fonts, path.join(o.deps.workDir, 'font-cache'), signal);
  return { source, info, fonts, audio };
}
