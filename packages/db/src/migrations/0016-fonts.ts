import type { Kysely } from 'kysely';

/**
 * Issue 16: uploaded fonts, and two job columns the spec's record has no key for.
 * - `fonts`: one row per POST /v1/fonts. `status` is 'pending' until the upload is completed and
 *   the font checked, then 'ready'; a refused font's row and objects are deleted. `object_key` is
 *   the uploaded file, `sfnt_key` the checked TTF/OTF agents fetch (a WOFF2 upload is decoded
 *   once, at completion), `sha256` that file's hash (agents cache fonts by it).
 * - `jobs.overlay`: 1 for a transparent overlay output; `jobs.style_json`: the per-job style as
 *   sent (template_json holds the effective template, style applied).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fonts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('format', 'text')
    .addColumn('family', 'text')
    .addColumn('subfamily', 'text')
    .addColumn('weight', 'integer')
    .addColumn('italic', 'integer')
    .addColumn('glyphs', 'integer')
    .addColumn('sfnt_key', 'text')
    .addColumn('sfnt_bytes', 'integer')
    .addColumn('sha256', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('url_expires_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema.createIndex('fonts_account_created').on('fonts').columns(['account_id', 'created_at']).execute();
  await db.schema
    .alterTable('jobs')
    .addColumn('overlay', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('jobs').addColumn('style_json', 'text').execute();
}
