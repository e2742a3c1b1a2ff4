import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  ApiError,
  CreateUploadRequestSchema,
  PLANS,
  UPLOAD_CONTENT_TYPES,
  contentTypeForFileName,
  issuesToDetails,
  type UploadRecord,
} from '@captionfarm/contracts';
import { lockAccount, type Db } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import type { Caller } from '../jobs/service.ts';

const UPLOAD_URL_TTL_SECONDS = 15 * 60;
const UNCLAIMED_UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;

const DAY_MS = 86_400_000;

/** The key an upload's presigned PUT URL names: `uploads/<upload id>.<extension>`. */
function uploadKeyOf(uploadId: string, fileName: string): string {
  return `uploads/${uploadId}.${fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase()}`;
}

/** The job-owned key a claimed upload is sealed to on S3 (ObjectStore.seal): no URL names it. */
export function sourceKeyFor(jobId: string, uploadKey: string): string {
  return `sources/${jobId}${path.posix.extname(uploadKey)}`;
}

type UploadsDeps = { db: Db; store: ObjectStore; now: () => Date };

/** A presigned upload URL for a video file, within the plan's size limit and uploads per day. */
async function createUpload(deps: UploadsDeps, caller: Caller, body: unknown): Promise<UploadRecord> {
  const { db, store, now } = deps;
  const parsed = CreateUploadRequestSchema.safeParse(body);
  if (!parsed.success)
    throw new ApiError('invalid_request', 'The request body is not a valid upload request: see details.', {
      details: issuesToDetails(parsed.error.issues),
    });
  const { fileName, sizeBytes } = parsed.data;
  const contentType = contentTypeForFileName(fileName);
  if (!contentType) {
    throw new ApiError(
      'unsupported_media_type',
      `"${fileName}" is not an accepted video file; accepted extensions: ${Object.keys(UPLOAD_CONTENT_TYPES).join(', ')}.`,
    );
  }
  const plan = PLANS[caller.plan];
  if (sizeBytes > plan.maxUploadBytes) {
    throw new ApiError('limit_exceeded', `The ${caller.plan} plan accepts uploads up to ${plan.maxUploadBytes} bytes; this file is ${sizeBytes} bytes.`, {
      details: [{ path: 'sizeBytes', message: `at most ${plan.maxUploadBytes}` }],
    });
  }
  const t = now();
  // Uploads per day count per UTC calendar day; Retry-After points at the next midnight.
  const dayStart = new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
  const id = randomUUID();
  const key = uploadKeyOf(id, fileName);
  const expiresAt = new Date(t.getTime() + UPLOAD_URL_TTL_SECONDS * 1000);
  await db.transaction().execute(async (trx) => {
    // The daily quota holds across control planes: a concurrent create for this account waits.
    await lockAccount(trx, caller.accountId);
    const used = await trx
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', caller.accountId)
      .where('created_at', '>=', dayStart.toISOString())
      .executeTakeFirstOrThrow();
    if (Number(used.n) >= plan.uploadsPerDay) {
      throw new ApiError('quota_exceeded', `The ${caller.plan} plan allows ${plan.uploadsPerDay} upload URLs per day (UTC); try again tomorrow or upgrade.`, {
        retryAfterSeconds: Math.max(1, Math.ceil((dayStart.getTime() + DAY_MS - t.getTime()) / 1000)),
      });
    }
    await trx
      .insertInto('uploads')
      .values({
        id,
        account_id: caller.accountId,
        object_key: key,
        file_name: fileName,
        content_type: contentType,
        size_bytes: sizeBytes,
        created_at: t.toISOString(),
        url_expires_at: expiresAt.toISOString(),
        completed_at: null,
        claimed_by_job_id: null,
        deleted_at: null,
      })
      .execute();
  });
  const uploadUrl = await store.presignPut({ key, contentLength: sizeBytes, contentType, expiresInSeconds: UPLOAD_URL_TTL_SECONDS });
  return { uploadId: id, uploadUrl, contentType, sizeBytes, expiresAt: expiresAt.toISOString() };
}

export function createUploadsService(deps: UploadsDeps) {
  const { db, store, now } = deps;
  return {
    create: (caller: Caller, body: unknown): Promise<UploadRecord> => createUpload(deps, caller, body),

    /**
     * The store's write guard: once a job has claimed an upload, its URL can no longer replace the
     * object (the queued job must process the bytes it was created with). 409 from the store.
     */
    async refusePut(key: string): Promise<string | null> {
      const row = await db.selectFrom('uploads').select('claimed_by_job_id').where('object_key', '=', key).executeTakeFirst();
      return row?.claimed_by_job_id ? 'this upload was already used by a job and can no longer be replaced; create a new upload' : null;
    },

    /**
     * Deletes the uploaded sources of ended jobs (one job when `jobId` is given, on its end; all of
     * them on a sweep, which also catches a crash between a job's end and this). An upload serves
     * one job, so nothing can read it again. The object goes first, then the row is marked: a
     * crash in between only means deleting it once more.
     */
    async deleteEndedSources(jobId?: string): Promise<number> {
      let q = db
        .selectFrom('uploads')
        .innerJoin('jobs', 'jobs.id', 'uploads.claimed_by_job_id')
        .select(['uploads.id', 'uploads.object_key', 'uploads.file_name'])
        .where('uploads.deleted_at', 'is', null)
        .where('jobs.status', 'in', ['succeeded', 'failed', 'cancelled']);
      if (jobId) q = q.where('jobs.id', '=', jobId);
      const ended = await q.execute();
      for (const u of ended) {
        await store.delete(u.object_key);
        // Sealed on S3 (ObjectStore.seal): the upload's own key too, should its URL have been used
        // again after the claim (S3 cannot refuse it). A PUT after this, within the URL's last
        // minutes, is left to the bucket's lifecycle rule (README "Object storage").
        const uploadKey = uploadKeyOf(u.id, u.file_name);
        if (uploadKey !== u.object_key) await store.delete(uploadKey);
        await db.updateTable('uploads').set({ deleted_at: now().toISOString() }).where('id', '=', u.id).where('deleted_at', 'is', null).execute();
      }
      return ended.length;
    },

    /** Removes uploaded files not turned into a job within 24 hours. Returns how many were removed. */
    async sweepUnclaimed(): Promise<number> {
      const cutoff = new Date(now().getTime() - UNCLAIMED_UPLOAD_TTL_MS).toISOString();
      const stale = await db
        .selectFrom('uploads')
        .select(['id', 'object_key'])
        .where('claimed_by_job_id', 'is', null)
        .where('deleted_at', 'is', null)
        .where('created_at', '<', cutoff)
        .execute();
      let removed = 0;
      for (const u of stale) {
        // Mark first, guarded: a job that claimed it meanwhile keeps its file.
        const res = await db
          .updateTable('uploads')
          .set({ deleted_at: now().toISOString() })
          .where('id', '=', u.id)
          .where('claimed_by_job_id', 'is', null)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 1) {
          await store.delete(u.object_key);
          removed++;
        }
      }
      return removed;
    },
  };
}
export type UploadsService = ReturnType<typeof createUploadsService>;
