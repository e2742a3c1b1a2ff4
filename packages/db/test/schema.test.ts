import { sql, type InsertType, type SelectType } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Database, type Db, dialectOf } from '../src/index.ts';
import { useFreshDatabase } from './fresh-db.ts';

// schema.ts against what the migrations build, on SQLite and (CAPTIONFARM_TEST_DATABASE_URL) on
// PostgreSQL. `EXPECTED` below is checked twice: by tsc against schema.ts (every table and column,
// no more, no fewer; its column kind, nullability and generated default follow from the TS type),
// and here against the migrated database. A column added by a migration and not to schema.ts, or
// the other way round, fails one of the two.

/** 'text' | 'integer' | 'bigint' | 'real', then ' null' when nullable, ' default' when the insert may leave it out. */
type ColumnSpec<F> = `${[NonNullable<SelectType<F>>] extends [string] ? 'text' : 'integer' | 'bigint' | 'real'}${null extends SelectType<F>
  ? ' null'
  : undefined extends InsertType<F>
    ? ' default'
    : ''}`;
type SchemaSpec = { [T in keyof Database]: { [C in keyof Database[T]]-?: ColumnSpec<Database[T][C]> } };

const EXPECTED: SchemaSpec = {
  accounts: {
    id: 'text',
    name: 'text',
    plan: 'text',
    webhook_secret: 'text',
    webhook_secret_prev: 'text null',
    webhook_secret_prev_expires_at: 'text null',
    created_at: 'text',
    profanity_words_json: 'text null',
  },
  api_keys: {
    id: 'text',
    account_id: 'text',
    prefix: 'text',
    hash: 'text',
    created_at: 'text',
    revoked_at: 'text null',
    last_used_at: 'text null',
    name: 'text null',
  },
  jobs: {
    id: 'text',
    account_id: 'text',
    status: 'text',
    phase: 'text',
    template_id: 'text',
    template_json: 'text',
    video_url: 'text null',
    upload_id: 'text null',
    format: 'text',
    quality: 'text',
    req_width: 'integer null',
    req_height: 'integer null',
    language: 'text null',
    detected_language: 'text null',
    webhook_url: 'text null',
    quoted_seconds: 'integer null',
    out_width: 'integer null',
    out_height: 'integer null',
    percent: 'integer null',
    output_key: 'text null',
    output_bytes: 'bigint null',
    download_url: 'text null',
    output_expires_at: 'text null',
    failure_code: 'text null',
    failure_reason: 'text null',
    settled_at: 'text null',
    created_at: 'text',
    updated_at: 'text',
    started_at: 'text null',
    finished_at: 'text null',
    deadline_at: 'text null',
    seq: 'integer null',
    lease_id: 'text null',
    lease_owner: 'text null',
    lease_expires_at: 'text null',
    attempts: 'integer default',
    overlay: 'integer default',
    style_json: 'text null',
    reserved_at: 'text null',
    vocabulary_json: 'text null',
    replacements_json: 'text null',
    edit_json: 'text null',
    hook_title_json: 'text null',
    profanity: 'text default',
    profanity_words_json: 'text null',
    reframe: 'text default',
    safe_area: 'text default',
    placement: 'text default',
    subtitles: 'text default',
    poster_json: 'text null',
    outputs_json: 'text null',
    outputs_made_json: 'text null',
    poster_made_json: 'text null',
  },
  uploads: {
    id: 'text',
    account_id: 'text',
    object_key: 'text',
    file_name: 'text',
    content_type: 'text',
    size_bytes: 'bigint',
    created_at: 'text',
    url_expires_at: 'text',
    completed_at: 'text null',
    claimed_by_job_id: 'text null',
    deleted_at: 'text null',
    duration_seconds: 'real null',
  },
  minutes_ledger: {
    id: 'integer default',
    account_id: 'text',
    job_id: 'text null',
    kind: 'text',
    minutes: 'integer',
    note: 'text null',
    created_at: 'text',
    balance_after: 'integer default',
  },
  webhook_deliveries: {
    id: 'text',
    job_id: 'text',
    account_id: 'text',
    url: 'text',
    payload: 'text',
    status: 'text',
    attempts: 'integer default',
    first_attempt_at: 'text null',
    next_attempt_at: 'text null',
    last_attempt_at: 'text null',
    last_status_code: 'integer null',
    last_error: 'text null',
    claimed_until: 'text null',
    created_at: 'text',
    delivered_at: 'text null',
    lease_owner: 'text null',
    exhausted_reason: 'text null',
    attempt_base: 'integer default',
    requeued_at: 'text null',
  },
  webhook_attempts: {
    id: 'integer default',
    delivery_id: 'text',
    attempt: 'integer',
    started_at: 'text',
    duration_ms: 'integer',
    status_code: 'integer null',
    outcome: 'text',
    error: 'text null',
    error_code: 'text null',
  },
  agent_tokens: {
    id: 'text',
    hash: 'text',
    prefix: 'text',
    name: 'text null',
    created_at: 'text',
    revoked_at: 'text null',
  },
  agent_nodes: {
    id: 'text',
    name: 'text',
    token_id: 'text',
    capabilities: 'text',
    state: 'text',
    drain: 'integer default',
    connected_at: 'text null',
    last_heartbeat_at: 'text null',
    created_at: 'text',
  },
  templates: {
    id: 'text',
    account_id: 'text',
    name: 'text',
    body: 'text',
    created_at: 'text',
  },
  fonts: {
    id: 'text',
    account_id: 'text',
    file_name: 'text',
    object_key: 'text',
    content_type: 'text',
    size_bytes: 'integer',
    status: 'text',
    format: 'text null',
    family: 'text null',
    subfamily: 'text null',
    weight: 'integer null',
    italic: 'integer null',
    glyphs: 'integer null',
    sfnt_key: 'text null',
    sfnt_bytes: 'integer null',
    sha256: 'text null',
    created_at: 'text',
    url_expires_at: 'text',
    completed_at: 'text null',
  },
  users: {
    id: 'text',
    account_id: 'text null',
    email: 'text',
    is_admin: 'integer default',
    password_hash: 'text null',
    created_at: 'text',
    last_sign_in_at: 'text null',
  },
  user_invites: {
    id: 'text',
    user_id: 'text',
    token_hash: 'text',
    created_at: 'text',
    expires_at: 'text',
    used_at: 'text null',
  },
  sessions: {
    id: 'text',
    user_id: 'text',
    csrf_token: 'text',
    created_at: 'text',
    last_seen_at: 'text',
    expires_at: 'text',
    revoked_at: 'text null',
  },
  job_transcripts: {
    job_id: 'text',
    origin: 'text',
    language: 'text null',
    language_probability: 'real null',
    word_count: 'integer',
    words: 'text',
    created_at: 'text',
    updated_at: 'text',
    edit_json: 'text null',
  },
  rate_windows: {
    account_id: 'text',
    window_start: 'text',
    count: 'integer',
  },
  lease_replies: {
    node_id: 'text',
    request_id: 'text',
    reply_json: 'text',
    created_at: 'text',
  },
};

