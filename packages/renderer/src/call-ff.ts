import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { dieWithParent } from '@captionfarm/transcriber/die-with-parent';
import { abortError } from './errors.ts';
import { ffmpegPaths } from './ffmpeg-path.ts';

/** How much of stderr an error message keeps: ffmpeg's reason is in its last lines. */
const STDERR_TAIL_BYTES = 4096;

export interface FfRunOptions {
  bin: 'ffmpeg' | 'ffprobe';
  /** argv after the binary, from a pure builder: never a shell string. */
  args: readonly string[];
  signal?: AbortSignal | undefined;
  /** Open fd 3 as a pipe into the child (ffmpeg reads it as `pipe:3`). */
  inputPipe?: boolean;
  /** Streams stdout (ffmpeg's `-progress pipe:1`) instead of collecting it. */
  onStdout?: (chunk: string) => void;
}

export interface FfResult {
  exitCode: number | null;
  /** Set when the child died from a signal. */
  exitSignal: NodeJS.Signals | null;
  /** Collected stdout; empty when `onStdout` was given. */
  stdout: string;
  stderrTail: string;
}

export interface FfRun {
  /** fd 3 of the child, when `inputPipe` was set. */
  input: Writable | undefined;
  /** Settles when the child has exited; rejects with an AbortError if the signal fired. */
  done: Promise<FfResult>;
}

/**
 * The one place that spawns ffmpeg and ffprobe. An abort SIGKILLs the child at once (nothing
 * it would flush is kept: the caller deletes the partial output) and `done` rejects with an
 * AbortError only after the child is gone, so callers can remove temp files safely.
 */
export function runFf(opts: FfRunOptions): FfRun {
  const { signal } = opts;
  if (signal?.aborted) {
    return { input: undefined, done: Promise.reject(abortError(signal)) };
  }
  // In the process group of nobody but us: killed by the kernel when this process dies.
  const [command, args] = dieWithParent(ffmpegPaths()[opts.bin], opts.args);
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe', ...(opts.inputPipe ? (['pipe'] as const) : [])],
    windowsHide: true,
  });
  const input = opts.inputPipe ? (child.stdio[3] as Writable) : undefined;
  // ffmpeg closing fd 3 early (error, or it has read enough) must not crash the writer.
  input?.on('error', () => {});

  let stdout = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    if (opts.onStdout) opts.onStdout(chunk);
    else stdout += chunk;
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
  });

  const kill = (): void => {
    child.kill('SIGKILL');
  };
  signal?.addEventListener('abort', kill, { once: true });

  const done = new Promise<FfResult>((resolve, reject) => {
    child.on('error', (err) => {
      signal?.removeEventListener('abort', kill);
      reject(err);
    });
    child.on('close', (exitCode, exitSignal) => {
      signal?.removeEventListener('abort', kill);
      if (signal?.aborted) reject(abortError(signal));
      else resolve({ exitCode, exitSignal, stdout, stderrTail: stderr });
    });
  });
  return { input, done };
}
