import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRecordSchema } from '@captionfarm/contracts';
import { cpuMs } from '../../packages/transcriber/test/helpers.ts';
import { ffmpegProcesses, makeClip, run, startFarm, startVideoServer, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

let farm: Farm;
let clips: Record<string, Buffer>;
let videos: Awaited<ReturnType<typeof startVideoServer>>;
let workDir: string;

const SPEECH = 'Captions make every video easier to follow.';

beforeAll(async () => {
  farm = await startFarm();
  const dir = farm.dir;
  const [speech, long, silent, noAudio, tooLong, minuteAndMore] = await Promise.all([
    makeClip(dir, 'speech.mp4', { width: 360, height: 640, seconds: 4, speech: SPEECH }),
    makeClip(dir, 'long.mp4', { width: 1080, height: 1920, seconds: 25, fps: 30, speech: SPEECH }),
    makeClip(dir, 'silent.mp4', { width: 320, height: 240, seconds: 3, silentAudio: true }),
    makeClip(dir, 'noaudio.mp4', { width: 320, height: 240, seconds: 3 }),
    makeClip(dir, 'toolong.mp4', { width: 64, height: 64, seconds: 181, fps: 1, silentAudio: true }),
    makeClip(dir, 'minute.mp4', { width: 64, height: 64, seconds: 65, fps: 2, speech: SPEECH }),
  ]);
  clips = {
    speech: await readFile(speech),
    long: await readFile(long),
    silent: await readFile(silent),
    noAudio: await readFile(noAudio),
    tooLong: await readFile(tooLong),
    minute: await readFile(minuteAndMore),
    garbage: Buffer.from('this is not a video file at all, just some text bytes'.repeat(100)),
  };
  videos = await startVideoServer(farm.certs, {
    '/speech.mp4': clips.speech!,
    '/broken': (res) => res.writeHead(500).end('upstream broke'),
    '/moved': (res) => res.writeHead(302, { location: 'https://localhost/elsewhere.mp4' }).end(),
  });
  workDir = (await farm.startAgent()).workDir;
}, 240_000);
afterAll(async () => {
  await videos?.close();
  await farm?.close();
});

async function download(url: string, name: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const file = path.join(farm.dir, name);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

async function probe(file: string) {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,width,height:format=duration', '-of', 'json', file]);
  return JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string; width?: number; height?: number }[]; format: { duration: string } };
}

