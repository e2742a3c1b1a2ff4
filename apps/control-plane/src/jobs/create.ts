import { randomUUID } from 'node:crypto';
import { ApiError, PLANS, issuesToDetails, type JobRecord } from '@captionfarm/contracts';
import { insertJob, lockAccount, prepared, quoteProbedJob, type Db, type NewJobRow } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { insertGivenTranscript } from '../services/transcripts.ts';
import { sourceKeyFor } from '../services/uploads.ts';
import { reserveWaiting } from './admission.ts';
import type { PreparedJob } from './body.ts';
import { probeEnding } from './decisions.ts';
import { finishJob } from './finish.ts';
import type { UploadProbe } from './probe-upload.ts';
import { toJobRecord } from './record.ts';
import type { Rendition } from './renditions.ts';
import type { Caller, CountInTransaction, JobsDeps, JobsEmitter } from './service.ts';

/** What a create needs: the jobs service's dependencies and its events. */
type CreateDeps = Omit<JobsDeps, 'cursorKey'> & { events: JobsEmitter };

type JobInput = PreparedJob['input'];

/** What a job keeps of its request once it is resolved: the template that renders, the words of recognition, the account's profane words. */
interface Resolved {
  renderTemplate: Record<string, unknown>;
  vocabulary: string[];
  replacements: { from: string; to: string }[];
  /** The account's own profane words (PUT /v1/profanity-words) when the job masks or bleeps; else none. */
  profanityWords: string[];
}

/**
 * A claimed upload as the create found it before its transaction: its key, the key the job reads
 * (sealed), and the sealed object's size then (null: none).
 */
interface Sealed {
  uploadKey: string;
  key: string;
  sizeBytes: number | null;
}

// The account's last place in its creation order: every create reads it (compiled once, prepared).
const lastSeq = prepared((db, a: { accountId: string }) =>
  db
    .selectFrom('jobs')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('account_id', '=', a.accountId),
);

/**
 * POST /v1/automation-jobs with a body validated already. The checks of the request, then the
 * claimed upload sealed and probed, then one transaction (the rate-limit count, the account lock,
 * the upload's claim, the job, its given transcript, its minutes), then what can be known only now.
 * No store call runs inside the transaction.
 */
export async function createJob(deps: CreateDeps, caller: Caller, job: PreparedJob, rateCount?: CountInTransaction): Promise<JobRecord> {
  const { db, store, now, events } = deps;
  const { input } = job;
  const resolved = await resolveRequest(deps, caller, input);

  const id = randomUUID();
  // A claimed upload is sealed and probed before the transaction (a copy on S3 and ffprobe take
  // time; a transaction holds the database): sealing puts the bytes out of reach of the upload's
  // presigned PUT URL, which stays valid for its 15 minutes (ObjectStore.seal), and the probe
  // reads the sealed bytes, the ones the job will process.
  const { sealed, probe } = input.uploadId ? await sealUpload(deps, caller.accountId, input.uploadId, id) : { sealed: undefined, probe: null };
  const ending = probeEnding(caller.plan, probe);

  const t = now();
  const iso = t.toISOString();
  let reserved: string[] = [];
  const created = db.transaction().execute(async (trx) => {
    // The request's own rate-limit count, in the same write: past the limit nothing is created.
    await rateCount?.count(trx);
    // Another control plane's create for this account waits here: the balance cannot be spent twice.
    await lockAccount(trx, caller.accountId);
    if (input.uploadId) await claimUpload(trx, { accountId: caller.accountId, uploadId: input.uploadId, jobId: id, iso, sealed, probe });
    // The account's creation order (the list's order): under the account lock, so no two jobs share a place.
    const [last] = await lastSeq(trx, { accountId: caller.accountId });
    const values = newJobRow({ id, accountId: caller.accountId, input, resolved, seq: (last?.seq ?? 0) + 1, iso });
    await insertJob(trx, values);
    await insertGivenTranscript(trx, id, job.transcript, iso);
    // Minutes are reserved now when the balance covers them (jobs/admission.ts); a job it
    // cannot cover waits in `queued`. A job that will never run holds nothing.
    if (!ending) reserved = (await reserveWaiting(trx, caller.accountId, caller.plan, t, false)).reserved;
    // The row as this transaction left it (`attempts` at its column default, `reserved_at` as
    // admission set it), without reading it back: an agent may lease it once committed, and the
    // spec's 202 always carries `queued`.
    return { ...values, attempts: 0, reserved_at: reserved.includes(id) ? iso : null };
  });
  const row = await created.catch(async (err: unknown) => {
    await dropCopy(store, sealed);
    throw err;
  });
  rateCount?.committed();
  // The claim holds: the upload's own key has served its purpose (a PUT after this lands there,
  // out of the job's way, and the job's end deletes it again: UploadsService.deleteEndedSources).
  if (sealed && sealed.key !== sealed.uploadKey) await store.delete(sealed.uploadKey).catch(() => undefined);
  // The spec's 202 always carries `queued`. What can be known only now ends the job right
  // after, as a failure with its webhook: an unreadable or too long upload, no minutes left.
  for (const jobId of reserved) events.emit('queued', jobId);
  if (ending) {
    const ended = await db.transaction().execute(async (trx) => {
      // What the probe measured, as ingest would have reported it.
      if (probe && 'durationSeconds' in probe) await quoteProbedJob(trx, { jobId: id, quotedSeconds: Math.ceil(probe.durationSeconds) });
      return finishJob(trx, row, ending, now());
    });
    if (ended) events.emit('ended', ended);
  } else if (!reserved.includes(id)) {
    // The sweeper runs admission again should this fail.
    await deps.admit?.(caller.accountId).catch(() => undefined);
  }
  return toJobRecord(row);
}

