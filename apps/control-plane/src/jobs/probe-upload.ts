import { probeMedia, RenderError } from '@captionfarm/renderer';
import type { ObjectStore } from '@captionfarm/storage';

/**
 * ffprobe of an uploaded object: its duration, a verdict that it can never be processed, or null
 * when the probe itself could not run (then the plan's maximum is reserved and ingest probes again).
 */
export type UploadProbe = (objectKey: string) => Promise<{ durationSeconds: number } | { unreadable: string } | null>;

/** How long the probe of a claimed upload may take before its job falls back to the plan's maximum. */
const PROBE_TIMEOUT_MS = 20_000;

/**
 * ffprobe of an upload through a short presigned GET (the built-in store and S3 alike): ffprobe
 * reads the container's header and index with range requests, not the whole file. Duration for
 * the reservation; `unreadable` when the bytes are not a video (the job fails source-unreadable);
 * null when the probe could not run (the agent probes again at ingest).
 */
export async function probeUpload(store: ObjectStore, objectKey: string): ReturnType<UploadProbe> {
  const url = await store.presignGet({ key: objectKey, expiresInSeconds: 300 });
  try {
    const info = await probeMedia(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return { durationSeconds: info.durationSeconds };
  } catch (err) {
    if (err instanceof RenderError && err.code === 'source-unreadable') return { unreadable: err.message.split('\n')[0]! };
    return null;
  }
}
