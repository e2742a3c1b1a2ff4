import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UploadRecord } from '@captionfarm/contracts';
import { CaptionfarmError, CaptionfarmNetworkError, UploadRejectedError } from './errors.ts';
import type { Job } from './job.ts';
import type { JobOutputs } from './outputs.ts';
import { causeMessage } from './util.ts';

/** Bytes for the upload PUT: in memory, a Blob, a web ReadableStream or any async iterable (a Node Readable, e.g. fs.createReadStream). */
export type UploadBody = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface TransferProgress {
  /** Bytes sent (upload) or received (download) so far. */
  bytes: number;
  /** Total bytes; null for a download whose server sent no Content-Length. */
  totalBytes: number | null;
}

export interface PutUploadOptions {
  signal?: AbortSignal | undefined;
  /** Called as bytes are handed to the connection (at most every 64 KiB chunk) and once at the end. */
  onProgress?: ((p: TransferProgress) => void) | undefined;
}

const CHUNK = 64 * 1024;

function knownLength(body: UploadBody): number | undefined {
  if (body instanceof Uint8Array) return body.byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (body instanceof Blob) return body.size;
  return undefined;
}

async function* chunksOf(body: UploadBody): AsyncGenerator<Uint8Array> {
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(body);
    for (let i = 0; i < bytes.byteLength; i += CHUNK) yield bytes.subarray(i, Math.min(i + CHUNK, bytes.byteLength));
    return;
  }
  const source: AsyncIterable<Uint8Array> =
    body instanceof Blob ? (body.stream() as unknown as AsyncIterable<Uint8Array>) : (body as AsyncIterable<Uint8Array>);
  for await (const chunk of source) yield typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
}

/**
 * The raw PUT of step 2: the bytes themselves (never multipart), `Content-Length` exactly the
 * body's size, `Content-Type` the upload's `contentType`, and no Authorization header (the URL
 * carries the authorization). A body of another size than the signed `sizeBytes` is refused by
 * the store with 403; a stream body must yield exactly `sizeBytes` bytes.
 */
export async function putUpload(
  fetchImpl: typeof fetch,
  upload: Pick<UploadRecord, 'uploadUrl' | 'contentType' | 'sizeBytes'>,
  body: UploadBody,
  opts: PutUploadOptions = {},
): Promise<void> {
  const length = knownLength(body) ?? upload.sizeBytes;
  let sent = 0;
  let lengthProblem: string | undefined;
  const source = chunksOf(body);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await source.next();
      if (next.done) {
        if (sent !== length) {
          lengthProblem = `the body ended after ${sent} of ${length} bytes (did the file change during the upload?)`;
          controller.error(new CaptionfarmError('upload_size_mismatch', lengthProblem));
          return;
        }
        controller.close();
        return;
      }
      sent += next.value.byteLength;
      if (sent > length) {
        lengthProblem = `the body is longer than ${length} bytes (did the file change during the upload?)`;
        controller.error(new CaptionfarmError('upload_size_mismatch', lengthProblem));
        return;
      }
      controller.enqueue(next.value);
      opts.onProgress?.({ bytes: sent, totalBytes: length });
    },
    async cancel() {
      await source.return(undefined);
    },
  });
  let res: Response;
  try {
    res = await fetchImpl(upload.uploadUrl, {
      method: 'PUT',
      // A presigned URL never redirects, and a streamed body could not be sent again anyway. With
      // fetch's default ('follow') the request is cloned for a redirect, which tees the body: the
      // branch never sent kept every byte read (289 MB of buffers for a 300 MB upload).
      redirect: 'error',
      headers: { 'content-type': upload.contentType, 'content-length': String(length) },
      body: stream,
      duplex: 'half',
      ...(opts.signal ? { signal: opts.signal } : {}),
    } as RequestInit);
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (lengthProblem) throw new CaptionfarmError('upload_size_mismatch', `upload not sent: ${lengthProblem}`, { cause: err });
    throw new CaptionfarmNetworkError(
      'network_error',
      `the upload PUT to ${new URL(upload.uploadUrl).origin} failed after ${sent} of ${length} bytes (${causeMessage(err)})`,
      { cause: err },
    );
  }
  const text = await res.text().catch(() => '');
  if (res.status !== 200) {
    const storageCode = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    const storageMessage = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    const sizeHint =
      res.status === 403 && length !== upload.sizeBytes
        ? `: the body is ${length} bytes but the URL is signed for exactly ${upload.sizeBytes}; create a new upload with sizeBytes ${length}`
        : res.status === 403
          ? ': the URL expired (15 minutes after issue), was altered, or the request carried an Authorization header; create a new upload'
          : '';
    throw new UploadRejectedError({
      status: res.status,
      storageCode,
      message:
        `the object store refused the upload with HTTP ${res.status}` +
        `${storageCode ? ` ${storageCode}` : ''}${storageMessage ? ` (${storageMessage})` : ''}${sizeHint}`,
    });
  }
  opts.onProgress?.({ bytes: length, totalBytes: length });
}

