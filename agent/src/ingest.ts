import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import type { JobSource } from '@captionfarm/contracts';
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
const storeBackoffMs = (attempt: number): number => 250 * 2 ** attempt;

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
 */
export async function uploadFile(url: string, file: string, sizeBytes: number, contentType: string, signal: AbortSignal): Promise<void> {
  const res = await storeRequest(() => putFile(url, file, { 'content-length': String(sizeBytes), 'content-type': contentType }, signal), signal);
  if (!res.ok) throw new Error(`output upload answered HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
}

/**
 * One PUT of `file` with undici's `request`, its answer as a fetch Response (what storeRequest
 * takes). Not fetch: fetch kept 60-75 MB of a streamed body's buffers alive after a 59 MB upload,
 * and the garbage collections they set off cost the agent's process 0.37-0.68 CPU-s an upload,
 * with up to 22 full collections, more with every upload; `request` took 0.16-0.29 CPU-s and no
 * full collection (the built-in store in the same process, 5-6 uploads each). The file is read
 * in fs's 64 KiB pieces: with 1 MiB pieces a store that refuses before reading the body (and
 * closes) broke the write before its answer was read 20 times in 30; with 64 KiB, 0 in 160, as
 * with fetch. A store silent for 300 s fails the try (undici's timeouts, as with fetch).
 */
async function putFile(url: string, file: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  const res = await request(url, { method: 'PUT', headers, body: createReadStream(file), signal });
  const body = await res.body.text();
  return new Response([204, 205, 304].includes(res.statusCode) ? null : body, { status: res.statusCode });
}
