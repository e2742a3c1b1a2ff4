import type { Kysely } from 'kysely';

/**
 * Issue 43, framed for every platform: what a job asks of its framing, and what its agent made.
 * None of it is a key of the spec's job record (format, resolution and downloadUrl stay the first
 * rendition's, in their own columns).
 * - `jobs.reframe`: the first rendition's reframe, 'center' | 'subject'.
 * - `jobs.safe_area`: 'none' | 'tiktok' | 'reels' | 'shorts'; `jobs.placement`: 'fixed' | 'auto';
 *   `jobs.subtitles`: 'burn' | 'track' | 'both'.
 * - `jobs.poster_json`: JSON {at} (at: output seconds, or null: the agent chooses); null: no poster.
 * - `jobs.outputs_json`: JSON [{format, reframe, width, height}], every rendition asked for (the
 *   first one is the job's format, req_width/req_height and reframe); null: the one rendition of
 *   those columns (a job created without `outputs`, or before this migration).
 * - `jobs.outputs_made_json`: JSON [{index, width, height, bytes, downloadUrl}], every rendition
 *   the agent completed; null until the job succeeds (and for jobs that succeeded before).
 * - `jobs.poster_made_json`: JSON {at, width, height, bytes, downloadUrl}; null: none made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, value] of [
    ['reframe', 'center'],
    ['safe_area', 'none'],
    ['placement', 'fixed'],
    ['subtitles', 'burn'],
  ] as const) {
    await db.schema
      .alterTable('jobs')
      .addColumn(column, 'text', (c) => c.notNull().defaultTo(value))
      .execute();
  }
  for (const column of ['poster_json', 'outputs_json', 'outputs_made_json', 'poster_made_json']) {
    await db.schema.alterTable('jobs').addColumn(column, 'text').execute();
  }
}