/**
 * The request's checks, in this order: its template, its style, its fonts, its URLs, its
 * resolution against the plan. Returns what the job keeps of its template and words.
 */
async function resolveRequest(deps: CreateDeps, caller: Caller, input: JobInput): Promise<Resolved> {
  const { templates } = deps;
  const plan = PLANS[caller.plan];
  const base = await templates.resolve(caller.accountId, input.templateId);
  if (!base) {
    throw new ApiError('invalid_request', `Unknown templateId "${input.templateId}": list the available ones with GET /v1/templates.`, {
      details: [{ path: 'templateId', message: 'unknown template' }],
    });
  }
  // The style is applied here, once: the job keeps its effective template, like a resolved one.
  let template: unknown = base;
  if (input.style) {
    const styled = templates.catalog.applyStyle(base, input.style);
    if (!styled.ok) {
      throw new ApiError('invalid_request', 'style is not valid: see details.', {
        details: issuesToDetails(styled.issues).map((d) => ({ ...d, path: d.path ? `style.${d.path}` : 'style' })),
      });
    }
    template = styled.template;
  }
  await deps.requireFonts(caller.accountId, template, input.style ? 'style.font.fontId' : 'templateId');
  // The words of recognition: the job's own, else the custom template's defaults (a job's value
  // replaces the template's, never merged), resolved now like the template. The job's template
  // keeps only what renders.
  const { vocabulary: templateVocabulary, replacements: templateReplacements, ...renderTemplate } = template as Record<string, unknown>;
  const vocabulary = input.vocabulary ?? (templateVocabulary as string[] | undefined) ?? [];
  const replacements = input.replacements ?? (templateReplacements as { from: string; to: string }[] | undefined) ?? [];
  for (const field of ['videoUrl', 'webhookUrl'] as const) {
    const url = input[field];
    if (url === undefined) continue;
    const reason = await deps.checkPublicUrl(url);
    if (reason) {
      throw new ApiError('invalid_request', `${field} is not accepted: ${reason}.`, { details: [{ path: field, message: reason }] });
    }
  }
  // Every rendition's size within the plan's frame budget (issue 43: outputs[i].resolution, like the top-level one).
  const sizes = input.outputs ? input.outputs.map((o, i) => ({ field: `outputs[${i}].resolution`, path: `outputs.${i}.resolution`, r: o.resolution })) : [];
  for (const { field, path, r } of [{ field: 'resolution', path: 'resolution', r: input.resolution }, ...sizes]) {
    if (r && r.width * r.height > plan.frameBudget) {
      throw new ApiError(
        'limit_exceeded',
        `${field} ${r.width}x${r.height} is over the ${caller.plan} plan's ` + `frame budget of ${plan.frameBudget} pixels; request a smaller size or upgrade.`,
        { details: [{ path, message: `at most ${plan.frameBudget} pixels (width x height)` }] },
      );
    }
  }
  return { renderTemplate, vocabulary, replacements, profanityWords: input.profanity === 'off' ? [] : await accountProfanityWords(deps.db, caller.accountId) };
}

