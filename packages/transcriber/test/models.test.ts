import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONVERTED_MODELS,
  findInstalledModels,
  locateModel,
  modelSearchDirs,
  modelsList,
  modelsPull,
  resolveModelPath,
  TranscriptionError,
  WHISPER_MODELS,
} from '../src/index.ts';
import { mkdirSync } from 'node:fs';
import { runToEnd } from '@captionfarm/process';

const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');

/**
 * A fetch that trusts our test CA, over node:https (global fetch takes no CA without undici).
 * Follows redirects like fetch does.
 */
function fetchTrusting(ca: string): typeof globalThis.fetch {
  const go = (url: string, signal: AbortSignal | undefined, hops: number): Promise<Response> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(url, { ca, ...(signal ? { signal } : {}) }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location && hops < 5) {
          res.resume();
          resolve(go(new URL(res.headers.location, url).toString(), signal, hops + 1));
          return;
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        const body = status === 204 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, headers }));
      });
      req.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
      req.end();
    });
  return ((input: string | URL | Request, init?: RequestInit) => go(String(input), init?.signal ?? undefined, 0)) as typeof globalThis.fetch;
}

describe('modelsPull / modelsList against a local HTTPS server', () => {
  let dir: string;
  let server: Server;
  let baseUrl: string;
  let fetch: typeof globalThis.fetch;
  // What the server holds: ggml-tiny.bin is the official file for this test, ggml-base.bin is corrupt.
  const tiny = Buffer.from('pretend these are the tiny weights\n'.repeat(5000));
  const catalog = { tiny: { sha1: sha1(tiny), size: '170 KiB' }, base: { sha1: WHISPER_MODELS.base!.sha1, size: '142 MiB' } };
  let requests = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transcriber-models-'));
    // A self-signed certificate for 127.0.0.1, made now; the client trusts it as its CA.
    await runToEnd('openssl', {
      args: [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      stdout: 'ignore',
    });
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      requests++;
      if (req.url === '/repo/ggml-tiny.bin') {
        // Like Hugging Face: the repository URL redirects to the CDN.
        res.writeHead(302, { location: '/cdn/tiny-blob' }).end();
      } else if (req.url === '/cdn/tiny-blob') {
        res.writeHead(200, { 'content-length': tiny.length }).end(tiny);
      } else if (req.url === '/repo/ggml-base.bin') {
        res.writeHead(200).end(Buffer.from('not the base model'));
      } else {
        res.writeHead(404).end('Entry not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/repo`;
    fetch = fetchTrusting(cert);
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('downloads through the redirect, verifies the SHA1 and reports progress', async () => {
    const modelsDir = join(dir, 'models');
    const progress: number[] = [];
    const result = await modelsPull({ name: 'tiny', modelsDir, baseUrl, fetch, catalog, onProgress: (n) => progress.push(n) });
    expect(result).toEqual({ name: 'tiny', path: join(modelsDir, 'ggml-tiny.bin'), sha1: sha1(tiny), bytes: tiny.length, downloaded: true });
    expect(readFileSync(result.path).equals(tiny)).toBe(true);
    expect(progress.at(-1)).toBe(tiny.length);
    expect(readdirSync(modelsDir)).toEqual(['ggml-tiny.bin']);
  });

  it('keeps a verified copy without downloading again', async () => {
    const before = requests;
    const result = await modelsPull({ name: 'tiny', modelsDir: join(dir, 'models'), baseUrl, fetch, catalog });
    expect(result.downloaded).toBe(false);
    expect(requests).toBe(before);
  });

  it('refuses a download whose SHA1 differs from the published one, and keeps nothing', async () => {
    const modelsDir = join(dir, 'models-bad');
    const err = await modelsPull({ name: 'base', modelsDir, baseUrl, fetch, catalog }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TranscriptionError);
    expect(err).toMatchObject({ code: 'model-checksum-mismatch' });
    expect((err as Error).message).toContain(WHISPER_MODELS.base!.sha1);
    expect(readdirSync(modelsDir)).toEqual([]);
  });

  it('reports an HTTP error with its status', async () => {
    const err = await modelsPull({ name: 'tiny', modelsDir: join(dir, 'm404'), baseUrl: `${baseUrl}/missing`, fetch, catalog }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'model-download-failed' });
    expect((err as Error).message).toMatch(/HTTP 404/);
  });

  it('fails with a clear message when the host cannot be reached (offline)', async () => {
    // A port nothing listens on: what a machine without network sees.
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const err = await modelsPull({ name: 'tiny', modelsDir: join(dir, 'offline'), baseUrl: `https://127.0.0.1:${closed}/repo`, fetch, catalog }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'model-download-failed' });
    expect((err as Error).message).toMatch(/could not reach 127\.0\.0\.1:\d+ .*ECONNREFUSED.*offline/);
    expect(existsSync(join(dir, 'offline', 'ggml-tiny.bin'))).toBe(false);
  });

  it('does not trust a server whose certificate it was not given', async () => {
    const err = await modelsPull({ name: 'tiny', modelsDir: join(dir, 'untrusted'), baseUrl, catalog }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'model-download-failed' });
    expect((err as Error).message).toMatch(/SELF_SIGNED/);
    expect((err as Error).message).not.toMatch(/offline/);
  });

  it('rejects names whisper.cpp does not publish', async () => {
    const err = await modelsPull({ name: 'huge-v9', modelsDir: dir, baseUrl, fetch }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unknown-model' });
    expect((err as Error).message).toMatch(/large-v3-turbo/);
  });

  it('lists published models with what is installed, and other ggml files found', async () => {
    const modelsDir = join(dir, 'models');
    writeFileSync(join(modelsDir, 'ggml-custom-finetune.bin'), 'x');
    const list = await modelsList({ modelsDir, verify: true, catalog });
    expect(list.map((m) => m.name)).toEqual(['tiny', 'base', 'custom-finetune']);
    expect(list[0]).toMatchObject({ installed: true, bytes: tiny.length, verified: true, expectedSha1: sha1(tiny) });
    expect(list[1]).toMatchObject({ installed: false, bytes: null });
    expect(list[2]).toMatchObject({ installed: true, expectedSha1: null });
    const full = await modelsList({ modelsDir: join(dir, 'nowhere') });
    expect(full.map((m) => m.name)).toEqual(Object.keys(WHISPER_MODELS));
  });
});

describe('model table and paths', () => {
  it("matches the SHA1 table of the vendored whisper.cpp's models/README.md", () => {
    const readme = join(createRequire(import.meta.url).resolve('nodejs-whisper/package.json'), '..', 'cpp/whisper.cpp/models/README.md');
    const rows = [...readFileSync(readme, 'utf8').matchAll(/^\| ([\w.-]+) +\| [\d.]+ [MG]iB +\| `([0-9a-f]{40})` \|$/gm)];
    expect(Object.fromEntries(rows.map((m) => [m[1], m[2]]))).toEqual(Object.fromEntries(Object.entries(WHISPER_MODELS).map(([k, v]) => [k, v.sha1])));
  });

  it('treats names and paths apart', () => {
    expect(resolveModelPath('base.en', '/m')).toBe('/m/ggml-base.en.bin');
    expect(resolveModelPath('/x/y.bin', '/m')).toBe('/x/y.bin');
    expect(resolveModelPath('models/ggml-tiny.bin', '/m')).toBe(join(process.cwd(), 'models/ggml-tiny.bin'));
  });
});

describe('where models are found (the same dirs for agents and models list)', () => {
  const cache = mkdtempSync(join(tmpdir(), 'transcriber-xdg-'));
  const env = { XDG_CACHE_HOME: cache };
  const [modelsDir, testModels] = modelSearchDirs(env) as [string, string];
  afterAll(() => rmSync(cache, { recursive: true, force: true }));

  it('searches the models dir, then the test-models cache scripts/fetch-test-model fills', () => {
    expect(modelSearchDirs(env)).toEqual([join(cache, 'captionfarm', 'models'), join(cache, 'captionfarm', 'test-models')]);
  });

  // Regression: the embedded agent ran test-models/ggml-base.bin while `models list` said base was not installed.
  it('lists a model found in either dir at the path it is found, the models dir first', async () => {
    mkdirSync(modelsDir, { recursive: true });
    mkdirSync(testModels, { recursive: true });
    writeFileSync(join(testModels, 'ggml-base.bin'), 'converted base');
    writeFileSync(join(testModels, 'ggml-tiny.bin'), 'tiny in the test cache');
    writeFileSync(join(modelsDir, 'ggml-tiny.bin'), 'tiny pulled');
    writeFileSync(join(modelsDir, 'ggml-silero-v6.2.3.bin'), 'vad');
    const list = await modelsList({ modelsDirs: modelSearchDirs(env) });
    const byName = Object.fromEntries(list.map((m) => [m.name, m]));
    expect(byName.base).toMatchObject({ installed: true, path: join(testModels, 'ggml-base.bin'), bytes: 14 });
    expect(byName.tiny).toMatchObject({ installed: true, path: join(modelsDir, 'ggml-tiny.bin') });
    expect(byName.small).toMatchObject({ installed: false, path: join(modelsDir, 'ggml-small.bin') });
    expect(byName['silero-v6.2.3']).toMatchObject({ installed: true, expectedSha1: null });
    // The agent's view: whisper models only, each at the same path.
    expect(findInstalledModels(modelSearchDirs(env))).toEqual([
      { name: 'tiny', path: join(modelsDir, 'ggml-tiny.bin') },
      { name: 'base', path: join(testModels, 'ggml-base.bin') },
    ]);
    expect(locateModel('base', modelSearchDirs(env))).toBe(join(testModels, 'ggml-base.bin'));
    expect(locateModel('small', modelSearchDirs(env))).toBe(join(modelsDir, 'ggml-small.bin'));
    expect(locateModel('/x/ggml-small.bin', modelSearchDirs(env))).toBe('/x/ggml-small.bin');
  });

  it("verifies against whisper.cpp's SHA1 or our conversion's, and still reports a corrupt file", async () => {
    const dir = join(cache, 'verify');
    mkdirSync(dir, { recursive: true });
    const official = Buffer.from('official tiny');
    const ours = Buffer.from('our conversion of base');
    writeFileSync(join(dir, 'ggml-tiny.bin'), official);
    writeFileSync(join(dir, 'ggml-base.bin'), ours);
    writeFileSync(join(dir, 'ggml-small.bin'), 'truncated small');
    const catalog = {
      tiny: { sha1: sha1(official), size: '1 B' },
      base: { sha1: WHISPER_MODELS.base!.sha1, size: '1 B' },
      small: { sha1: WHISPER_MODELS.small!.sha1, size: '1 B' },
    };
    const list = await modelsList({ modelsDirs: [dir], verify: true, catalog, converted: { base: { sha1: sha1(ours) } } });
    expect(list.map((m) => [m.name, m.verified, m.matched])).toEqual([
      ['tiny', true, 'whisper.cpp'],
      ['base', true, 'converted'],
      ['small', false, undefined],
    ]);
  });

  it("publishes scripts/fetch-test-model's output SHA1 as our conversion of base", () => {
    const script = readFileSync(join(import.meta.dirname, '../../../scripts/fetch-test-model'), 'utf8');
    expect(CONVERTED_MODELS.base!.sha1).toBe(/^ggml_sha1=([0-9a-f]{40})$/m.exec(script)?.[1]);
    expect(CONVERTED_MODELS.base!.sha1).not.toBe(WHISPER_MODELS.base!.sha1);
  });
});
