import type { Kysely } from 'kysely';

/**
 * Issue 10: the words a job burns. One row per job: the transcript given at creation
 * (`origin` 'given', written with the job) or the recognized one (`origin` 'recognized', written
 * by the agent before rendering, replaced on a retried attempt). Served once the job succeeded.
 * `words` is a JSON array of {text, start, end} in seconds: a transcript is read and written whole.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_transcripts')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    .addColumn('language_probability', 'real')
    .addColumn('word_count', 'integer', (c) => c.notNull())
    .addColumn('words', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
