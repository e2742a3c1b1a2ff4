import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite WAL checkpoints off the request path. By default the connection that commits also
 * checkpoints (every 1,000 pages of WAL): that commit copies the pages back into the database and
 * fsyncs it, with the event loop stopped for milliseconds, and every request queued behind it waits
 * (bench:api's p99 on SQLite). Here one worker thread per process holds its own connection to each
 * open database file and runs a PASSIVE checkpoint every `CHECKPOINT_EVERY_MS`: it never blocks a
 * writer, and the fsync happens on that thread. The writing connection keeps a far higher
 * threshold (`WAL_SAFETY_NET_PAGES`) as a safety net should the worker stop.
 *
 * A passive checkpoint copies the WAL up to where it was when the checkpoint began; under a steady
 * stream of commits the WAL never stands fully copied when the next write starts, so it never
 * starts over: at bench:api's 500 creates a second it reached the safety net within 4 s, and each
 * time the commit that crossed it copied what the worker had not yet copied (up to half a second
 * of commits) and synced the database file on the event loop. So once the WAL holds
 * `RESTART_FRAMES` frames after one of the worker's checkpoints, the worker tells the writer
 * (`onBehind`), which checkpoints on its own connection right away: only the frames committed
 * since the worker's checkpoint began are left to copy, and the next commit starts the WAL over.
 * (A FULL checkpoint in the worker would do it without the writer, but it takes the write lock,
 * and a transaction that read first and writes then fails with SQLITE_BUSY at once: SQLite calls
 * no busy handler for that upgrade.) `test/open.test.ts` ("steady stream") holds the WAL under
 * 8,000 frames where it reached 10,000 before.
 */
const CHECKPOINT_EVERY_MS = 500;
/** 10,000 pages of 4 KiB: the WAL size past which the writer checkpoints by itself after all. */
export const WAL_SAFETY_NET_PAGES = 10_000;
/** 2,000 frames (8 MiB): past this, the writer is asked to checkpoint so the WAL can start over. */
const RESTART_FRAMES = 2_000;

// The worker is plain CommonJS (eval), so it runs the same under tsx, node and a bundle.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.betterSqlite3);
const open = new Map();
setInterval(() => {
  for (const [file, { db }] of open) {
    try {
      const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
      if (passive && passive.log >= workerData.restartFrames) parentPort.postMessage({ behind: file });
    } catch {}
  }
}, workerData.everyMs);
parentPort.on('message', ({ id, add, remove }) => {
  try {
    // Counted: one process may open the same file twice.
    if (add) {
      const o = open.get(add) ?? { db: new SQLite(add, { fileMustExist: true }), n: 0 };
      o.n++;
      open.set(add, o);
    }
    const o = remove && open.get(remove);
    if (o && --o.n === 0) { o.db.close(); open.delete(remove); }
    parentPort.postMessage({ id });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, (error?: string) => void>();
/** File -> what its writers do when the worker finds the WAL long (several may have it open). */
const behind = new Map<string, Set<() => void>>();

function ask(message: { add?: string; remove?: string }): Promise<void> {
  if (!worker) {
    const w = new Worker(WORKER, {
      eval: true,
      workerData: { betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'), everyMs: CHECKPOINT_EVERY_MS, restartFrames: RESTART_FRAMES },
    });
    worker = w;
    w.on('message', ({ id, error, behind: file }: { id: number; error?: string; behind?: string }) => {
      if (file !== undefined) {
        for (const onBehind of behind.get(file) ?? []) onBehind();
        return;
      }
      pending.get(id)?.(error);
      pending.delete(id);
      // Held only while an answer is awaited: it must not keep a process alive that has nothing else
      // to do (a 'message' listener refs the worker's port, so a single unref() at creation never holds).
      if (pending.size === 0) w.unref();
    });
    // A worker that dies leaves the writers' own (safety-net) checkpoints; callers waiting on it go on.
    const gone = () => {
      worker = undefined;
      for (const done of pending.values()) done('the checkpoint worker stopped');
      pending.clear();
    };
    w.on('error', gone);
    w.on('exit', gone);
  }
  const id = nextId++;
  const w = worker;
  return new Promise((resolve, reject) => {
    pending.set(id, (error) => (error && message.add ? reject(new Error(error)) : resolve()));
    w.ref();
    w.postMessage({ id, ...message });
  });
}

/**
 * Checkpoints `file` in the background until `release` is awaited (before the writer closes it).
 * `onBehind` runs on the writer's thread when the WAL should be checkpointed there so it can start
 * over (see above): the writer runs a PASSIVE checkpoint on its own connection, unless it is inside
 * a transaction (the next call comes half a second later).
 */
export async function checkpointInBackground(file: string, onBehind: () => void): Promise<{ release(): Promise<void> }> {
  const mine = behind.get(file) ?? new Set();
  mine.add(onBehind);
  behind.set(file, mine);
  try {
    await ask({ add: file });
  } catch (err) {
    mine.delete(onBehind);
    throw err;
  }
  return {
    release: () => {
      mine.delete(onBehind);
      if (mine.size === 0) behind.delete(file);
      return ask({ remove: file });
    },
  };
}
