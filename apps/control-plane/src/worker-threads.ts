import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Piscina } from 'piscina';

/**
 * The control plane's worker threads (previews, password hashing, large transcripts): a piscina
 * pool of `threads` threads of the worker module at `entry` (an .mjs entry that loads the
 * TypeScript worker through tsx), started on demand and ended after a minute idle.
 */
export function workerPool(entry: URL, threads: number, options: { maxQueue?: number } = {}): Piscina {
  return new Piscina({ filename: entry.href, minThreads: 0, maxThreads: threads, idleTimeout: 60_000, ...options });
}

/**
 * Called at the top of a worker module: its work is background work, so on Linux, where a thread
 * has its own nice value, this thread yields the CPU to the main thread (API requests, the agents'
 * control messages) when cores are scarce. /proc/thread-self names this thread's id; elsewhere, or
 * when not permitted, the thread keeps its priority.
 */
export function lowerThisThreadPriority(nice = 10): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    /* not Linux, or not permitted: run at normal priority */
  }
}
