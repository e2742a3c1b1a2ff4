import type { Kysely } from 'kysely';

/**
 * `uploads.duration_seconds`: what ffprobe measured when a job claimed the upload, so the job
 * reserves exactly its minutes (not the plan's maximum) and a job still waiting for minutes
 * knows what it needs. Null for uploads probed by no one (claimed before 0011, or the probe
 * itself failed: then the plan's maximum is reserved and ingest trues it up).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('uploads').addColumn('duration_seconds', 'real').execute();
}