// Read by a create that masks or bleeps (compiled once, prepared).
const profanityWordsOf = prepared((db, a: { accountId: string }) => db.selectFrom('accounts').select('profanity_words_json').where('id', '=', a.accountId));

/**
 * The account's own profane words, resolved into the job at creation (like its template): a later
 * PUT /v1/profanity-words does not change a queued job.
 */
async function accountProfanityWords(db: Db, accountId: string): Promise<string[]> {
  const [row] = await profanityWordsOf(db, { accountId });
  return row?.profanity_words_json ? (JSON.parse(row.profanity_words_json) as string[]) : [];
}

/**
 * Seals and probes a claimed upload when it looks complete (unclaimed, not removed, all its bytes
 * stored), and reads the sealed object's size, all before the transaction. Nothing sealed when it
 * does not look complete: the transaction then says why it cannot be claimed.
 */
async function sealUpload(
  deps: CreateDeps,
  accountId: string,
  uploadId: string,
  jobId: string,
): Promise<{ sealed: Sealed | undefined; probe: Awaited<ReturnType<UploadProbe>> }> {
  const { db, store } = deps;
  const upload = await db
    .selectFrom('uploads')
    .select(['object_key', 'size_bytes', 'claimed_by_job_id', 'deleted_at'])
    .where('id', '=', uploadId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!upload || upload.claimed_by_job_id !== null || upload.deleted_at !== null || (await store.head(upload.object_key))?.sizeBytes !== upload.size_bytes) {
    return { sealed: undefined, probe: null };
  }
  const key = await store.seal(upload.object_key, sourceKeyFor(jobId, upload.object_key));
  const probe = deps.probeUpload ? await deps.probeUpload(key) : null;
  // The size the claim checks, read here rather than under the transaction's lock. Should the
  // store fail now, the copy goes as it would after a failed transaction.
  const head = await store.head(key).catch(async (err: unknown) => {
    await dropCopy(store, { uploadKey: upload.object_key, key, sizeBytes: null });
    throw err;
  });
  return { sealed: { uploadKey: upload.object_key, key, sizeBytes: head?.sizeBytes ?? null }, probe };
}

/** Removes the copy a failed create made (the upload stays as it was, for another try). */
async function dropCopy(store: ObjectStore, sealed: Sealed | undefined): Promise<void> {
  if (sealed && sealed.key !== sealed.uploadKey) await store.delete(sealed.key).catch(() => undefined);
}

/**
 * Claims the upload in the create's transaction, or says why it cannot be: already used, not
 * found, not completed (not sealed, or its object changed since it was sealed). From then on the
 * upload's object is the sealed one: the job reads it, its end deletes it.
 */
