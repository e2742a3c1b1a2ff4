import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { getBuiltinTemplate } from '@captionfarm/captions';
import type { LeasedJob, Word } from '@captionfarm/contracts';
import { createSafeFetch } from '@captionfarm/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobAborted, JobFailure, runPipeline, type JobChannel, type Transcriber } from '../src/index.ts';
import type { LeaseAnswer } from '../src/pipeline.ts';
import { makeClip } from './e2e-harness.ts';

// runPipeline against local files with a scripted transcriber (real ffprobe, ffmpeg and renderer):
// each fault ends in the failure code the job reports, the same with and without overlapped stages.
// Written before pipeline.ts was split into its stages (issue 41), and passing unchanged after.

let dir: string;
let server: Server;
let base: string;
const files = new Map<string, string>();

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cf-pipeline-failures-'));
  files.set('/clip.mp4', await makeClip(dir, 'clip.mp4', { width: 160, height: 120, seconds: 2, silentAudio: true }));
  files.set('/mute.mp4', await makeClip(dir, 'mute.mp4', { width: 160, height: 120, seconds: 2 }));
  const garbage = path.join(dir, 'garbage.mp4');
  await writeFile(garbage, Buffer.alloc(64 * 1024, 7));
  files.set('/garbage.mp4', garbage);
  server = createServer((req, res) => {
    const file = files.get(req.url ?? '');
    if (req.method === 'GET' && file) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      createReadStream(file).pipe(res);
    } else if (req.method === 'PUT') {
      pipeline(req, createWriteStream(path.join(dir, `out-${randomUUID()}`))).then(
        () => res.writeHead(200).end(),
        () => res.writeHead(500).end(),
      );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  server?.close();
  await rm(dir, { recursive: true, force: true });
});

const WORDS: Word[] = [
  { text: 'hello', start: 0.2, end: 0.6, confidence: 0.9 },
  { text: 'world', start: 0.7, end: 1.2, confidence: 0.9 },
];

