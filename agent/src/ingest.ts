import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { exponentialBackoffMs, type JobSource } from '@captionfarm/contracts';
import { isSafeFetchError, type SafeFetchFn } from '@captionfarm/net';
import type { AudioTap } from './audio-tap.ts';
import { JobFailure } from './errors.ts';

export interface DownloadOptions {
  source: JobSource;
  dest: string;
  maxBytes: number;
  /** safeFetch for client URLs: https only, public addresses only, redirects not followed. */
  safeFetch: SafeFetchFn;
  signal: AbortSignal;
  /** Sees every byte as it arrives (the audio extraction that overlaps the download). */
  tap?: AudioTap | undefined;
}

/**
 * Tries of a request to our own store (a presigned URL) that got no answer or a 5xx / 429: S3 asks
 * clients to retry those (503 SlowDown), and the built-in store is a control plane, which may be
 * restarting. Backoff 0.5, 1, 2, 4, 8 s: 15.5 s in all.
 */
const STORE_TRIES = 6;

/** The wait after try `attempt` (from 1) to our own store. */
const storeBackoffMs = (attempt: number): number => exponentialBackoffMs(attempt, { baseMs: 250 });

const retryableStatus = (status: number): boolean => status >= 500 || status === 429;

/**
 * `request` (a fetch to our own store) tried again while it gets no answer or a 5xx / 429 answer,
 * up to STORE_TRIES; the last answer is returned, the last network error thrown.
 */
async function storeRequest(request: () => Promise<Response>, signal: AbortSignal): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await request();
      if (!retryableStatus(res.status) || attempt >= STORE_TRIES) return res;
      await res.body?.cancel();
    } catch (err) {
      if (signal.aborted || attempt >= STORE_TRIES) throw err;
    }
    await delay(storeBackoffMs(attempt), undefined, { signal });
  }
}

/**
 * Downloads the source to `dest`, streamed (never whole in memory). Client URLs go through
 * safeFetch; a redirect is a failure (never followed). Unreachable or 4xx/5xx -> source-unreachable.
 * An uploaded source (our own store) is tried again when the store does not answer or answers a
 * 5xx (storeRequest), and goes on from the bytes already on disk when its body breaks off (at most
 * STORE_TRIES - 1 times, each request of the rest tried as storeRequest tries).
 */
export async function downloadSource(opts: DownloadOptions): Promise<number> {
  const { source, dest, maxBytes, signal } = opts;
  let res: Response;
  try {
    res =
      source.kind === 'url'
        ? await opts.safeFetch(source.url, { signal, maxBytes, timeoutMs: 30 * 60_000 })
        : // Our own store's presigned GET (the control plane made it): no policy to apply; a missing
          // answer or a 5xx is tried again before any byte arrives (storeRequest).
          await storeRequest(() => fetch(source.url, { signal, redirect: 'error' }), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    const why = isSafeFetchError(err) ? err.message : (((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
    throw new JobFailure(source.kind === 'url' ? 'source-unreachable' : 'ingest-failed', `Could not fetch the video: ${why}`);
  }
  if (res.status >= 300 && res.status < 400) {
    throw new JobFailure('source-unreachable', `The video URL answered HTTP ${res.status} (a redirect); redirects are not followed, give the final URL.`);
  }
  if (!res.ok || !res.body) {
    throw new JobFailure(source.kind === 'url' ? 'source-unreachable' : 'ingest-failed', `The video URL answered HTTP ${res.status}.`);
  }
  let received = 0;
  let append = false;
  let tap = opts.tap;
  for (let attempt = 1; ; attempt++) {
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        if (received > maxBytes) return cb(new JobFailure('source-unreachable', `The video is larger than the plan's ${maxBytes}-byte limit.`));
        cb(null, chunk);
      },
    });
    const feed = tap;
    const tee = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        if (!feed) return cb(null, chunk);
        feed.write(chunk).then(() => cb(null, chunk), cb);
      },
    });
    try {
      await pipeline(
        Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
        counter,
        tee,
        createWriteStream(dest, { flags: append ? 'a' : 'w' }),
        {
          signal,
        },
      );
      return received;
    } catch (err) {
      if (!signal.aborted && !(err instanceof JobFailure) && source.kind === 'upload' && attempt < STORE_TRIES) {
        // Our own store broke off mid-body (a restart, a network cut): go on from the bytes on disk
        // (the stream's writes in flight are done once pipeline has settled). The audio extraction
        // has seen bytes the file may not have: it stops, and the WAV is made from the file later.
        const resumed = await resume(source.url, dest, signal, attempt).catch(() => undefined);
        if (resumed) {
          await tap?.cancel();
          tap = undefined;
          ({ res, received, append } = resumed);
          continue;
        }
      }
      await rm(dest, { force: true });
      if (signal.aborted) throw err;
      if (err instanceof JobFailure) throw err;
      if (isSafeFetchError(err) && err.code === 'too_large')
        throw new JobFailure('source-unreachable', `The video is larger than the plan's ${maxBytes}-byte limit.`);
      throw new JobFailure(source.kind === 'url' ? 'source-unreachable' : 'ingest-failed', `The download broke off: ${(err as Error).message}`);
    }
  }
}

/**
 * After a download from our own store broke off: a GET of the rest (`Range` from the bytes on
 * disk), tried as storeRequest tries, after the backoff of try `attempt`. The rest is appended
 * (206 from that byte); a whole answer (200: the store ignored the range) starts the file over.
 * Undefined for any other answer.
 */
async function resume(
  url: string,
  dest: string,
  signal: AbortSignal,
  attempt: number,
): Promise<{ res: Response; received: number; append: boolean } | undefined> {
  await delay(storeBackoffMs(attempt), undefined, { signal });
  const have = (await stat(dest)).size;
  const res = await storeRequest(() => fetch(url, { signal, redirect: 'error', headers: { range: `bytes=${have}-` } }), signal);
  if (res.body && res.status === 206 && res.headers.get('content-range')?.startsWith(`bytes ${have}-`)) return { res, received: have, append: true };
  if (res.body && res.status === 200) return { res, received: 0, append: false };
  await res.body?.cancel();
  return undefined;
}

/**
 * PUTs a file to a presigned URL with its exact Content-Length (streamed from the file, afresh for
 * each try): a PUT that got no answer or a 5xx is sent again (storeRequest), so a store that
 * restarts while a finished render uploads does not lose it.
 *
 * `redirect: 'error'`, as a presigned URL never redirects: with fetch's default ('follow') the
 * request is cloned for a redirect it might follow, which tees the body, and the branch never
 * sent keeps every byte read. A 300 MB upload held 305 MB of buffers (265 MB right after a full
 * GC); with 'error', 33 MB (3 MB). The garbage collections that retained body set off cost a
 * 59 MB upload 0.37-0.68 CPU-s (up to 22 full collections) against 0.18-0.39 CPU-s (none).
 */
export async function uploadFile(url: string, file: string, sizeBytes: number, contentType: string, signal: AbortSignal): Promise<void> {
  const res = await storeRequest(
    () =>
      fetch(url, {
        method: 'PUT',
        redirect: 'error',
        headers: { 'content-length': String(sizeBytes), 'content-type': contentType },
        body: Readable.toWeb(createReadStream(file)) as never,
        duplex: 'half',
        signal,
      } as RequestInit),
    signal,
  );
  if (!res.ok) throw new Error(`output upload answered HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
}
