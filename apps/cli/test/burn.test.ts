import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestClip, startHarness, until, type Harness } from '../../control-plane/test/harness.ts';
import { JOB_ID, cliInPty } from './burn-helpers.ts';
import { cliPiped } from './cli-process.ts';

/**
 * `captionfarm burn` against a real control plane with no agent: jobs stay queued, which is
 * where Ctrl-C is tested. Burns that run to a finished video are in burn.e2e.test.ts.
 */
let h: Harness;
let dir: string;
let clip: string;
beforeAll(async () => {
  h = await startHarness();
  dir = await mkdtemp(path.join(tmpdir(), 'cf-burn-'));
  clip = path.join(dir, 'talk.mp4');
  // A real (tiny) video: the control plane's upload clip (2 s of test pattern, H.264 in mp4).
  await makeTestClip(clip);
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

async function minutes(accountId: string): Promise<{ balance: number; ledger: { kind: string; minutes: number; jobId: string | null }[] }> {
  return (await h.admin('GET', `/accounts/${accountId}/minutes`)).body;
}

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

function envFor(key: string): Record<string, string> {
  return { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: key };
}

describe('captionfarm burn in a terminal: Ctrl-C cancels the job and refunds its minutes', () => {
  it('a local file: upload bar, job created from the upload, queued phase line; Ctrl-C -> cancelled, exit 130', async () => {
    const { accountId, key, api } = await h.account('pro');
    const before = (await minutes(accountId)).balance;
    // As the README runs it: through `npm run`, where one Ctrl-C reaches the CLI several times
    // (terminal, npm, tsx) and must still mean "cancel cleanly", not "leave at once".
    const run = cliInPty(['burn', clip, '--template', 'karaoke', '--quality', 'medium', '--language', 'en'], envFor(key), dir, { viaNpm: true });
    const [, jobId] = await run.waitFor(JOB_ID);
    await run.waitFor(/queued\s+waiting for an agent\s+\d+:\d\d/);
    const text = run.text();
    expect(text).toMatch(/uploading talk\.mp4 \(\d+(\.\d)? kB\)/);
    expect(text).toMatch(/upload\s+\[█+\] 100%/);
    expect(run.raw()).toContain('\r\x1b[2K'); // redrawn in place, not scrolled
    const queued = (await api('GET', `/v1/automation-jobs/${jobId}`)).body;
    expect(queued).toMatchObject({ status: 'queued', quality: 'medium', templateId: 'karaoke' });
    expect((await minutes(accountId)).balance).toBe(before - 1); // the 2 s upload is probed when claimed: it reserves its 1 minute

    run.type('\x03');
    expect(await run.exit).toBe(130);
    expect(run.text()).toContain(`Ctrl-C: cancelling job ${jobId}`);
    expect(run.text()).not.toContain('interrupted again');
    expect(run.text()).toContain(`captionfarm: cancelled job ${jobId}; its reserved minutes were refunded`);
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ status: 'cancelled', phase: 'cancelled' });
    const after = await minutes(accountId);
    expect(after.balance).toBe(before);
    expect(after.ledger.filter((l) => l.jobId === jobId).map((l) => [l.kind, l.minutes])).toEqual([
      ['refund', 1],
      ['reserve', -1],
    ]);
  });

  it('an https URL: no upload, the job fetches the URL; Ctrl-C -> cancelled, exit 130', async () => {
    const { accountId, key, api } = await h.account('starter');
    const before = (await minutes(accountId)).balance;
    const run = cliInPty(
      ['burn', 'https://cdn.example.com/videos/launch%20talk.mp4', '-t', 'karaoke', '--format', 'webm', '--resolution', '720x1280'],
      envFor(key),
      dir,
    );
    const [, jobId] = await run.waitFor(JOB_ID);
    await run.waitFor(/queued\s+waiting for an agent/);
    expect(run.text()).not.toContain('upload');
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ status: 'queued', format: 'webm' });
    run.type('\x03');
    expect(await run.exit).toBe(130);
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body.status).toBe('cancelled');
    expect((await minutes(accountId)).balance).toBe(before);
  });

  it('--font FILE --style FILE --overlay: the font is uploaded and checked, the job renders an overlay with the style and the font', async () => {
    const { key, api } = await h.account('pro');
    const styleFile = path.join(dir, 'style.json');
    await writeFile(styleFile, JSON.stringify({ fill: '#FFEE00', position: { y: 0.3 }, font: { size: 9 }, emoji: 'auto', keywords: ['launch'] }));
    const run = cliInPty(
      ['burn', clip, '-t', 'karaoke', '--font', '/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf', '--style', styleFile, '--overlay'],
      envFor(key),
      dir,
    );
    const [, jobId] = await run.waitFor(JOB_ID);
    expect(run.text()).toMatch(/font Noto Serif Regular uploaded as [0-9a-f-]{36}/);
    const fonts = (await api('GET', '/v1/fonts')).body.fonts;
    expect(fonts).toHaveLength(1);
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ format: 'mov', status: 'queued' });
    const style = (await api('GET', `/v1/automation-jobs/${jobId}/style`)).body;
    expect(style).toMatchObject({ overlay: true, override: { fill: '#FFEE00', font: { size: 9, fontId: fonts[0].id } } });
    expect(style.style).toMatchObject({ fill: '#FFEE00', position: { y: 0.3 }, emoji: 'auto', keywords: ['launch'], font: { fontId: fonts[0].id, size: 9 } });
    run.type('\x03');
    expect(await run.exit).toBe(130);
  });

  it('--vocabulary FILE --replacements JSON: the job is created with both (read back with GET .../style)', async () => {
    const { key, api } = await h.account('pro');
    const terms = path.join(dir, 'terms.txt');
    await writeFile(terms, 'Captionfarm\nKubernetes\n');
    const run = cliInPty(
      ['burn', clip, '-t', 'karaoke', '--vocabulary', 'terms.txt', '--replacements', '[{"from":"caption farm","to":"Captionfarm"}]'],
      envFor(key),
      dir,
    );
    const [, jobId] = await run.waitFor(JOB_ID);
    expect((await api('GET', `/v1/automation-jobs/${jobId}/style`)).body).toMatchObject({
      vocabulary: ['Captionfarm', 'Kubernetes'],
      replacements: [{ from: 'caption farm', to: 'Captionfarm' }],
    });
    run.type('\x03');
    expect(await run.exit).toBe(130);
  });

  it('a damaged --font is refused by the service before any job is created (exit 1)', async () => {
    const { key, api } = await h.account('pro');
    const damaged = path.join(dir, 'damaged.ttf');
    await writeFile(damaged, Buffer.alloc(4000, 7));
    const run = cliPiped(['burn', clip, '-t', 'karaoke', '--font', damaged], envFor(key), dir);
    const { code, stderr } = await run;
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/invalid_font|refused/);
    expect((await api('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
  });

  it('Ctrl-C during the upload leaves no job behind', async () => {
    // The upload goes through a proxy that passes the first megabyte of the PUT, then stops
    // reading: the upload can never finish before the Ctrl-C, however fast the machine.
    const proxy = await startStallingProxy(1 << 20);
    proxy.target = Number(new URL(await closedPortUrl()).port);
    const ph = await startHarness({ PORT: String(proxy.target), CAPTIONFARM_PUBLIC_URL: `http://127.0.0.1:${proxy.port}` });
    const { key, api } = await ph.account('pro');
    const big = path.join(dir, 'big.mp4');
    await writeFile(big, Buffer.alloc(50_000_000));
    try {
      const run = cliInPty(['burn', big, '--template', 'karaoke'], { CAPTIONFARM_URL: ph.url, CAPTIONFARM_API_KEY: key }, dir);
      await run.waitFor(/upload\s+\[[█░]+\]\s+\d+%/);
      await until(async () => proxy.stalledPuts === 1, 30_000, 'the upload to stall at the proxy');
      run.type('\x03');
      expect(await run.exit).toBe(130);
      expect(run.text()).toContain('captionfarm: interrupted during the upload: no job was created');
      expect((await api('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
    } finally {
      await rm(big, { force: true });
      await proxy.close();
      await ph.close();
    }
  });
});

/**
 * A TCP proxy to 127.0.0.1:`target` that forwards every connection, except that a PUT is cut off
 * after `passBytes`: the proxy stops reading it, so the client's upload stalls where it is.
 */
async function startStallingProxy(passBytes: number) {
  const sockets = new Set<Socket>();
  const state = { port: 0, target: 0, stalledPuts: 0, close: async () => {} };
  const server = createNetServer((client) => {
    sockets.add(client);
    const upstream = connect(state.target, '127.0.0.1');
    sockets.add(upstream);
    let seen = 0;
    let isPut: boolean | undefined;
    client.on('data', (chunk: Buffer) => {
      isPut ??= chunk.subarray(0, 4).toString('latin1') === 'PUT ';
      if (isPut && seen + chunk.length > passBytes) {
        upstream.write(chunk.subarray(0, Math.max(0, passBytes - seen)));
        seen = passBytes;
        state.stalledPuts++;
        client.pause();
        client.removeAllListeners('data');
        return;
      }
      seen += chunk.length;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const s of [client, upstream]) s.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as AddressInfo).port;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return state;
}

describe('captionfarm burn: what failed, and exit codes', () => {
  it('a job that fails prints its failureCode and failureReason and exits 1', async () => {
    const { accountId, key } = await h.account('free');
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -(await minutes(accountId)).balance });
    const res = await cliPiped(['burn', clip, '--template', 'karaoke'], envFor(key), dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^captionfarm: job [0-9a-f-]{36} failed: automation-minutes-exhausted: .*minutes/m);
  });

  it.each([
    [
      'an unknown template (400)',
      ['--template', 'no-such-template'],
      2,
      /invalid_request: Unknown templateId "no-such-template".*\n\s+templateId: unknown template/,
    ],
    [
      'a resolution over the plan budget (422)',
      ['--template', 'karaoke', '--resolution', '3840x2160'],
      1,
      /limit_exceeded: resolution 3840x2160 is over the free plan's frame budget/,
    ],
  ])('the API refusing %s prints the error code', async (_name, args, code, message) => {
    const { key } = await h.account('free');
    const res = await cliPiped(['burn', clip, ...args], envFor(key), dir);
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code, stderr: expect.stringMatching(message) });
    expect(res.stderr).toMatch(/\(HTTP \d{3}, request req_[0-9a-f]+\)/);
  });

  it('a file type the service does not accept (415) and a wrong key (401)', async () => {
    const { key } = await h.account('pro');
    const txt = path.join(dir, 'notes.txt');
    await writeFile(txt, 'hello');
    const media = await cliPiped(['burn', txt, '--template', 'karaoke'], envFor(key), dir);
    expect(media.code).toBe(2);
    expect(media.stderr).toContain('unsupported_media_type: "notes.txt" is not an accepted video file');
    const auth = await cliPiped(['burn', clip, '--template', 'karaoke'], envFor('cf_live_wrong'), dir);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toMatch(/unauthenticated: .*; check CAPTIONFARM_API_KEY/);
  });

  it('an unreachable control plane says where it looked', async () => {
    const url = await closedPortUrl();
    const res = await cliPiped(['burn', clip, '--template', 'karaoke'], { CAPTIONFARM_URL: url, CAPTIONFARM_API_KEY: 'cf_live_x' }, dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`network_error: cannot reach the Captionfarm API at ${url} (connect ECONNREFUSED`);
    expect(res.stderr).toContain('Set CAPTIONFARM_URL');
  });

  it('usage errors exit 2 before any request (every case: burn-format.test.ts)', async () => {
    // Nothing listens at the URL: a request would show up as network_error.
    const env = { CAPTIONFARM_URL: await closedPortUrl(), CAPTIONFARM_API_KEY: 'cf_live_x' };
    const [noTemplate, missing, noDir] = await Promise.all([
      cliPiped(['burn', 'talk.mp4'], env, dir),
      cliPiped(['burn', 'missing.mp4', '-t', 'karaoke'], env, dir),
      cliPiped(['burn', 'talk.mp4', '-t', 'karaoke', '-o', 'no/such/dir/out.mp4'], env, dir),
    ]);
    expect([noTemplate.code, missing.code, noDir.code]).toEqual([2, 2, 2]);
    expect(noDir.stderr).toMatch(/^captionfarm: no such directory for -o: .*no\/such\/dir/);
    expect(noTemplate.stderr).toMatch(/^captionfarm: --template is required .*\n\ncaptionfarm burn INPUT --template ID/);
    expect(missing.stderr).toMatch(/^captionfarm: no such file: .*missing\.mp4/);
  });

  it('a missing CAPTIONFARM_API_KEY is a usage error that says how to get one', async () => {
    const res = await cliPiped(['burn', clip, '-t', 'karaoke'], { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: '' }, dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('CAPTIONFARM_API_KEY is not set: create a key with `captionfarm admin keys create');
  });

  it('prints plain lines, no redraws, when stdout is not a terminal', async () => {
    const { accountId, key } = await h.account('free');
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -(await minutes(accountId)).balance });
    const res = await cliPiped(['burn', clip, '--template', 'karaoke'], envFor(key), dir);
    expect(res.stdout).not.toMatch(/\r|\x1b/);
    expect(res.stdout).toMatch(/^uploading talk\.mp4 \(\d+\.\d kB\)\n(upload \d\d% \(\d+\.\d kB\)\n)*uploaded \d+\.\d kB in 0:0\d\n/);
    expect(res.stdout).toMatch(/^job [0-9a-f-]{36}: template karaoke, mp4, high quality$/m);
  });

  it('--help prints the usage', async () => {
    const res = await cliPiped(['burn', '--help'], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('captionfarm burn INPUT --template ID');
    expect(res.stdout).toContain('130 cancelled with Ctrl-C');
  });
});
