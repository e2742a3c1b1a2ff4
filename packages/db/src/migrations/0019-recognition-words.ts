import type { Kysely } from 'kysely';

/**
 * Issue 39 item 5, the words the speaker meant: two job columns the spec's record has no key for,
 * resolved at creation (the job's own value, else its custom template's default), like
 * template_json, so a template edited later does not change a queued job.
 * - `jobs.vocabulary_json`: JSON string[], the terms given to the recognizer; null: none.
 * - `jobs.replacements_json`: JSON {from, to}[], applied to the recognized words; null: none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('vocabulary_json', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('replacements_json', 'text').execute();
}
