import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_AGENT_CAPABILITIES, agentClient, agentToken, makeTestClip, startHarness, until, type Harness } from '../../control-plane/test/harness.ts';
import { cliPiped } from './cli-process.ts';

/**
 * `captionfarm burn` with the framing options of issue 43, against a real control plane; the test
 * plays the agent over the real agent protocol (the renditions themselves are rendered by the real
 * agent in agent/test): what the lease carries is what the flags asked for, every rendition and the
 * poster are saved under their names, and `jobs outputs` lists them.
 */
let h: Harness;
let dir: string;
let clip: string;
let agent: ReturnType<typeof agentClient>;
let nodeId: string;
beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  dir = await mkdtemp(path.join(tmpdir(), 'cf-burn-outputs-'));
  clip = path.join(dir, 'talk.mp4');
  await makeTestClip(clip, { seconds: 3 });
  agent = agentClient(h.url, await agentToken(h, 'burn-outputs'));
  nodeId = (await agent.agent.register.mutate({ nodeName: 'burn-outputs', capabilities: TEST_AGENT_CAPABILITIES })).nodeId;
});
afterAll(async () => {
  agent?.close();
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const renditionBytes = (i: number) => Buffer.from(`rendition ${i} from one decode`);
const POSTER_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xff, 0xd9]);

/** Leases the one queued job and plays an agent's part: every rendition and the poster uploaded, then complete. */
async function agentRuns() {
  const leased = await until(async () => (await agent.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() }))[0], 20_000, 'a job to lease');
  const ref = { nodeId, jobId: leased.jobId, leaseId: leased.leaseId };
  await agent.agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 3840, height: 2160 });
  await agent.agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words: [{ text: 'Framed.', start: 0.2, end: 0.8 }] });
  await agent.agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const outputs = leased.outputs.map((o, index) => ({
    index,
    resolution: o.resolution ?? { width: 320, height: 240 },
    outputBytes: renditionBytes(index).length,
  }));
  for (const o of outputs) {
    const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: o.outputBytes, output: o.index, target: 'video' });
    if (!up.ok) throw new Error(`no upload URL for rendition ${o.index}`);
    expect((await fetch(up.url, { method: 'PUT', body: renditionBytes(o.index) })).status).toBe(200);
  }
  const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: POSTER_BYTES.length, target: 'poster' });
  if (!up.ok) throw new Error('no upload URL for the poster');
  expect((await fetch(up.url, { method: 'PUT', body: POSTER_BYTES })).status).toBe(200);
  const first = outputs[0]!;
  const poster = { at: 1.25, ...first.resolution, bytes: POSTER_BYTES.length };
  expect(await agent.agent.complete.mutate({ ...ref, resolution: first.resolution, outputBytes: first.outputBytes, outputs, poster })).toEqual({ ok: true });
  return leased;
}

