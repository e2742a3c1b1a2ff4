import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CustomFontFace } from '@captionfarm/captions';
import type { LeasedFont } from '@captionfarm/contracts';
import { FontRejectedError, inspectFont, registerCustomFont } from '@captionfarm/renderer';
import { JobFailure } from './errors.ts';

/** Fonts checked and registered by this process, by sha256 (Skia's registry is per process too). */
const ready = new Map<string, Promise<CustomFontFace>>();

/**
 * The uploaded fonts a job needs, by font id: fetched once per content hash into
 * `<cacheDir>/<sha256>.sfnt`, verified against the hash, read again by the sandboxed font checker
 * (the control plane checked them at upload; an agent does not trust that), then registered.
 * A font that fails any step fails the job with render-failed; it never reaches Skia here.
 */
export async function loadJobFonts(fonts: readonly LeasedFont[], cacheDir: string, signal: AbortSignal): Promise<Map<string, CustomFontFace>> {
  const out = new Map<string, CustomFontFace>();
  for (const f of fonts) {
    let face = ready.get(f.sha256);
    if (!face) {
      face = prepare(f, cacheDir, signal);
      ready.set(f.sha256, face);
      // A failure is not cached: the next job retries (a download can fail for passing reasons).
      face.catch(() => ready.delete(f.sha256));
    }
    out.set(f.id, await face);
  }
  return out;
}

async function prepare(f: LeasedFont, cacheDir: string, signal: AbortSignal): Promise<CustomFontFace> {
  await mkdir(cacheDir, { recursive: true });
  const file = path.join(cacheDir, `${f.sha256}.sfnt`);
  const cached = await stat(file).then(
    (s) => s.size === f.sizeBytes,
    () => false,
  );
  if (!cached) await download(f, file, signal);
  const bytes = await readFile(file);
  if (createHash('sha256').update(bytes).digest('hex') !== f.sha256) {
    await rm(file, { force: true });
    throw new JobFailure('render-failed', `Font ${f.id} does not match its content hash; it was changed after upload.`);
  }
  const checked = path.join(cacheDir, `.${randomUUID()}.checked`);
  try {
    const report = await inspectFont({ input: file, output: checked, signal });
    return registerCustomFont({ bytes, sha256: f.sha256, weight: report.weight });
  } catch (err) {
    if (err instanceof FontRejectedError) {
      await rm(file, { force: true });
      throw new JobFailure('render-failed', `Font ${f.id} was refused by the agent: ${err.message}.`);
    }
    throw err;
  } finally {
    await rm(checked, { force: true });
  }
}

async function download(f: LeasedFont, file: string, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(f.url, { signal, redirect: 'error' });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new JobFailure('render-failed', `Could not fetch font ${f.id}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new JobFailure('render-failed', `Could not fetch font ${f.id}: HTTP ${res.status} (was it deleted?).`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length !== f.sizeBytes) throw new JobFailure('render-failed', `Font ${f.id} arrived with ${bytes.length} bytes, not ${f.sizeBytes}.`);
  // Written under a temp name and renamed: a concurrent job never reads half a font.
  const tmp = `${file}.${randomUUID().slice(0, 8)}.partial`;
  await writeFile(tmp, bytes);
  await rename(tmp, file);
}