/** The two dialects' names for the portable types the migrations use. */
const KIND: Record<string, string> = {
  text: 'text',
  integer: 'integer',
  int4: 'integer',
  bigint: 'bigint',
  int8: 'bigint',
  real: 'real',
  float4: 'real',
  float8: 'real',
};

/** The migrated database in EXPECTED's terms. */
async function describeDatabase(db: Db): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const table of await db.introspection.getTables()) {
    // SQLite lets a non-integer PRIMARY KEY column hold NULL unless it says NOT NULL, and reports
    // it nullable; our keys are never written null, and PostgreSQL makes them NOT NULL.
    const keys =
      dialectOf(db) === 'sqlite'
        ? new Set((await sql<{ name: string }>`select name from pragma_table_info(${table.name}) where pk > 0`.execute(db)).rows.map((r) => r.name))
        : new Set<string>();
    out[table.name] = Object.fromEntries(
      table.columns.map((c) => {
        const kind = KIND[c.dataType.toLowerCase()] ?? `unexpected type ${c.dataType}`;
        const nullable = c.isNullable && !keys.has(c.name);
        const generated = c.hasDefaultValue || c.isAutoIncrementing;
        return [c.name, `${kind}${nullable ? ' null' : generated ? ' default' : ''}`];
      }),
    );
  }
  return out;
}

const fresh = useFreshDatabase('cf-schema-');
let db: Db;
beforeAll(() => {
  db = fresh.get();
});

describe('schema.ts', () => {
  it('describes every table and column the migrations create: type, nullability and default', async () => {
    const actual = await describeDatabase(db);
    expect(Object.keys(actual).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [table, columns] of Object.entries(EXPECTED)) {
      expect({ table, columns: actual[table] }).toEqual({ table, columns });
    }
  });
});
