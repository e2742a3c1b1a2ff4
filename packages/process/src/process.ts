/**
 * The one module that runs child processes (ffmpeg, ffprobe, the VAD, the tests' tools), on execa. What it adds:
 * the `setpriv --pdeathsig` prefix (dieWithParent: the child dies with us, which execa cannot do),
 * an AbortSignal that SIGKILLs the child at once, and the tail of stderr kept for error messages
 * (the reason is in the last lines; a long run's full stderr is not kept).
 */
import type { Writable } from 'node:stream';
import { execa } from 'execa';
import { dieWithParent, killOnExit } from './die-with-parent.ts';

/** How much of stderr a result keeps. */
const STDERR_TAIL_CHARS = 4096;

/**
 * glibc malloc settings for the heavy children (ffmpeg, whisper.cpp): a fixed mmap threshold of
 * 32 MB, so blocks under it come from the heap, and glibc's dynamic mmap and trim thresholds are
 * off. Without it, memory a child frees and allocates again at every frame went back to the
 * kernel in between and was faulted in again, page by page, zero-filled: in a burn-in, 77% of
 * ffmpeg's page faults were in the memcpy of the overlay's writable copy of each decoded frame
 * (`perf record -e page-faults`). Measured here: a 10 s 1080x1920 burn-in took 190,000 minor page
 * faults and about 6% more CPU than the plain re-encode's 24,000 faults; with this, 40,000-46,000
 * faults and the plain re-encode's CPU. `whisper-cli` on 60 s of speech ran 3-4% faster in 7 of 7
 * alternating pairs. README "Performance" has the figures.
 *
 * The trim threshold is set as well, to 64 MB (twice the mmap threshold, as glibc's dynamic rule
 * would set it): a fixed mmap threshold leaves it at its 128 KB default, so each caption image's
 * packet (0.5-1 MB at 1080x1920), freed at the top of the heap, was given back to the kernel and
 * faulted in again for the next one. Replaying word-pop's 137 images from a file into ffmpeg:
 * 31,600-123,000 minor faults in 6 runs against 34,200-35,600, system CPU 0.18-0.30 s against
 * 0.12-0.17 s; the CPU gain itself is within the noise (renderer README), and whisper-cli and peak
 * memory did not move.
 */
const MMAP_THRESHOLD_BYTES = 32 << 20;
export const HEAP_MALLOC_TUNABLES = `glibc.malloc.mmap_threshold=${MMAP_THRESHOLD_BYTES}:glibc.malloc.trim_threshold=${2 * MMAP_THRESHOLD_BYTES}`;

/** `env` with HEAP_MALLOC_TUNABLES added to GLIBC_TUNABLES; an operator's own tunables come after ours, so theirs win. */
export function withHeapMalloc(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const theirs = env.GLIBC_TUNABLES;
  return { ...env, GLIBC_TUNABLES: theirs ? `${HEAP_MALLOC_TUNABLES}:${theirs}` : HEAP_MALLOC_TUNABLES };
}

export interface RunProcessOptions {
  /** argv after the binary, from a pure builder: never a shell string. */
  args: readonly string[];
  signal?: AbortSignal | undefined;
  /** The child's whole environment (not merged with ours); default ours. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Its working directory; default ours. */
  cwd?: string | undefined;
  /** Written to its stdin, which is then closed; default no stdin. */
  input?: string | Uint8Array | undefined;
  /** 'buffer' collects stdout as bytes (a PNG from ffmpeg's image2pipe); default text. */
  encoding?: 'utf8' | 'buffer';
  /** Whether stdout is read (collected, or streamed to `onStdout`); default yes. */
  stdout?: 'pipe' | 'ignore';
  /** Streams stdout (ffmpeg's `-progress pipe:1`) instead of collecting it. */
  onStdout?: (chunk: string) => void;
  /** Streams stdout as bytes (raw frames on a pipe) instead of collecting it; a handler that blocks holds the child back. */
  onStdoutBytes?: (chunk: Buffer) => void;
  /** Sees stderr as it comes (a server's "listening on" line); the tail is kept either way. */
  onStderr?: (chunk: string) => void;
  /** Open fd 3 as a pipe into the child (ffmpeg reads it as `pipe:3`). */
  inputPipe?: boolean;
  /** Open this many pipes into the child from fd 3 on (`pipe:3`, `pipe:4`, ...); overrides `inputPipe`. */
  inputPipes?: number;
  /** How much of stderr to keep; default 4096 characters. */
  stderrTailChars?: number;
  /** Niceness added to ours (nice(1), Linux's 1-19), for the child and every thread it starts; default 0. */
  nice?: number;
}

