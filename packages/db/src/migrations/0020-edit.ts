import type { Kysely } from 'kysely';

/**
 * Issue 42, shorts-ready in one job: what a job asks of the edit, resolved at creation like
 * vocabulary_json (0019), so a later change of the account's words does not change a queued job,
 * and the plan its agent rendered. None of it is a key of the spec's job record.
 * - `jobs.edit_json`: JSON {silences, fillers, zoom, keep} (keep: the job's own ranges or null);
 *   null when the request had no `edit`.
 * - `jobs.hook_title_json`: JSON {text, seconds, style}; null: none.
 * - `jobs.profanity`: 'off' | 'mask' | 'bleep'.
 * - `jobs.profanity_words_json`: JSON string[], the account's own words at creation (only when
 *   profanity is not 'off'); null: none.
 * - `accounts.profanity_words_json`: JSON string[] (PUT /v1/profanity-words); null: none yet.
 * - `job_transcripts.edit_json`: JSON EditPlan sent by the agent with its words; null: no edit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('edit_json', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('hook_title_json', 'text').execute();
  await db.schema
    .alterTable('jobs')
    .addColumn('profanity', 'text', (c) => c.notNull().defaultTo('off'))
    .execute();
  await db.schema.alterTable('jobs').addColumn('profanity_words_json', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('profanity_words_json', 'text').execute();
  await db.schema.alterTable('job_transcripts').addColumn('edit_json', 'text').execute();
}
