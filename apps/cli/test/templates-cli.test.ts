import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadImage } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../control-plane/test/harness.ts';
import { cliPiped } from './cli-process.ts';

let h: Harness;
let env: Record<string, string>;
let dir: string;
beforeAll(async () => {
  h = await startHarness();
  const a = await h.account('pro');
  env = { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: a.key };
  await a.api('POST', '/v1/templates', { id: 'brand-yellow', name: 'Brand yellow', description: 'Our yellow', fill: '#FFD400' });
  dir = await mkdtemp(path.join(tmpdir(), 'cf-templates-cli-'));
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

describe('captionfarm templates', () => {
  it("list: built-ins and the account's custom ones", async () => {
    const [text, json] = await Promise.all([cliPiped(['templates', 'list'], env), cliPiped(['templates', 'list', '--json'], env)]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ID\s+NAME\s+KIND\s+DESCRIPTION$/m);
    expect(text.stdout).toMatch(/^karaoke\s+.+\s+built-in\s+\S/m);
    expect(text.stdout).toMatch(/^brand-yellow\s+Brand yellow\s+custom\s+Our yellow$/m);
    const list = JSON.parse(json.stdout) as { id: string; builtin: boolean }[];
    expect(list.find((t) => t.id === 'brand-yellow')).toMatchObject({ builtin: false });
  });

  it('show: the definition as JSON; --json adds the envelope', async () => {
    const [plain, json, missing] = await Promise.all([
      cliPiped(['templates', 'show', 'brand-yellow'], env),
      cliPiped(['templates', 'show', 'karaoke', '--json'], env),
      cliPiped(['templates', 'show', 'nope'], env),
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ id: 'brand-yellow', fill: '#FFD400' });
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 'karaoke', builtin: true, template: { id: 'karaoke' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^captionfarm: not_found: No template nope/);
  });

  it('preview: a PNG rendered by the service (POST /v1/templates/:id/preview)', async () => {
    const out = path.join(dir, 'k.png');
    const res = await cliPiped(['templates', 'preview', 'karaoke', '-o', out, '--size', '320x568', '--text', 'Hello from the preview', '--at', '1'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^wrote .*k\.png \(image\/png, \d+ bytes\)$/m);
    const img = await loadImage(await readFile(out));
    expect([img.width, img.height]).toEqual([320, 568]);
    const bad = await cliPiped(['templates', 'preview', 'karaoke', '-o', out, '--size', '10x10'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid_request: Invalid preview request: see details\..*\n\s+width: /);
  });
});