describe('captionfarm burn --reframe --safe-area --outputs --poster', () => {
  it('sends the framing, saves every rendition beside -o and the poster, charges the source once; jobs outputs lists them', async () => {
    const { key, api } = await h.account('pro');
    const env = { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: key };
    const cli = cliPiped(
      [
        ...['burn', clip, '-t', 'karaoke', '--reframe', 'subject', '--safe-area', 'tiktok', '--placement', 'auto'],
        ...['--outputs', '1080x1920,1920x1080:center,1080x1080:webm', '--poster', '--subtitles', 'both'],
      ],
      env,
      dir,
    );
    const leased = await agentRuns();
    expect(leased).toMatchObject({
      format: 'mp4',
      outputs: [
        { resolution: { width: 1080, height: 1920 }, format: 'mp4', reframe: 'subject' },
        { resolution: { width: 1920, height: 1080 }, format: 'mp4', reframe: 'center' },
        { resolution: { width: 1080, height: 1080 }, format: 'webm', reframe: 'subject' },
      ],
      safeArea: 'tiktok',
      placement: 'auto',
      poster: { at: null },
      subtitles: 'both',
    });
    const res = await cli;
    expect(res.code, res.stderr).toBe(0);
    const n = renditionBytes(0).length;
    expect(res.stdout).toMatch(/job [0-9a-f-]{36}: template karaoke, mp4, high quality, 3 renditions and a poster\n/);
    expect(res.stdout).toContain(`saved talk.captioned.mp4 (${n} B, 1080x1920, 0:03 long)\n`);
    expect(res.stdout).toContain(`saved talk.captioned.1920x1080.mp4 (${n} B, 1920x1080, 0:03 long)\n`);
    expect(res.stdout).toContain(`saved talk.captioned.1080x1080.webm (${n} B, 1080x1080, 0:03 long)\n`);
    expect(res.stdout).toContain('saved talk.captioned.poster.jpg (poster, 12 B, 1080x1920 at 1.25 s)\n');
    expect(await readFile(path.join(dir, 'talk.captioned.mp4'))).toEqual(renditionBytes(0));
    expect(await readFile(path.join(dir, 'talk.captioned.1920x1080.mp4'))).toEqual(renditionBytes(1));
    expect(await readFile(path.join(dir, 'talk.captioned.1080x1080.webm'))).toEqual(renditionBytes(2));
    expect(await readFile(path.join(dir, 'talk.captioned.poster.jpg'))).toEqual(POSTER_BYTES);
    expect((await readdir(dir)).filter((f) => f.endsWith('.part'))).toEqual([]);
    // One job, charged on the source's 3 s whatever the renditions.
    expect((await api('GET', `/v1/automation-jobs/${leased.jobId}`)).body).toMatchObject({ status: 'succeeded', quotedSeconds: 3, format: 'mp4' });

    const [text, json] = await Promise.all([cliPiped(['jobs', 'outputs', leased.jobId], env), cliPiped(['jobs', 'outputs', leased.jobId, '--json'], env)]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('safe area tiktok, placement auto, subtitles both');
    expect(lines[1]).toMatch(/^INDEX +FORMAT +REFRAME +RESOLUTION +SIZE +EXPIRES +URL$/);
    expect(lines[2]).toMatch(new RegExp(`^0 +mp4 +subject +1080x1920 +${n} B +\\S+Z +http://127\\.0\\.0\\.1:\\d+/\\S+$`));
    expect(lines[4]).toMatch(/^2 +webm +subject +1080x1080 /);
    expect(lines[5]).toMatch(/^poster at 1\.25 s, 1080x1920, 12 B, expires /);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ jobId: leased.jobId, safeArea: 'tiktok', poster: { at: 1.25, sizeBytes: 12 } });
    expect(body.outputs.map((o: { index: number; format: string }) => [o.index, o.format])).toEqual([
      [0, 'mp4'],
      [1, 'mp4'],
      [2, 'webm'],
    ]);

    const unknown = await cliPiped(['jobs', 'outputs', randomUUID()], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^captionfarm: not_found: .*\(HTTP 404, request req_/);
  });

  it("the API's refusal is printed as its error body says: a rendition over the plan's frame budget (exit 1)", async () => {
    const { key } = await h.account('free');
    const res = await cliPiped(['burn', clip, '-t', 'karaoke', '-o', path.join(dir, 'free.mp4'), '--outputs', '640x360,1080x1920'], {
      CAPTIONFARM_URL: h.url,
      CAPTIONFARM_API_KEY: key,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^captionfarm: limit_exceeded: .*\(HTTP 422, request req_/);
    expect(res.stderr).toMatch(/\n {2}outputs\.1\.resolution: /);
  });

  it('--help lists the framing options', async () => {
    const res = await cliPiped(['burn', '--help'], {});
    expect(res.code).toBe(0);
    for (const flag of [
      '--reframe <mode>',
      '--safe-area <app>',
      '--placement <mode>',
      '--outputs <list>',
      '--poster',
      '--poster-at <seconds>',
      '--subtitles <mode>',
    ])
      expect(res.stdout).toContain(flag);
    expect(res.stdout).toMatch(/1080x1920:webm:subject/);
  });
});