/** A transcriber that reports its words (or fails) as told, honouring its signal. */
function scripted(o: { fail?: 'at-once' | 'after-words'; hang?: boolean; dropAll?: boolean } = {}): Transcriber {
  return {
    async transcribe({ onWords, signal }) {
      if (o.fail === 'at-once') throw new Error('whisper-server exited with code 1\nstderr tail');
      onWords?.({ words: WORDS.slice(0, 1), finalUntil: 0.65 });
      if (o.fail === 'after-words') throw new Error('whisper-server stopped answering');
      if (o.hang) {
        await new Promise((_, reject) => {
          if (signal?.aborted) reject(signal.reason);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      if (o.dropAll) return { language: 'en', words: [], checks: { dropped: [{ text: 'hello', reason: 'a repeated loop\nmore' }] } as never };
      return { language: 'en', words: WORDS };
    },
  };
}

interface Outcome {
  error?: { name: string; code?: string; why?: string; message: string };
  phases: string[];
}

async function runJob(o: {
  file?: string;
  transcriber?: Transcriber;
  overlap?: boolean;
  job?: Partial<LeasedJob>;
  transcribed?: LeaseAnswer;
  signal?: AbortSignal;
}): Promise<Outcome> {
  const file = o.file ?? '/clip.mp4';
  const phases: string[] = [];
  const channel: JobChannel = {
    async phase(phase) {
      phases.push(phase);
    },
    percent() {},
    async ingested() {
      return { ok: true };
    },
    async transcribed() {
      return o.transcribed ?? { ok: true };
    },
    async outputUploadUrl() {
      return `${base}/output`;
    },
    async complete() {
      phases.push('complete');
      return { ok: true };
    },
  };
  const job: LeasedJob = {
    jobId: randomUUID(),
    leaseId: 'test',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    deadlineAt: null,
    source: { kind: 'upload', url: `${base}${file}`, sizeBytes: (await stat(files.get(file)!)).size },
    templateId: 'karaoke',
    template: getBuiltinTemplate('karaoke'),
    format: 'mp4',
    quality: 'low',
    overlay: false,
    fonts: [],
    resolution: null,
    language: 'en',
    transcript: null,
    vocabulary: [],
    replacements: [],
    maxInputSeconds: 600,
    frameBudget: 1080 * 1920,
    maxSourceBytes: 2 ** 31,
    edit: null,
    hookTitle: null,
    profanity: 'off',
    profanityWords: [],
    outputs: [],
    safeArea: 'none',
    placement: 'fixed',
    poster: null,
    subtitles: 'burn',
    ...o.job,
  };
  try {
    await runPipeline(
      job,
      channel,
      {
        workDir: dir,
        transcriber: o.transcriber ?? scripted(),
        safeFetch: createSafeFetch(),
        encoder: 'cpu',
        overlap: o.overlap,
        whisperThreadsBesideRender: 1,
      },
      o.signal ?? new AbortController().signal,
    );
    return { phases };
  } catch (err) {
    const e = err as Error;
    return {
      phases,
      error: {
        name: e.name,
        ...(err instanceof JobFailure ? { code: err.code } : {}),
        ...(err instanceof JobAborted ? { why: err.why } : {}),
        message: e.message.split('\n')[0]!,
      },
    };
  }
}

describe.each([false, true])('runPipeline, overlap %s', (overlap) => {
  // A recognition that fails with the render overlapped fails the job as it would without overlap:
  // stopping the render for it is no failure of the render's (until this was fixed, that abort won,
  // and the agent reported `internal`: "Unexpected agent error: This operation was aborted").

  it('a job with words succeeds through every phase', async () => {
    expect(await runJob({ overlap })).toEqual({ phases: ['ingesting', 'transcribing', 'rendering', 'complete'] });
  });

  it('a transcriber that fails at once: transcription-failed with its first line', async () => {
    const r = await runJob({ overlap, transcriber: scripted({ fail: 'at-once' }) });
    expect(r.error).toEqual({ name: 'JobFailure', code: 'transcription-failed', message: 'whisper-server exited with code 1' });
    expect(r.phases).toEqual(['ingesting', 'transcribing']);
  });

  it('a transcriber that fails after its first words: transcription-failed', async () => {
    const r = await runJob({ overlap, transcriber: scripted({ fail: 'after-words' }) });
    expect(r.error).toEqual({ name: 'JobFailure', code: 'transcription-failed', message: 'whisper-server stopped answering' });
  });

  it('every recognized word left out by our checks: transcription-failed', async () => {
    const r = await runJob({ overlap, transcriber: scripted({ dropAll: true }) });
    expect(r.error).toEqual({
      name: 'JobFailure',
      code: 'transcription-failed',
      message: 'every recognized word was left out by our checks (a repeated loop)',
    });
  });

  it('garbage bytes: source-unreadable; no audio track: ingest-failed', async () => {
    expect((await runJob({ overlap, file: '/garbage.mp4' })).error).toMatchObject({ name: 'JobFailure', code: 'source-unreadable' });
    expect((await runJob({ overlap, file: '/mute.mp4' })).error).toEqual({
      name: 'JobFailure',
      code: 'ingest-failed',
      message: 'The video has no audio track, so there is no speech to caption.',
    });
  });

  it('a font the template names but the job lacks: render-failed', async () => {
    const template = getBuiltinTemplate('karaoke')!;
    const fontId = randomUUID();
    const r = await runJob({ overlap, job: { template: { ...template, font: { ...template.font, fontId } } } });
    expect(r.error).toEqual({
      name: 'JobFailure',
      code: 'render-failed',
      message: `Font ${fontId} is no longer available (deleted after the job was created).`,
    });
  });

  it('an upscale: output-larger-than-source from the renderer, and recognition stopped with it', async () => {
    const r = await runJob({ overlap, transcriber: scripted({ hang: overlap }), job: { resolution: { width: 1080, height: 1920 } } });
    expect(r.error).toMatchObject({ name: 'JobFailure', code: 'output-larger-than-source' });
  });

  it('a lease lost when the words are reported: JobAborted, not a failure', async () => {
    const r = await runJob({ overlap, transcribed: { ok: false, reason: 'lease-lost' } });
    expect(r.error).toEqual({ name: 'JobAborted', why: 'lease-lost', message: 'job aborted: lease-lost' });
  });

  it('a cancel from outside while recognizing: JobAborted as the signal says, not a failure', async () => {
    const cancel = new AbortController();
    const hanging = scripted({ hang: true });
    const transcriber: Transcriber = {
      transcribe: (opts) => {
        setTimeout(() => cancel.abort(new JobAborted('cancelled')), 300);
        return hanging.transcribe(opts);
      },
    };
    const r = await runJob({ overlap, transcriber, signal: cancel.signal });
    expect(r.error).toEqual({ name: 'JobAborted', why: 'cancelled', message: 'job aborted: cancelled' });
    expect(r.phases).toEqual(['ingesting', 'transcribing']);
  });
});
