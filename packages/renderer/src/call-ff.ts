import type { Writable } from 'node:stream';
import { runProcess, withHeapMalloc, type ProcessResult } from '@captionfarm/process';
import { abortError } from './errors.ts';
import { ffmpegPaths } from '@captionfarm/process/tools';

export interface FfRunOptions {
  bin: 'ffmpeg' | 'ffprobe';
  /** argv after the binary, from a pure builder: never a shell string. */
  args: readonly string[];
  signal?: AbortSignal | undefined;
  /** Open fd 3 as a pipe into the child (ffmpeg reads it as `pipe:3`). */
  inputPipe?: boolean;
  /** Open this many pipes from fd 3 on (`pipe:3`, `pipe:4`, ...: one caption stream per rendition). */
  inputPipes?: number;
  /** Streams stdout (ffmpeg's `-progress pipe:1`) instead of collecting it. */
  onStdout?: (chunk: string) => void;
  /** Niceness added to ours; default 0. */
  nice?: number;
}

export type FfResult = ProcessResult;

export interface FfRun {
  /** fd 3 of the child, when `inputPipe` was set. */
  input: Writable | undefined;
  /** fd 3, 4, ... of the child, when `inputPipes` was set. */
  inputs: Writable[];
  /** Settles when the child has exited; rejects with an AbortError if the signal fired. */
  done: Promise<FfResult>;
}

/**
 * The one place that runs ffmpeg and ffprobe (through the transcriber's process module: execa,
 * setpriv), with glibc's malloc tuned for its large frame buffers (withHeapMalloc). An abort
 * SIGKILLs the child at once (nothing it would flush is kept: the caller deletes the partial
 * output) and `done` rejects with an AbortError only after the child is gone, so callers can
 * remove temp files safely.
 */
export function runFf(opts: FfRunOptions): FfRun {
  const { signal } = opts;
  if (signal?.aborted) {
    return { input: undefined, inputs: [], done: Promise.reject(abortError(signal)) };
  }
  const run = runProcess(ffmpegPaths()[opts.bin], {
    args: opts.args,
    signal,
    inputPipe: opts.inputPipe ?? false,
    ...(opts.inputPipes === undefined ? {} : { inputPipes: opts.inputPipes }),
    nice: opts.nice ?? 0,
    env: withHeapMalloc(),
    ...(opts.onStdout ? { onStdout: opts.onStdout } : {}),
  });
  const done = run.done.catch((err: unknown) => {
    throw signal?.aborted ? abortError(signal) : err;
  });
  return { input: run.input, inputs: run.inputs, done };
}
