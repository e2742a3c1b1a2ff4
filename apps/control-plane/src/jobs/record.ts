import type { HookTitle, JobRecord, LeasedJob } from '@captionfarm/contracts';
import type { Job } from '@captionfarm/db';

/** The one serializer of a job row: GET, list, cancel, create and the webhook payload all use it. */
export function toJobRecord(row: Job): JobRecord {
  const succeeded = row.status === 'succeeded';
  const failed = row.status === 'failed';
  return {
    id: row.id,
    status: row.status,
    phase: row.phase,
    templateId: row.template_id,
    quotedSeconds: row.quoted_seconds,
    format: row.format,
    quality: row.quality,
    resolution: succeeded && row.out_width !== null && row.out_height !== null ? { width: row.out_width, height: row.out_height } : null,
    percent: row.phase === 'rendering' ? (row.percent ?? 0) : null,
    downloadUrl: succeeded ? row.download_url : null,
    outputExpiresAt: succeeded ? row.output_expires_at : null,
    failureReason: failed ? row.failure_reason : null,
    failureCode: failed ? row.failure_code : null,
    settledAt: succeeded ? row.settled_at : null,
    createdAt: row.created_at,
  };
}

/** A job's vocabulary and replacements (its own, else its template's, resolved at creation). */
export function recognitionWords(job: Pick<Job, 'vocabulary_json' | 'replacements_json'>): Pick<LeasedJob, 'vocabulary' | 'replacements'> {
  return {
    vocabulary: job.vocabulary_json === null ? [] : (JSON.parse(job.vocabulary_json) as string[]),
    replacements: job.replacements_json === null ? [] : (JSON.parse(job.replacements_json) as { from: string; to: string }[]),
  };
}

/** A job's edit, hook title and profanity as asked for at creation (the account's words resolved then), as its lease carries them. */
export function editOfJob(
  job: Pick<Job, 'edit_json' | 'hook_title_json' | 'profanity' | 'profanity_words_json'>,
): Pick<LeasedJob, 'edit' | 'hookTitle' | 'profanity' | 'profanityWords'> {
  return {
    edit: job.edit_json === null ? null : (JSON.parse(job.edit_json) as LeasedJob['edit']),
    hookTitle: job.hook_title_json === null ? null : (JSON.parse(job.hook_title_json) as HookTitle),
    profanity: job.profanity,
    profanityWords: job.profanity_words_json === null ? [] : (JSON.parse(job.profanity_words_json) as string[]),
  };
}
