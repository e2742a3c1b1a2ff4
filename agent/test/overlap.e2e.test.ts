import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TranscriptRecordSchema } from '@captionfarm/contracts';
import { ffmpegProcesses, makeClip, run, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

/**
 * Overlapped stages through the whole product: an agent that renders while recognition runs
 * (the hardware plan's default; on this CPU whisper drops to 1 thread once the render runs) on the shared 33.6 s English read,
 * which the transcriber cuts into two chunks at a pause, so the render has words to burn before
 * the second chunk is recognized.
 */

let farm: Farm;
let clip: Buffer;
let workDir: string;
const lines: string[] = [];
const asked: (number | undefined)[] = [];
const record = (threads: number | undefined) => {
  asked.push(threads);
  return threads;
};
/** Set by a test: the first words handed to the render carry a word far taller than any band. */
let overflowFirstWords = false;
const EN_WAV = path.resolve(import.meta.dirname, '../../../shared/media/en.wav');

beforeAll(async () => {
  farm = await startFarm();
  const file = await makeClip(farm.dir, 'read.mp4', { width: 270, height: 480, seconds: 34, audioFile: EN_WAV });
  clip = await readFile(file);
  workDir = (
    await farm.startAgent({
      overlap: true,
      whisperThreadsBesideRender: 1,
      // Every whisper thread count the transcriber asks the pipeline for, request by request.
      wrapTranscriber: (t) => ({
        ...t,
        transcribe: (req) => {
          let first = true;
          const onWords = req.onWords;
          return t.transcribe({
            ...req,
            threads: (now) => record(req.threads?.(now)),
            ...(onWords
              ? {
                  onWords: (p: Parameters<typeof onWords>[0]) => {
                    const tall = overflowFirstWords && first && p.words.length > 0;
                    first = false;
                    onWords(tall ? { ...p, words: [{ ...p.words[0]!, text: `A${'\u0301'.repeat(40)}` }, ...p.words.slice(1)] } : p);
                  },
                }
              : {}),
          });
        },
      }),
      log: (m, f) => lines.push(`${f.jobId ?? ''} ${m}`),
    })
  ).workDir;
}, 120_000);
afterAll(async () => {
  await farm?.close();
});

describe('overlapped stages', () => {
  it('the job succeeds with every word, phases and percent as the spec has them', async () => {
    const { api } = await farm.account('pro', 'overlap');
    const created = await submitUpload(api, clip, { language: 'en', templateId: 'word-pop' });
    const { job, seen } = await watchJob(api, created.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    for (const s of seen) if (s.phase !== 'rendering') expect(s.percent).toBeNull();
    const mine = lines.filter((l) => l.startsWith(created.id));
    const final = mine.map((l) => /the words are final with the render at (\d+)%/.exec(l)).find(Boolean);
    // The overlapped path ran (how far the render got by the last word depends on the machine's
    // load: caption-feed.test shows the encode running ahead of the words deterministically).
    expect(final, mine.join('\n')).toBeTruthy();
    expect(mine.some((l) => l.includes('started over'))).toBe(false);
    // Recognition on the transcriber's own threads until the first words are recognized, then on the
    // 1 thread left beside the render, to the end.
    const firstOne = asked.indexOf(1);
    expect(firstOne, JSON.stringify(asked)).toBeGreaterThan(0);
    expect(asked.slice(0, firstOne).every((t) => t === undefined)).toBe(true);
    expect(asked.slice(firstOne).every((t) => t === 1)).toBe(true);
    const t = TranscriptRecordSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).body);
    expect(t.words.length).toBeGreaterThan(90);
  }, 240_000);

  it('a render that must start over gives recognition its threads back until the words are in', async () => {
    // en.wav twice (67 s): three chunks, so a request comes well after the render has ended.
    const twice = path.join(farm.dir, 'en-twice.wav');
    await run('ffmpeg', ['-y', '-loglevel', 'error', '-stream_loop', '1', '-i', EN_WAV, '-c', 'copy', twice]);
    const file = await makeClip(farm.dir, 'twice.mp4', { width: 270, height: 480, seconds: 68, audioFile: twice });
    const { api } = await farm.account('pro', 'overlap-over');
    asked.length = 0;
    overflowFirstWords = true;
    try {
      const created = await submitUpload(api, await readFile(file), { language: 'en', templateId: 'karaoke' });
      const { job } = await watchJob(api, created.id, terminal);
      expect(job.status, JSON.stringify(job)).toBe('succeeded');
      const mine = lines.filter((l) => l.startsWith(created.id));
      expect(
        mine.some((l) => l.includes('started over')),
        mine.join('\n'),
      ).toBe(true);
      // One ask a chunk (two where a chunk is retried): at least three chunks were recognized.
      expect(asked.length, JSON.stringify(asked)).toBeGreaterThanOrEqual(3);
      // The first chunk on the transcriber's own threads; after the render ended, those again.
      expect(asked[0]).toBeUndefined();
      expect(asked.at(-1), JSON.stringify(asked)).toBeUndefined();
    } finally {
      overflowFirstWords = false;
    }
  }, 240_000);

  it('a cancel while recognition runs stops the render that waits for words', async () => {
    const { api, accountId } = await farm.account('pro', 'overlap-cancel');
    const before = await farm.balance(accountId);
    const created = await submitUpload(api, clip, { language: 'en' });
    await watchJob(api, created.id, (j) => j.phase === 'transcribing' || terminal(j));
    // The overlapped render is running (ffmpeg waits on the caption stream).
    for (const end = Date.now() + 30_000; (await ffmpegProcesses(workDir)).length === 0; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > end) throw new Error('no overlapped render started');
    }
    const res = await api('POST', `/v1/automation-jobs/${created.id}/cancel`);
    expect(res.body.status).toBe('cancelled');
    for (const end = Date.now() + 30_000; (await ffmpegProcesses(workDir)).length > 0; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > end) throw new Error('ffmpeg still runs 30 s after the cancel');
    }
    expect(await farm.balance(accountId)).toBe(before);
  }, 240_000);
});