export interface DownloadOptions {
  signal?: AbortSignal | undefined;
  onProgress?: ((p: TransferProgress) => void) | undefined;
}

/**
 * Streams a succeeded job's output (its presigned `downloadUrl`, no Authorization header) to
 * `path`, through `path + '.part'` renamed at the end, so `path` never holds a partial file.
 */
export async function downloadOutput(
  fetchImpl: typeof fetch,
  job: Pick<Job, 'id' | 'status' | 'downloadUrl'>,
  path: string,
  opts: DownloadOptions = {},
): Promise<{ path: string; bytes: number }> {
  if (!job.downloadUrl) {
    throw new CaptionfarmError('no_output', `job ${job.id} has no output to download (status ${job.status}; downloadUrl is set once it succeeded)`);
  }
  return downloadTo(fetchImpl, { url: job.downloadUrl, what: `the output of job ${job.id}`, refresh: 'fetch the job again for a fresh link' }, path, opts);
}

/**
 * Issue 43: one rendition (`which`: its index) or the poster (`'poster'`) of GET .../outputs, streamed
 * to `path` as downloadOutput does.
 */
export async function downloadRendition(
  fetchImpl: typeof fetch,
  outputs: Pick<JobOutputs, 'jobId' | 'outputs' | 'poster'>,
  which: number | 'poster',
  path: string,
  opts: DownloadOptions = {},
): Promise<{ path: string; bytes: number }> {
  const refresh = 'call getJobOutputs again for fresh links';
  if (which === 'poster') {
    if (!outputs.poster)
      throw new CaptionfarmError('no_output', `job ${outputs.jobId} has no poster to download (none was asked for, or the job has not succeeded yet)`);
    return downloadTo(fetchImpl, { url: outputs.poster.downloadUrl, what: `the poster of job ${outputs.jobId}`, refresh }, path, opts);
  }
  const output = outputs.outputs.find((o) => o.index === which);
  if (!output) {
    throw new CaptionfarmError(
      'no_output',
      `job ${outputs.jobId} has no rendition ${which} (its renditions are ${outputs.outputs.map((o) => o.index).join(', ')})`,
    );
  }
  if (!output.downloadUrl) {
    throw new CaptionfarmError(
      'no_output',
      `rendition ${which} of job ${outputs.jobId} has no link (the job has not succeeded, or its outputs expired${output.outputExpiresAt ? ` at ${output.outputExpiresAt}` : ''})`,
    );
  }
  return downloadTo(fetchImpl, { url: output.downloadUrl, what: `rendition ${which} of job ${outputs.jobId}`, refresh }, path, opts);
}

/** A presigned GET link streamed to `path` through `path.part`; `what` names it in errors, `refresh` says how to get a new link. */
async function downloadTo(
  fetchImpl: typeof fetch,
  source: { url: string; what: string; refresh: string },
  path: string,
  opts: DownloadOptions,
): Promise<{ path: string; bytes: number }> {
  const { what } = source;
  let res: Response;
  try {
    res = await fetchImpl(source.url, opts.signal ? { signal: opts.signal } : {});
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new CaptionfarmNetworkError('network_error', `cannot download ${what} (${causeMessage(err)})`, { cause: err });
  }
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    const expired = res.status === 403 ? ` (download links expire 7 days after the job succeeded; ${source.refresh})` : '';
    throw new CaptionfarmError('download_failed', `downloading ${what} answered HTTP ${res.status}${expired}`);
  }
  const header = res.headers.get('content-length');
  const totalBytes = header !== null && /^\d+$/.test(header) ? Number(header) : null;
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      opts.onProgress?.({ bytes, totalBytes });
      cb(null, chunk);
    },
  });
  const part = `${path}.part`;
  try {
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
      counter,
      createWriteStream(part),
      opts.signal ? { signal: opts.signal } : {},
    );
    if (totalBytes !== null && bytes !== totalBytes) throw new CaptionfarmError('download_failed', `${what} ended after ${bytes} of ${totalBytes} bytes`);
    await rename(part, path);
  } catch (err) {
    await rm(part, { force: true });
    if (opts.signal?.aborted) throw opts.signal.reason;
    // A local file problem (no such directory, disk full) is not a network error: pass it on.
    if (err instanceof CaptionfarmError || (err as NodeJS.ErrnoException).path !== undefined) throw err;
    throw new CaptionfarmNetworkError('network_error', `downloading ${what} failed after ${bytes} bytes (${causeMessage(err)})`, {
      cause: err,
    });
  }
  return { path, bytes };
}
