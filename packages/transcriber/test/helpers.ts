/** Shared by the transcriber tests: where binaries, models and media are, and loud skips. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { captionfarmCacheDir, resolveWhisperBinDir } from '../src/index.ts';

export const MEDIA = new URL('../../../../shared/media/', import.meta.url).pathname;
export const SHARED_MODELS = new URL('../../../../shared/models/', import.meta.url).pathname;
/** whisper.cpp's CI fixture: real tiny vocabulary and mel filters, no weights. */
export const EMPTY_TINY = join(SHARED_MODELS, 'for-tests-ggml-tiny.bin');

/** The whisper.cpp build, or null (then the suite is skipped loudly, and fails under CI). */
export function whisperBinDir(): string | null {
  try {
    return resolveWhisperBinDir();
  } catch (err) {
    if (process.env.CI) throw err;
    console.warn(`\n!!! SKIPPED: whisper.cpp is not built (${(err as Error).message})\n`);
    return null;
  }
}

/** Real Whisper base weights from scripts/fetch-test-model, or null with a loud SKIPPED line. */
export function realModel(): string | null {
  const path = process.env.CAPTIONFARM_TEST_MODEL || join(captionfarmCacheDir(), 'test-models', 'ggml-base.bin');
  if (existsSync(path)) return path;
  console.warn(
    `\n${'!'.repeat(100)}\n!!! SKIPPED: accuracy tests need real Whisper weights at ${path}\n` +
      `!!! run "bash scripts/fetch-test-model" (or set CAPTIONFARM_TEST_MODEL)\n${'!'.repeat(100)}\n`,
  );
  return null;
}

/** Child processes of this process named `name` (Linux /proc). */
export function childPids(name: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return comm === name.slice(0, 15) && ppid === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Polls `check` every 20 ms until it returns true or `ms` pass. */
export async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