export interface ProcessResult<Stdout extends string | Buffer = string> {
  exitCode: number | null;
  /** Set when the child died from a signal. */
  exitSignal: NodeJS.Signals | null;
  /** Collected stdout; empty when `onStdout` was given or stdout was ignored. */
  stdout: Stdout;
  stderrTail: string;
}

type Binary = RunProcessOptions & { encoding: 'buffer' };

export interface RunningProcess<Stdout extends string | Buffer = string> {
  /** fd 3 of the child, when `inputPipe` was set. */
  input: Writable | undefined;
  /** fd 3, 4, ... of the child (`inputPipes`, or the one of `inputPipe`). */
  inputs: Writable[];
  /**
   * Settles once the child has exited: with its result whatever the exit code, or rejects with
   * the signal's reason if it was aborted (after the child is gone, so callers can remove temp
   * files), or with the spawn error (ENOENT ...) if it never started.
   */
  done: Promise<ProcessResult<Stdout>>;
  pid: number | undefined;
  /** For a long-running child (whisper-server): stop it with `signal`. */
  kill(signal: NodeJS.Signals): void;
  /** The end of its stderr so far. */
  stderrTail(): string;
}

export function runProcess(binary: string, opts: Binary): RunningProcess<Buffer>;
export function runProcess(binary: string, opts: RunProcessOptions): RunningProcess;
export function runProcess(binary: string, opts: RunProcessOptions): RunningProcess<string | Buffer> {
  const { signal } = opts;
  if (signal?.aborted)
    return { input: undefined, inputs: [], done: Promise.reject(signal.reason), pid: undefined, kill: () => undefined, stderrTail: () => '' };
  const pipes = opts.inputPipes ?? (opts.inputPipe ? 1 : 0);
  const [command, args] = dieWithParent(binary, opts.args, opts.nice);
  const child = execa(command, args, {
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', opts.stdout ?? 'pipe', 'pipe', ...Array.from({ length: pipes }, () => 'pipe' as const)],
    ...(opts.input === undefined ? {} : { input: opts.input }),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    // Streams are read here (a progress callback, a stderr tail), not buffered whole by execa.
    buffer: false,
    reject: false,
    ...(signal ? { cancelSignal: signal } : {}),
    killSignal: 'SIGKILL',
    ...(opts.env ? { env: opts.env, extendEnv: false } : {}),
  });
  // Where setpriv is missing (not Linux), a normal exit of ours still takes the child along.
  killOnExit(child);
  const inputs = Array.from({ length: pipes }, (_, i) => child.stdio[3 + i] as Writable);
  const input = inputs[0];
  // The child closing a pipe early (error, or it has read enough) must not crash the writer.
  for (const pipe of inputs) pipe.on('error', () => {});

  let stdout = '';
  const bytes: Buffer[] = [];
  if (opts.onStdoutBytes) child.stdout?.on('data', opts.onStdoutBytes);
  else if (opts.encoding === 'buffer') child.stdout?.on('data', (chunk: Buffer) => bytes.push(chunk));
  else
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (opts.onStdout) opts.onStdout(chunk);
      else stdout += chunk;
    });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-(opts.stderrTailChars ?? STDERR_TAIL_CHARS));
    opts.onStderr?.(chunk);
  });

  const done = child.then((result) => {
    if (signal?.aborted) throw signal.reason;
    // Never started (ENOENT, EACCES): no exit code and no signal; the spawn error is the cause.
    if (result.exitCode === undefined && result.signal === undefined) throw result.cause ?? result;
    const out = opts.encoding === 'buffer' ? Buffer.concat(bytes) : stdout;
    return { exitCode: result.exitCode ?? null, exitSignal: (result.signal as NodeJS.Signals | undefined) ?? null, stdout: out, stderrTail: stderr };
  });
  return { input, inputs, done, pid: child.pid, kill: (sig) => void child.kill(sig), stderrTail: () => stderr };
}

/**
 * Runs `binary` to its end for its output (a tool's answer, a file it writes): the result, or an
 * Error with the exit status and the end of stderr when it did not exit 0. A child that never
 * started (ENOENT) and an abort reject as runProcess's `done` does.
 */
export async function runToEnd(binary: string, opts: Binary): Promise<ProcessResult<Buffer>>;
export async function runToEnd(binary: string, opts: RunProcessOptions): Promise<ProcessResult>;
export async function runToEnd(binary: string, opts: RunProcessOptions): Promise<ProcessResult<string | Buffer>> {
  const result = await runProcess(binary, opts).done;
  if (result.exitCode !== 0) {
    const how = result.exitSignal ? `was killed by ${result.exitSignal}` : `exited with code ${result.exitCode}`;
    throw new Error(`${binary} ${how}: ${result.stderrTail.trim() || 'no output'}`);
  }
  return result;
}