describe('the job pipeline, end to end', () => {
  it('upload flow: queued -> ingesting -> transcribing -> rendering -> succeeded, with a playable captioned mp4', async () => {
    const { api, accountId } = await farm.account('pro', 'uploader');
    const before = await farm.balance(accountId);
    const created = await submitUpload(api, clips.speech!, { language: 'en' });
    const { job, seen } = await watchJob(api, created.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    expect(JobRecordSchema.parse(job)).toMatchObject({
      phase: 'succeeded',
      quotedSeconds: 4,
      resolution: { width: 360, height: 640 },
      percent: null,
      failureCode: null,
    });
    expect(Date.parse(job.outputExpiresAt) - Date.parse(job.settledAt)).toBeCloseTo(7 * 24 * 3600_000, -4);
    // Phases in order, and percent only during rendering, never decreasing.
    const phases = seen.map((s) => s.phase).filter((p, i, a) => a.indexOf(p) === i);
    expect(phases.filter((p) => p !== 'queued')).toEqual(expect.arrayContaining(['transcribing', 'rendering', 'succeeded']));
    expect(phases.indexOf('transcribing')).toBeLessThan(phases.indexOf('rendering'));
    const percents = seen.filter((s) => s.phase === 'rendering').map((s) => s.percent as number);
    expect(percents.every((p, i) => p >= 0 && p <= 100 && (i === 0 || p >= percents[i - 1]!))).toBe(true);
    for (const s of seen) if (s.phase !== 'rendering') expect(s.percent).toBeNull();

    const file = await download(job.downloadUrl, 'out.mp4');
    const info = await probe(file);
    expect(info.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(Number(info.format.duration)).toBeCloseTo(4, 0);
    // Minutes: the upload was probed when the job claimed it, so the reservation is its real
    // duration (1 minute), with nothing to true up; settled once.
    expect(await farm.balance(accountId)).toBe(before - 1);
    const ledger = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === job.id);
    expect(ledger.map((l: { kind: string }) => l.kind).sort()).toEqual(['reserve', 'settle']);
    expect(ledger.find((l: { kind: string }) => l.kind === 'reserve')).toMatchObject({ minutes: -1 });
  });

  it('URL flow over HTTPS to a webm output', async () => {
    const { api } = await farm.account('pro', 'linker');
    const created = await api('POST', '/v1/automation-jobs', { videoUrl: videos.url('/speech.mp4'), templateId: 'karaoke', format: 'webm', quality: 'low' });
    expect(created.status).toBe(202);
    const { job } = await watchJob(api, created.body.id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
    const info = await probe(await download(job.downloadUrl, 'out.webm'));
    expect(info.streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp9']);
  });

  it('a silent track yields a captionless but successful video', async () => {
    const { api } = await farm.account('pro', 'quiet');
    const { job } = await watchJob(api, (await submitUpload(api, clips.silent!, {})).id, terminal);
    expect(job.status, JSON.stringify(job)).toBe('succeeded');
  });
});

describe('each failure code from its real cause, minutes refunded', () => {
  async function expectFailure(o: { plan?: 'free' | 'pro'; submit: (api: any) => Promise<any>; code: string; reason: RegExp; minutes?: number }) {
    const { api, accountId } = await farm.account(o.plan ?? 'pro', o.code);
    if (o.minutes !== undefined) {
      const b = await farm.balance(accountId);
      await farm.admin('POST', `/admin/v1/accounts/${accountId}/minutes`, { minutes: o.minutes - b });
    }
    const before = await farm.balance(accountId);
    const created = await o.submit(api);
    const { job } = await watchJob(api, created.id, terminal);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'failed', phase: 'failed', failureCode: o.code, downloadUrl: null, settledAt: null });
    expect(job.failureReason).toMatch(o.reason);
    expect(await farm.balance(accountId)).toBe(before);
    return job;
  }

  it('source-unreachable: connection refused, HTTP 500, and a redirect (not followed)', async () => {
    for (const url of ['https://127.0.0.1:9/video.mp4', videos.url('/broken'), videos.url('/moved')]) {
      await expectFailure({
        code: 'source-unreachable',
        reason: /fetch|HTTP|redirect/i,
        submit: async (api) => (await api('POST', '/v1/automation-jobs', { videoUrl: url, templateId: 'karaoke' })).body,
      });
    }
  });

  it('source-unreadable: garbage bytes', async () => {
    await expectFailure({ code: 'source-unreadable', reason: /./, submit: (api) => submitUpload(api, clips.garbage!, {}) });
  });

  it('ingest-failed: no audio track', async () => {
    await expectFailure({ code: 'ingest-failed', reason: /audio/, submit: (api) => submitUpload(api, clips.noAudio!, {}) });
  });

  it('source-too-long: over the plan duration', async () => {
    const job = await expectFailure({ plan: 'free', code: 'source-too-long', reason: /180 s/, submit: (api) => submitUpload(api, clips.tooLong!, {}) });
    expect(job.quotedSeconds).toBe(181);
  });

  it('output-larger-than-source: an upscale request', async () => {
    await expectFailure({
      code: 'output-larger-than-source',
      reason: /larger/,
      submit: (api) => submitUpload(api, clips.speech!, { resolution: { width: 720, height: 1280 } }),
    });
  });

  it('automation-minutes-exhausted: a 65 s video with 1 minute left', async () => {
    await expectFailure({ code: 'automation-minutes-exhausted', reason: /2 minutes/, minutes: 1, submit: (api) => submitUpload(api, clips.minute!, {}) });
  });
});

describe('cancel', () => {
  it('cancel during rendering stops ffmpeg at once (within a CPU-second of its work) and refunds', async () => {
    const { api, accountId } = await farm.account('pro', 'canceller');
    const before = await farm.balance(accountId);
    const created = await submitUpload(api, clips.long!, { language: 'en' });
    await watchJob(api, created.id, (j) => (j.phase === 'rendering' && j.percent > 0) || terminal(j));
    const pids = await ffmpegProcesses(workDir);
    expect(pids.length).toBeGreaterThan(0);
    const cpu = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
    const atCancel = cpu();
    const res = await api('POST', `/v1/automation-jobs/${created.id}/cancel`);
    expect(res.body.status).toBe('cancelled');
    // Stopped by the cancel, not by finishing: the work ffmpeg does after it is counted in CPU time,
    // which a loaded machine does not stretch as it does wall time (a 1 s stopwatch bets on the load).
    // The rest of this 25 s 1080x1920 render needs many CPU-seconds; ffmpeg may spend under one.
    let spent = 0;
    for (const end = Date.now() + 60_000; (await ffmpegProcesses(workDir)).length > 0; await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > end) throw new Error('ffmpeg still runs 60 s after the cancel');
      spent = Math.max(spent, cpu() - atCancel);
    }
    expect(spent).toBeLessThan(1000);
    expect(await farm.balance(accountId)).toBe(before);
    const after = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
    expect(after).toMatchObject({ status: 'cancelled', percent: null, downloadUrl: null });
  });
});
