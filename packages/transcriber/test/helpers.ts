/** Shared by the transcriber tests: where binaries, models and media are (missing ones fail the suite). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testModelPath } from '../src/index.ts';
import { runToEnd } from '@captionfarm/process';
import { whisperBinDir as findWhisperBinDir } from '@captionfarm/process/tools';

export const MEDIA = new URL('../../../../shared/media/', import.meta.url).pathname;
const SHARED_MODELS = new URL('../../../../shared/models/', import.meta.url).pathname;
/** whisper.cpp's CI fixture: real tiny vocabulary and mel filters, no weights. */
export const EMPTY_TINY = join(SHARED_MODELS, 'for-tests-ggml-tiny.bin');

/**
 * The whisper.cpp build. Missing, the suite fails (never skips: a skipped suite reads as green)
 * with what to run.
 */
export function whisperBinDir(): string {
  try {
    return findWhisperBinDir();
  } catch (err) {
    throw new Error(`the transcriber tests need whisper.cpp: ${(err as Error).message}`, { cause: err });
  }
}

/** Real Whisper base weights from scripts/fetch-test-model. Missing, the suite fails with what to run. */
export function realModel(): string {
  const path = testModelPath();
  if (existsSync(path)) return path;
  throw new Error(`the accuracy tests need real Whisper base weights at ${path}: run "bash scripts/fetch-test-model" (or set CAPTIONFARM_TEST_MODEL)`);
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
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const CLOCK_TICKS_PER_SECOND = Number((await runToEnd('getconf', { args: ['CLK_TCK'] })).stdout.trim()) || 100;

/** CPU time (user + system) a process has used, in ms (Linux /proc); 0 once it is gone. Also used by agent/test. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [utime, stime] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .slice(11, 13)
      .map(Number);
    return ((utime! + stime!) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * Waits until the processes `pids` have used `busyMs` of CPU since the call: an idle
 * whisper-server uses none, so this is the moment a request is being worked on, whatever the
 * machine's load (a wall-clock sleep guesses it, and loses the race on a busy machine).
 */
export async function waitForCpu(pids: number[], busyMs: number, ms: number, what: string): Promise<void> {
  const used = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const start = used();
  await waitFor(() => used() - start >= busyMs, ms, what);
}
