import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runProcess } from '@captionfarm/process';
import { abortError } from '../errors.ts';
import { precheckFontFile, type FontFileFormat } from './decode.ts';
import { FontProblem, MAX_SFNT_BYTES, checkWoff2Header } from './sfnt.ts';

/** What the font checker learnt about an accepted font. */
export interface FontReport {
  /** The uploaded file's format; the checked font is always written as sfnt (TTF/OTF). */
  format: FontFileFormat;
  outline: 'truetype' | 'cff';
  family: string;
  subfamily: string;
  /** OS/2 weight class, rounded to 100..900. */
  weight: number;
  italic: boolean;
  glyphs: number;
  sfntBytes: number;
  /** sha256 hex of the sfnt bytes: the font's identity in agents' caches. */
  sha256: string;
}

/** A font the checker refused; `message` says why, for the client. */
export class FontRejectedError extends Error {
  override name = 'FontRejectedError';
  /** The checker's CPU time spent on the font before it was refused, in ms (0 when the engine-free checks refused it). */
  cpuMs = 0;
}

export interface InspectFontOptions {
  /** The font file as uploaded (TTF, OTF or WOFF2). */
  input: string;
  /** Where the checked sfnt bytes are written (a WOFF2 upload is decoded). */
  output: string;
  /**
   * The checker's CPU time a font may use before it is refused (default: cpuBudgetMs of its size).
   * CPU time, because a busy machine stretches wall time (a sound 2,800-character font took 13-20 s
   * of wall time at load 30 on 2 cores) but not the work a font costs; wall time is capped at
   * WALL_FACTOR times this.
   */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

const CHILD = fileURLToPath(new URL('./inspect-font-child.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** JS heap of the checker; decoded fonts are at most 30 MB. */
const CHILD_HEAP_MB = 384;
const STDOUT_CAP = 64 * 1024;
const CHILD_NICE = 10;
/** The checker's wall-time cap, as a multiple of its CPU budget (a child that waits instead of working). */
const WALL_FACTOR = 6;
/** Linux reports /proc CPU times in USER_HZ ticks, 100 a second on every architecture it supports. */
const TICKS_PER_SECOND = 100;
/**
 * Checks running at once per process: font checks must not starve renders or API requests. A
 * caller that orders checks itself (the control plane's fair share between accounts) runs at most
 * this many, so this bound never queues its work in arrival order.
 */
export const FONT_CHECKS_IN_PARALLEL = 2;
const MAX_PARALLEL = FONT_CHECKS_IN_PARALLEL;
/**
 * The checker's CPU budget for a font whose sfnt is `bytes` long: 5 s plus 5 s per MiB, at most 20 s.
 * Measured (the child alone, `/usr/bin/time`, 2 cores at load 3-4): a check costs about 1 CPU-s to
 * start (Node, tsx, Skia) and about 1.5 CPU-s more per MB at most: Noto Music (81 KB) 1.0 s, Noto
 * Looped Lao (55 KB) 1.3 s, Linux Libertine (CFF, 505 KB) 1.8 s, Noto Serif (589 KB) 1.8 s, DejaVu
 * Sans (760 KB) 2.1 s, Noto Serif Tangut (3.4 MB) 3.1 s, Noto Sans SignWriting (5.2 MB) 3.1 s: every
 * one within a quarter of its budget (5.3, 7.4, 7.9, 8.6, 20, 20 s). A 2.5 KB file gets 5 s, not the
 * 20 s a hostile one used to burn (a 1.5 KB font of doubling composite glyphs, refused after 20 CPU-s
 * and 33 s of wall time, is now refused after 5).
 */
export function cpuBudgetMs(bytes: number): number {
  return Math.min(20_000, Math.round(5_000 + (5_000 * bytes) / (1024 * 1024)));
}

let running = 0;
const waiting: (() => void)[] = [];

/**
 * Parses and validates an untrusted font in a child process (structure, checksums, every glyph
 * through fontkit, a sample through Skia), so a hostile font can crash, hang or bloat only that
 * child. Resolves with the report, or rejects with FontRejectedError.
 */
export async function inspectFont(opts: InspectFontOptions): Promise<FontReport> {
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const sfntBytes = await precheck(opts.input);
  if (running >= MAX_PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await runChild(opts, opts.timeoutMs ?? cpuBudgetMs(sfntBytes));
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * The engine-free checks in this process: a child (about 1 s to start) only for files that pass
 * them. Returns the size of the sfnt to check: the file's, or a WOFF2's declared decoded size
 * (which its header check bounds to 100 times the compressed data).
 */
async function precheck(input: string): Promise<number> {
  const f = await open(input, 'r');
  try {
    const { size } = await f.stat();
    if (size > MAX_SFNT_BYTES) throw new FontRejectedError(`the font file is larger than ${MAX_SFNT_BYTES} bytes`);
    const bytes = Buffer.alloc(size);
    await f.read(bytes, 0, size, 0);
    return precheckFontFile(bytes) === 'woff2' ? checkWoff2Header(bytes).totalSfntSize : size;
  } catch (err) {
    if (err instanceof FontProblem) throw new FontRejectedError(err.message);
    throw err;
  } finally {
    await f.close();
  }
}

async function runChild(opts: InspectFontOptions, budgetMs: number): Promise<FontReport> {
  const { signal } = opts;
  let stdout = '';
  const child = runProcess(process.execPath, {
    args: [`--max-old-space-size=${CHILD_HEAP_MB}`, '--stack-size=900', '--import', TSX, CHILD, opts.input, opts.output],
    signal,
    onStdout: (c) => {
      if (stdout.length < STDOUT_CAP) stdout += c;
    },
    stderrTailChars: 2048,
  });
  // Background work: below the API's event loop and the renderers (nice 10, as the control plane's
  // worker threads), so a queue of hostile fonts on a small machine slows no request. Its budget is
  // CPU time, which niceness does not stretch.
  try {
    if (child.pid !== undefined) setPriority(child.pid, CHILD_NICE);
  } catch {
    /* not permitted here: run at the parent's priority */
  }
  let timedOut = false;
  /** The child's CPU time at the last look (wall time where /proc cannot tell). */
  let cpuMs = 0;
  const started = Date.now();
  const timer = setInterval(
    () => {
      const wallMs = Date.now() - started;
      cpuMs = cpuMsOf(child.pid) ?? wallMs;
      if (cpuMs > budgetMs || wallMs > budgetMs * WALL_FACTOR) {
        timedOut = true;
        child.kill('SIGKILL');
      }
    },
    Math.min(100, budgetMs),
  );
  let exit: Awaited<typeof child.done>;
  try {
    exit = await child.done;
  } catch (err) {
    if (signal?.aborted) throw abortError(signal);
    throw err;
  } finally {
    clearInterval(timer);
  }
  const rejected = (message: string) => Object.assign(new FontRejectedError(message), { cpuMs: timedOut ? Math.max(cpuMs, budgetMs) : cpuMs });
  if (timedOut) throw rejected('the font took too long to read (refused as a possible attack)');
  const line = stdout.split('\n').find((l) => l.startsWith('{'));
  let msg: { ok: true; font: FontReport } | { ok: false; reason: string } | undefined;
  try {
    msg = line ? (JSON.parse(line) as typeof msg) : undefined;
  } catch {
    msg = undefined;
  }
  if (msg?.ok === true && exit.exitCode === 0) return msg.font;
  if (msg?.ok === false) throw rejected(msg.reason);
  // No verdict: the checker crashed or ran out of memory on this font.
  const why = exit.exitSignal ? `signal ${exit.exitSignal}` : `exit ${exit.exitCode}`;
  const oom = /heap out of memory|Allocation failed/i.test(exit.stderrTail);
  throw rejected(
    oom ? 'the font needs too much memory to read (refused as a possible attack)' : `the font crashed the font reader (${why}); it is damaged or hostile`,
  );
}

/** CPU time (user + system) a process has used so far, in ms; undefined where /proc cannot tell (not Linux, gone). */
function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
