import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClip, run, startFarm, startVideoServer, type Farm } from '../../../agent/test/e2e-harness.ts';
import { JOB_ID, cliInPty } from './burn-helpers.ts';
import { cliPiped } from './cli-process.ts';

/**
 * `captionfarm burn` in a pseudo-terminal against a real control plane with a real agent
 * (whisper.cpp, canvas, ffmpeg): local file and https URL to a playable output, Ctrl-C while
 * rendering, and a failure code from a real cause.
 */
let farm: Farm;
let videos: Awaited<ReturnType<typeof startVideoServer>>;
let speech: string;
let long: string;
const SPEECH = 'Captions make every video easier to follow.';

beforeAll(async () => {
  farm = await startFarm();
  [speech, long] = await Promise.all([
    makeClip(farm.dir, 'speech.mp4', { width: 360, height: 640, seconds: 4, speech: SPEECH }),
    makeClip(farm.dir, 'long.mp4', { width: 1080, height: 1920, seconds: 25, fps: 30, speech: SPEECH }),
  ]);
  videos = await startVideoServer(farm.certs, { '/media/speech.mp4': await readFile(speech) });
  await farm.startAgent();
}, 240_000);
afterAll(async () => {
  await videos?.close();
  await farm?.close();
});

async function probe(file: string) {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,width,height:format=duration', '-of', 'json', file]);
  return JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string; width?: number; height?: number }[]; format: { duration: string } };
}

async function account(plan: 'free' | 'pro' = 'pro') {
  const a = await farm.account(plan, 'burner');
  return { ...a, env: { CAPTIONFARM_URL: farm.url, CAPTIONFARM_API_KEY: a.key } };
}

