import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EditPlan } from '@captionfarm/contracts';
import { TEST_AGENT_CAPABILITIES, agentClient, agentToken, makeTestClip, startHarness, until, type Harness } from '../../control-plane/test/harness.ts';
import { cliPiped } from './cli-process.ts';

/**
 * `captionfarm burn` with the shorts options of issue 42, against a real control plane; the test
 * plays the agent over the real agent protocol (the edit itself is rendered by the real agent in
 * agent/test): what the lease carries is what the flags asked for, and the cut list printed after
 * the job is the plan the agent reported.
 */
let h: Harness;
let dir: string;
let clip: string;
let agent: ReturnType<typeof agentClient>;
let nodeId: string;
beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  dir = await mkdtemp(path.join(tmpdir(), 'cf-burn-edit-'));
  clip = path.join(dir, 'talk.mp4');
  await makeTestClip(clip, { seconds: 3 });
  agent = agentClient(h.url, await agentToken(h, 'burn-edit'));
  nodeId = (await agent.agent.register.mutate({ nodeName: 'burn-edit', capabilities: TEST_AGENT_CAPABILITIES })).nodeId;
});
afterAll(async () => {
  agent?.close();
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const PLAN: EditPlan = {
  sourceSeconds: 3,
  outputSeconds: 1.8,
  keep: [
    { start: 0, end: 1 },
    { start: 1.6, end: 2.2 },
    { start: 2.8, end: 3 },
  ],
  cuts: [
    { start: 1, end: 1.6, reason: 'filler', text: 'um,' },
    { start: 2.2, end: 2.8, reason: 'silence', text: null },
  ],
  zooms: [{ start: 1.1, end: 1.5, scale: 1.1 }],
  bleeps: [{ start: 0.2, end: 0.6 }],
};

/** Leases the one queued job and plays an agent's part to the end, reporting `plan`. */
async function agentRuns(plan: EditPlan) {
  const leased = await until(async () => (await agent.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() }))[0], 20_000, 'a job to lease');
  const ref = { nodeId, jobId: leased.jobId, leaseId: leased.leaseId };
  await agent.agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 320, height: 240 });
  const words = [
    { text: 'Frak,', start: 0.2, end: 0.6 },
    { text: 'um,', start: 1.1, end: 1.4 },
    { text: 'captions.', start: 1.7, end: 2.1 },
  ];
  await agent.agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words, edit: plan });
  await agent.agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const bytes = Buffer.from('an edited output');
  const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
  if (!up.ok) throw new Error('no output upload URL');
  expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
  await agent.agent.complete.mutate({ ...ref, resolution: { width: 320, height: 240 }, outputBytes: bytes.length });
  return leased;
}

describe('captionfarm burn --silences --fillers --zoom --hook --profanity', () => {
  it('sends the edit, prints the cut list after the job (by reason, seconds removed, output length) and saves the output', async () => {
    const { key, api } = await h.account('pro');
    const out = path.join(dir, 'short.mp4');
    const cli = cliPiped(
      [
        ...['burn', clip, '-t', 'karaoke', '-o', out, '--silences', 'fast', '--fillers', 'safe', '--zoom'],
        ...['--hook', 'Three tips in 30 seconds', '--hook-seconds', '2', '--profanity', 'bleep'],
      ],
      { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: key },
      dir,
    );
    const leased = await agentRuns(PLAN);
    expect(leased).toMatchObject({
      edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis', keep: null },
      hookTitle: { text: 'Three tips in 30 seconds', seconds: 2 },
      profanity: 'bleep',
    });
    const res = await cli;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('edit: 2 cuts (1 filler, 1 silence): 1.2 s removed, 3.0 s -> 1.8 s\n');
    expect(res.stdout).toContain('edit: 1 punch-in zoom\nedit: 1 word bleeped\nedit: hook title "Three tips in 30 seconds" for the first 2.0 s\n');
    // The saved line gives the output's length; the job was charged on the source's 3 s.
    expect(res.stdout).toMatch(/saved short\.mp4 \(16 B, 320x240, 0:02 long\)/);
    expect(await readFile(out, 'utf8')).toBe('an edited output');
    expect((await api('GET', `/v1/automation-jobs/${leased.jobId}`)).body).toMatchObject({ status: 'succeeded', quotedSeconds: 3 });

    // captionfarm jobs edit: the same summary, every cut, and the keep-ranges as --keep takes them.
    const env = { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: key };
    const queued = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://cdn.example.com/a.mp4', templateId: 'karaoke' })).body.id as string;
    const [text, json, early] = await Promise.all([
      cliPiped(['jobs', 'edit', leased.jobId], env),
      cliPiped(['jobs', 'edit', leased.jobId, '--json'], env),
      cliPiped(['jobs', 'edit', queued], env),
    ]);
    await api('POST', `/v1/automation-jobs/${queued}/cancel`);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      [
        '2 cuts (1 filler, 1 silence): 1.2 s removed, 3.0 s -> 1.8 s',
        '1 punch-in zoom',
        '1 word bleeped',
        'hook title "Three tips in 30 seconds" for the first 2.0 s',
        'cut  1.000-1.600 s  filler   um,',
        'cut  2.200-2.800 s  silence',
        '--keep 0-1,1.6-2.2,2.8-3',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ jobId: leased.jobId, plan: PLAN });
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/^captionfarm: edit_not_available: .*\(HTTP 409, request req_/);
  });

  it('--keep sends your own keep-ranges', async () => {
    const { key } = await h.account('pro');
    const cli = cliPiped(['burn', clip, '-t', 'karaoke', '-o', path.join(dir, 'kept.mp4'), '--keep', '0-1,1.6-2.2,2.8-3'], {
      CAPTIONFARM_URL: h.url,
      CAPTIONFARM_API_KEY: key,
    });
    const leased = await agentRuns({ ...PLAN, cuts: PLAN.cuts.map((c) => ({ ...c, reason: 'client' as const, text: null })), zooms: [], bleeps: [] });
    expect(leased.edit).toEqual({ silences: 'off', fillers: 'off', zoom: 'off', keep: PLAN.keep });
    const res = await cli;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('edit: 2 cuts (2 client): 1.2 s removed, 3.0 s -> 1.8 s\n');
  });

  it('a bad value is a usage error before any upload or request (exit 2)', async () => {
    // Nothing listens at the URL: a request would show up as network_error.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const res = await cliPiped(['burn', clip, '-t', 'karaoke', '--silences', 'fast', '--keep', '0-1'], {
      CAPTIONFARM_URL: url,
      CAPTIONFARM_API_KEY: 'cf_live_x',
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^captionfarm: --keep gives the cut itself: drop --silences and --fillers/);
    expect(res.stderr).not.toContain('network_error');
  });

  it('--help lists the shorts options', async () => {
    const res = await cliPiped(['burn', '--help'], {});
    expect(res.code).toBe(0);
    for (const flag of ['--silences <pace>', '--fillers <mode>', '--zoom', '--hook <text>', '--hook-seconds <n>', '--profanity <mode>', '--keep <ranges>'])
      expect(res.stdout).toContain(flag);
    expect(res.stdout).toMatch(/fast \(over 0\.4 s to 0\.15 s\)/);
  });
});