async function claimUpload(
  trx: Db,
  a: { accountId: string; uploadId: string; jobId: string; iso: string; sealed: Sealed | undefined; probe: Awaited<ReturnType<UploadProbe>> },
): Promise<void> {
  const { uploadId, sealed, probe } = a;
  const upload = await trx.selectFrom('uploads').selectAll().where('id', '=', uploadId).where('account_id', '=', a.accountId).executeTakeFirst();
  // A used upload stays "already used" after its job ended and its file was removed.
  if (upload?.claimed_by_job_id)
    throw new ApiError('upload_already_used', `Upload ${uploadId} was already used by job ${upload.claimed_by_job_id}; create a new upload.`);
  if (!upload || upload.deleted_at !== null)
    throw new ApiError('not_found', `No upload ${uploadId} in this account (unused uploads are removed after 24 hours).`);
  // Not sealed: the upload was not complete when we looked (or it changed since): no claim.
  if (!sealed || sealed.uploadKey !== upload.object_key || sealed.sizeBytes !== upload.size_bytes) {
    throw new ApiError('upload_not_completed', `Upload ${uploadId} has not been completed: PUT the ${upload.size_bytes} bytes to its uploadUrl first.`);
  }
  const claimed = await trx
    .updateTable('uploads')
    .set({ claimed_by_job_id: a.jobId, completed_at: upload.completed_at ?? a.iso, object_key: sealed.key })
    .where('id', '=', upload.id)
    .where('claimed_by_job_id', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) throw new ApiError('upload_already_used', `Upload ${uploadId} was already used; create a new upload.`);
  if (probe && 'durationSeconds' in probe)
    await trx.updateTable('uploads').set({ duration_seconds: probe.durationSeconds }).where('id', '=', upload.id).execute();
}

/** The renditions a request asks for, defaults filled from the job's own fields (the first one is the job's format, resolution and reframe). */
function requestedRenditions(input: JobInput): Rendition[] {
  const asked = input.outputs ?? [{ resolution: input.resolution, format: input.format, reframe: input.reframe }];
  return asked.map((o) => ({
    format: o.format ?? input.format,
    reframe: o.reframe ?? input.reframe,
    width: o.resolution?.width ?? null,
    height: o.resolution?.height ?? null,
  }));
}

/** The framing columns (0021): the first rendition in the job's own columns, the list only when the request had `outputs`. */
function framingColumns(input: JobInput) {
  const renditions = requestedRenditions(input);
  const first = renditions[0]!;
  return {
    format: first.format,
    req_width: first.width,
    req_height: first.height,
    reframe: first.reframe,
    outputs_json: input.outputs ? JSON.stringify(renditions) : null,
    safe_area: input.safeArea,
    placement: input.placement,
    subtitles: input.subtitles,
    poster_json: input.poster === false ? null : JSON.stringify({ at: input.poster === true ? null : input.poster.at }),
  } satisfies Partial<NewJobRow>;
}

/** Every column of the new job: queued, its request as resolved, nothing measured yet. */
function newJobRow(a: { id: string; accountId: string; input: JobInput; resolved: Resolved; seq: number; iso: string }): NewJobRow {
  const { input, resolved, iso } = a;
  return {
    id: a.id,
    account_id: a.accountId,
    status: 'queued',
    phase: 'queued',
    template_id: input.templateId,
    template_json: JSON.stringify(resolved.renderTemplate),
    video_url: input.videoUrl ?? null,
    upload_id: input.uploadId ?? null,
    quality: input.quality,
    overlay: input.overlay ? 1 : 0,
    style_json: input.style ? JSON.stringify(input.style) : null,
    ...framingColumns(input),
    language: input.language ?? null,
    detected_language: null,
    webhook_url: input.webhookUrl ?? null,
    quoted_seconds: null,
    out_width: null,
    out_height: null,
    percent: null,
    output_key: null,
    output_bytes: null,
    download_url: null,
    output_expires_at: null,
    outputs_made_json: null,
    poster_made_json: null,
    failure_code: null,
    failure_reason: null,
    settled_at: null,
    created_at: iso,
    updated_at: iso,
    started_at: null,
    finished_at: null,
    deadline_at: null,
    lease_id: null,
    lease_owner: null,
    seq: a.seq,
    lease_expires_at: null,
    reserved_at: null,
    vocabulary_json: resolved.vocabulary.length > 0 ? JSON.stringify(resolved.vocabulary) : null,
    replacements_json: resolved.replacements.length > 0 ? JSON.stringify(resolved.replacements) : null,
    edit_json: input.edit
      ? JSON.stringify({ silences: input.edit.silences, fillers: input.edit.fillers, zoom: input.edit.zoom, keep: input.edit.keep ?? null })
      : null,
    hook_title_json: input.hookTitle ? JSON.stringify(input.hookTitle) : null,
    profanity: input.profanity,
    profanity_words_json: resolved.profanityWords.length > 0 ? JSON.stringify(resolved.profanityWords) : null,
  };
}