describe('captionfarm burn, end to end', () => {
  it('a local file burns to a playable captioned mp4, with upload, phase, render and download progress', async () => {
    const { accountId, env } = await account();
    const before = await farm.balance(accountId);
    const out = path.join(farm.dir, 'speech.captioned.mp4');
    const cli = cliInPty(['burn', speech, '--template', 'karaoke', '--language', 'en'], env, farm.dir);
    expect(await cli.exit, cli.text()).toBe(0);
    const text = cli.text();
    expect(text).toMatch(/upload\s+\[█+\] 100%/);
    expect(text).toMatch(/job [0-9a-f-]{36}: template karaoke, mp4, high quality/);
    // Phases seen while polling (a 4 s clip may render between two polls; the render bar itself
    // is checked by the Ctrl-C test below, on a longer clip).
    expect(text).toMatch(/✓ (ingesting|transcribing|rendering)\s+\d+:\d\d/);
    expect(text).toMatch(/✓ succeeded in \d+:\d\d/);
    expect(text).toMatch(/download\s+\[█+\] 100%/);
    expect(text).toMatch(/saved speech\.captioned\.mp4 \(\d+(\.\d)? kB, 360x640, 0:04 long\)/);

    const info = await probe(out);
    expect(info.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(info.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 360, height: 640 });
    expect(Number(info.format.duration)).toBeCloseTo(4, 0);
    expect(await farm.balance(accountId)).toBe(before - 1);
  });

  it('an https URL burns to a playable webm', async () => {
    const { env } = await account();
    const cli = cliInPty(['burn', videos.url('/media/speech.mp4'), '-t', 'karaoke', '-o', 'from-url.webm', '--quality', 'low'], env, farm.dir);
    expect(await cli.exit, cli.text()).toBe(0);
    expect(cli.text()).not.toMatch(/uploading/);
    const info = await probe(path.join(farm.dir, 'from-url.webm'));
    expect(info.streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp9']);
  });

  it('Ctrl-C while rendering cancels the job (status cancelled, minutes refunded) and exits 130', async () => {
    const { accountId, env, api } = await account();
    const before = await farm.balance(accountId);
    const cli = cliInPty(['burn', long, '-t', 'karaoke', '--language', 'en', '-o', 'never.mp4'], env, farm.dir);
    const [, jobId] = await cli.waitFor(JOB_ID, 60_000);
    await cli.waitFor(/rendering\s+\[[█░]+\]\s+[1-9]\d?%/, 180_000);
    cli.type('\x03');
    expect(await cli.exit).toBe(130);
    expect(cli.text()).toContain(`captionfarm: cancelled job ${jobId}; its reserved minutes were refunded`);
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ status: 'cancelled', downloadUrl: null });
    expect(await farm.balance(accountId)).toBe(before);
    await expect(stat(path.join(farm.dir, 'never.mp4'))).rejects.toThrow();
  });

  it('--silences fast --zoom --hook: the cut list printed, the output as long as the plan says (one frame), charged on the source', async () => {
    const { accountId, env } = await account();
    const before = await farm.balance(accountId);
    // 1.5 s of silence, the sentence, then silence to 7 s: fast cuts pauses over 0.4 s to 0.15 s.
    const paused = await makeClip(farm.dir, 'paused.mp4', { width: 360, height: 640, seconds: 7, speech: SPEECH, leadSeconds: 1.5 });
    const cli = await cliPiped(
      ['burn', paused, '-t', 'karaoke', '--language', 'en', '-o', 'paused.short.mp4', '--silences', 'fast', '--zoom', '--hook', 'Watch this'],
      env,
      farm.dir,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const summary = /^edit: (\d+) cuts? \((.+)\): ([\d.]+) s removed, 7\.0 s -> ([\d.]+) s$/m.exec(cli.stdout);
    expect(summary, cli.stdout).not.toBeNull();
    expect(summary![2]).toContain('silence');
    expect(Number(summary![3])).toBeGreaterThan(2); // at least the lead and the tail, less what they keep
    expect(cli.stdout).toContain('edit: hook title "Watch this" for the first 3.0 s');
    const id = JOB_ID.exec(cli.stdout)![1]!;
    const edit = JSON.parse((await cliPiped(['jobs', 'edit', id, '--json'], env)).stdout) as {
      plan: { outputSeconds: number; keep: { start: number; end: number }[] };
    };
    const kept = edit.plan.keep.reduce((sum, r) => sum + r.end - r.start, 0);
    expect(kept).toBeCloseTo(edit.plan.outputSeconds, 3);
    expect(Number(summary![4])).toBeCloseTo(edit.plan.outputSeconds, 1);
    const info = await probe(path.join(farm.dir, 'paused.short.mp4'));
    expect(Math.abs(Number(info.format.duration) - edit.plan.outputSeconds)).toBeLessThanOrEqual(1 / 25 + 0.03); // a frame, and AAC's priming
    expect(await farm.balance(accountId)).toBe(before - 1); // the source's 7 s: one minute
  });

  it('--outputs, --poster, --subtitles both (issue 43): every rendition and the poster saved and playable, the captions as a track, charged once', async () => {
    const { accountId, env } = await account();
    const before = await farm.balance(accountId);
    const cli = await cliPiped(
      [
        ...['burn', speech, '-t', 'karaoke', '--language', 'en', '-o', 'framed.mp4', '--safe-area', 'tiktok'],
        ...['--outputs', '360x640,320x180:webm', '--poster', '--subtitles', 'both'],
      ],
      env,
      farm.dir,
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/job [0-9a-f-]{36}: template karaoke, mp4, high quality, 2 renditions and a poster\n/);
    expect(cli.stdout).toMatch(/saved framed\.mp4 \(.+, 360x640, 0:04 long\)\n/);
    expect(cli.stdout).toMatch(/saved framed\.320x180\.webm \(.+, 320x180, 0:04 long\)\n/);
    expect(cli.stdout).toMatch(/saved framed\.poster\.jpg \(poster, .+, 360x640 at \d+\.\d\d s\)\n/);
    const [mp4, webm, poster] = await Promise.all(['framed.mp4', 'framed.320x180.webm', 'framed.poster.jpg'].map((f) => probe(path.join(farm.dir, f))));
    // Burned and a subtitle track: mov_text in MP4, WebVTT in WebM.
    expect(mp4!.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264', 'mov_text']);
    expect(webm!.streams.map((s) => s.codec_name).sort()).toEqual(['opus', 'vp9', 'webvtt']);
    expect(webm!.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 320, height: 180 });
    expect(poster!.streams[0]).toMatchObject({ codec_name: 'mjpeg', width: 360, height: 640 });
    expect(await farm.balance(accountId)).toBe(before - 1);
    const id = JOB_ID.exec(cli.stdout)![1]!;
    const listed = await cliPiped(['jobs', 'outputs', id], env);
    expect(listed.stdout.split('\n')[0]).toBe('safe area tiktok, placement fixed, subtitles both');
  });

  it('a file that is not a video fails with source-unreadable: the failure code is printed, exit 1', async () => {
    const { accountId, env } = await account();
    const before = await farm.balance(accountId);
    const garbage = path.join(farm.dir, 'garbage.mp4');
    await writeFile(garbage, Buffer.from('this is not a video file at all, just some text bytes'.repeat(100)));
    const cli = cliInPty(['burn', garbage, '-t', 'karaoke'], env, farm.dir);
    expect(await cli.exit).toBe(1);
    expect(cli.text()).toMatch(/captionfarm: job [0-9a-f-]{36} failed: source-unreadable: \S/);
    expect(await farm.balance(accountId)).toBe(before);
  });

  it('--srt/--vtt save the subtitles; jobs transcript prints them; --transcript-in burns an edited transcript as given', async () => {
    const { env } = await account();
    const first = await cliPiped(
      ['burn', speech, '-t', 'karaoke', '--language', 'en', '-o', 'subs.mp4', '--srt', 'subs.srt', '--vtt', 'subs.vtt'],
      env,
      farm.dir,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('saved subs.srt (SubRip subtitles)');
    expect(first.stdout).toContain('saved subs.vtt (WebVTT subtitles)');
    const id = JOB_ID.exec(first.stdout)![1]!;
    const srt = await readFile(path.join(farm.dir, 'subs.srt'), 'utf8');
    expect(srt).toMatch(/^1\n00:00:0\d,\d{3} --> 00:00:0\d,\d{3}\n\S/);
    expect((await readFile(path.join(farm.dir, 'subs.vtt'), 'utf8')).startsWith('WEBVTT\n\n')).toBe(true);
    expect((await cliPiped(['jobs', 'transcript', id, '--format', 'srt'], env)).stdout).toBe(srt);

    const json = await cliPiped(['jobs', 'transcript', id, '-o', 'words.json'], env, farm.dir);
    expect(json.code, json.stderr).toBe(0);
    const exported = JSON.parse(await readFile(path.join(farm.dir, 'words.json'), 'utf8')) as {
      language: string;
      words: { text: string; start: number; end: number }[];
    };
    expect(exported.language).toBe('en');
    expect(exported.words.length).toBeGreaterThan(3);
    const edited = { ...exported, words: exported.words.map((w, i) => (i === 1 ? { ...w, text: 'Captionfarm' } : w)) };
    await writeFile(path.join(farm.dir, 'edited.json'), JSON.stringify(edited));
    const second = await cliPiped(['burn', speech, '-t', 'karaoke', '-o', 'edited.mp4', '--transcript-in', 'edited.json'], env, farm.dir);
    expect(second.code, second.stderr).toBe(0);
    const id2 = JOB_ID.exec(second.stdout)![1]!;
    const again = JSON.parse((await cliPiped(['jobs', 'transcript', id2, '--format', 'json'], env)).stdout);
    expect(again).toEqual({ language: 'en', languageProbability: null, words: edited.words });

    const bad = await cliPiped(['jobs', 'transcript', id, '--format', 'ass'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format must be json, srt or vtt/);
  });
});
