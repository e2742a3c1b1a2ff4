import type {
  FailureCode,
  FontFormat,
  FontStatus,
  Format,
  JobPhase,
  JobStatus,
  Placement,
  PlanId,
  ProfanityMode,
  Quality,
  ReframeMode,
  SafeAreaName,
  SubtitleMode,
} from '@captionfarm/contracts';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The tables as migrations/ leaves them (test/schema.test.ts compares every table, column, type,
 * nullability and default with the migrated database, on SQLite and PostgreSQL). Enum-like text
 * columns are typed as their unions, shared with @captionfarm/contracts where the API shows them,
 * so writing a wrong string fails tsc.
 */

/** Timestamps are ISO 8601 strings from Date#toISOString (fixed width, so text order = time order). */
type Iso = string;

/** Why a row was written to `minutes_ledger`. */
export type LedgerKind = 'grant' | 'monthly_reset' | 'reserve' | 'true_up' | 'settle' | 'refund';
/** `webhook_deliveries.status`. */
export type DeliveryState = 'pending' | 'delivered' | 'exhausted';
/** `webhook_deliveries.exhausted_reason`: the receiver answered 410, or the retry schedule ran out. */
export type ExhaustedReason = 'gone' | 'attempts_exhausted';
/** `webhook_attempts.outcome`: 'success' (2xx), 'retry' (any other status, timeout, network or address error), 'gone' (410). */
export type AttemptOutcome = 'success' | 'retry' | 'gone';
/** `agent_nodes.state`; draining is the separate `drain` flag. */
export type AgentNodeState = 'online' | 'offline';
/** `job_transcripts.origin`: given in the POST body, or recognized by the agent. */
export type TranscriptOrigin = 'given' | 'recognized';

export interface AccountsTable {
  id: string;
  name: string;
  plan: PlanId;
  webhook_secret: string;
  webhook_secret_prev: string | null;
  webhook_secret_prev_expires_at: Iso | null;
  created_at: Iso;
  /** JSON string[]: the account's own profane words (PUT /v1/profanity-words), or null (0020). Optional on insert. */
  profanity_words_json: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  /** First characters of the key, shown in listings so a key can be recognised without the secret. */
  prefix: string;
  /** sha256 hex of the whole key. */
  hash: string;
  created_at: Iso;
  revoked_at: Iso | null;
  last_used_at: Iso | null;
  /** A label given in the dashboard (null for keys made by `captionfarm admin keys create`). */
  name: string | null;
}

export interface JobsTable {
  id: string;
  account_id: string;
  status: JobStatus;
  phase: JobPhase;
  template_id: string;
  /** The template resolved at creation, so a later edit or delete does not change a queued job. */
  template_json: string;
  video_url: string | null;
  upload_id: string | null;
  format: Format;
  quality: Quality;
  req_width: number | null;
  req_height: number | null;
  language: string | null;
  detected_language: string | null;
  webhook_url: string | null;
  quoted_seconds: number | null;
  out_width: number | null;
  out_height: number | null;
  percent: number | null;
  output_key: string | null;
  output_bytes: number | null;
  download_url: string | null;
  output_expires_at: Iso | null;
  failure_code: FailureCode | null;
  failure_reason: string | null;
  settled_at: Iso | null;
  created_at: Iso;
  updated_at: Iso;
  started_at: Iso | null;
  finished_at: Iso | null;
  deadline_at: Iso | null;
  /** The job's place in its account's creation order (1, 2, ...): the list's order and cursor. Null only for rows copied in without one. */
  seq: number | null;
  lease_id: string | null;
  lease_owner: string | null;
  lease_expires_at: Iso | null;
  attempts: Generated<number>;
  /** 1: a transparent overlay output (format webm or mov), not a burned video. */
  overlay: Generated<number>;
  /** The per-job style as sent, or null; template_json already has it applied. */
  style_json: string | null;
  /** When the job's `reserve` ledger row was written; null while it waits for minutes (admission). */
  reserved_at: Iso | null;
  /** JSON string[]: the vocabulary given to the recognizer (the job's own, else its template's), or null (0019). Optional on insert. */
  vocabulary_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {from, to}[]: replacements applied to the recognized words (the job's own, else its template's), or null (0019). Optional on insert. */
  replacements_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {silences, fillers, zoom, keep}: the edit asked for, defaults filled (LeasedJob['edit']), or null: none (0020). Optional on insert. */
  edit_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON HookTitle (text, seconds, style), or null (0020). Optional on insert. */
  hook_title_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** How profane words are treated (0020; 'off' by default). */
  profanity: ColumnType<ProfanityMode, ProfanityMode | undefined, ProfanityMode>;
  /** JSON string[]: the account's own profane words at creation, when profanity is not 'off'; else null (0020). Optional on insert. */
  profanity_words_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** The first rendition's reframe (0021; 'center' by default). */
  reframe: ColumnType<ReframeMode, ReframeMode | undefined, ReframeMode>;
  /** The app whose interface zones the captions keep out of (0021; 'none' by default). */
  safe_area: ColumnType<SafeAreaName, SafeAreaName | undefined, SafeAreaName>;
  /** Caption placement (0021; 'fixed' by default). */
  placement: ColumnType<Placement, Placement | undefined, Placement>;
  /** Burned captions, a subtitle track, or both (0021; 'burn' by default). */
  subtitles: ColumnType<SubtitleMode, SubtitleMode | undefined, SubtitleMode>;
  /** JSON {at: number | null}: the poster asked for (at null: the agent chooses), or null: none (0021). Optional on insert. */
  poster_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {format, reframe, width, height}[]: every rendition asked for, or null: the one of format, req_width/req_height and reframe (0021). Optional on insert. */
  outputs_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {index, width, height, bytes, downloadUrl}[]: the renditions made, set when the job succeeds (0021). Optional on insert. */
  outputs_made_json: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {at, width, height, bytes, downloadUrl}: the poster made, set when the job succeeds with one (0021). Optional on insert. */
  poster_made_json: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface UploadsTable {
  id: string;
  account_id: string;
  object_key: string;
  file_name: string;
  content_type: string;
  size_bytes: number;
  created_at: Iso;
  url_expires_at: Iso;
  completed_at: Iso | null;
  claimed_by_job_id: string | null;
  deleted_at: Iso | null;
  /** Probed when a job claims the upload (0011); null until then or when the probe failed. Optional on insert. */
  duration_seconds: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Every change of an account's minutes. The balance is the sum of `minutes`. */
export interface MinutesLedgerTable {
  id: Generated<number>;
  account_id: string;
  job_id: string | null;
  kind: LedgerKind;
  minutes: number;
  note: string | null;
  created_at: Iso;
  /**
   * The account's balance after this row (the sum of its rows up to this one, 0017): appendLedger,
   * the one writer of ledger rows, always sets it (the column's default 0 only let the migration add it).
   */
  balance_after: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: string;
  job_id: string;
  account_id: string;
  url: string;
  /** The serialized job record, signed and sent as is on every attempt. */
  payload: string;
  status: DeliveryState;
  attempts: Generated<number>;
  first_attempt_at: Iso | null;
  next_attempt_at: Iso | null;
  last_attempt_at: Iso | null;
  last_status_code: number | null;
  last_error: string | null;
  /** When the lease of `lease_owner` ends. */
  claimed_until: Iso | null;
  created_at: Iso;
  delivered_at: Iso | null;
  /** Dispatcher that holds the lease until `claimed_until`; every write after a claim checks it (0002). */
  lease_owner: string | null;
  /** Set with status 'exhausted' (0002). */
  exhausted_reason: ExhaustedReason | null;
  /** `attempts` at the last admin redelivery: the dispatcher's attempt count is attempts - attempt_base (0002). */
  attempt_base: Generated<number>;
  /** When an admin last re-queued it (0002). */
  requeued_at: Iso | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  attempt: number;
  started_at: Iso;
  duration_ms: number;
  status_code: number | null;
  outcome: AttemptOutcome;
  error: string | null;
  /** The SafeFetchError code, or 'http_status' (0002); the message is in `error`. */
  error_code: string | null;
}

export interface AgentTokensTable {
  id: string;
  hash: string;
  prefix: string;
  name: string | null;
  created_at: Iso;
  revoked_at: Iso | null;
}

export interface AgentNodesTable {
  id: string;
  name: string;
  token_id: string;
  /** JSON AgentCapabilities, as registered. */
  capabilities: string;
  state: AgentNodeState;
  drain: Generated<number>;
  connected_at: Iso | null;
  last_heartbeat_at: Iso | null;
  created_at: Iso;
}

/** Uploaded fonts (POST /v1/fonts): 'pending' until completed and checked, then 'ready'. */
export interface FontsTable {
  id: string;
  account_id: string;
  file_name: string;
  object_key: string;
  content_type: string;
  size_bytes: number;
  status: FontStatus;
  /** As uploaded; null while pending. */
  format: FontFormat | null;
  family: string | null;
  subfamily: string | null;
  weight: number | null;
  italic: number | null;
  glyphs: number | null;
  /** The checked TTF/OTF that agents fetch (equal to object_key unless the upload was WOFF2). */
  sfnt_key: string | null;
  sfnt_bytes: number | null;
  /** sha256 hex of the sfnt: agents cache fonts by it. */
  sha256: string | null;
  created_at: Iso;
  url_expires_at: Iso;
  completed_at: Iso | null;
}

export interface TemplatesTable {
  id: string;
  account_id: string;
  name: string;
  body: string;
  created_at: Iso;
}

/** Dashboard users (0012): account members and administrators. */
export interface UsersTable {
  id: string;
  /** null: an administrator who belongs to no account. */
  account_id: string | null;
  /** Lower-cased; one user per email. */
  email: string;
  /** 1 for administrators (operator console); 0 by default. */
  is_admin: Generated<number>;
  /** `scrypt$N$r$p$salt$hash`; null until the invite is accepted. */
  password_hash: string | null;
  created_at: Iso;
  last_sign_in_at: Iso | null;
}

/** One-time links to set a password (72 h). */
export interface UserInvitesTable {
  id: string;
  user_id: string;
  /** sha256 hex of the token in the link. */
  token_hash: string;
  created_at: Iso;
  expires_at: Iso;
  used_at: Iso | null;
}

/** Dashboard sessions; the cookie carries the token, the row its sha256 (`id`). */
export interface SessionsTable {
  id: string;
  user_id: string;
  csrf_token: string;
  created_at: Iso;
  /** Idle expiry counts from here. */
  last_seen_at: Iso;
  /** Absolute expiry. */
  expires_at: Iso;
  /** Set by sign-out or when the user is removed. */
  revoked_at: Iso | null;
}

/** The words a job burns (migration 0010): given at creation, or recognized by the agent. */
export interface JobTranscriptsTable {
  job_id: string;
  origin: TranscriptOrigin;
  /** 2-letter code; null for a given transcript without one. */
  language: string | null;
  /** Recognizer's confidence in a detected language; null when given or not measured. */
  language_probability: number | null;
  word_count: number;
  /** JSON: [{ text, start, end }] in seconds. */
  words: string;
  created_at: Iso;
  updated_at: Iso;
  /** JSON EditPlan: the edit the agent rendered, sent with its words; null: none (0020). Optional on insert. */
  edit_json: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  jobs: JobsTable;
  uploads: UploadsTable;
  minutes_ledger: MinutesLedgerTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  agent_tokens: AgentTokensTable;
  agent_nodes: AgentNodesTable;
  templates: TemplatesTable;
  fonts: FontsTable;
  users: UsersTable;
  user_invites: UserInvitesTable;
  sessions: SessionsTable;
  job_transcripts: JobTranscriptsTable;
  rate_windows: RateWindowsTable;
  lease_replies: LeaseRepliesTable;
}

/** Requests per account and one-minute window (the per-plan rate limit, shared by every control plane). */
export interface RateWindowsTable {
  account_id: string;
  /** ISO time of the window's start (a whole minute). */
  window_start: Iso;
  count: number;
}

/** What a lease answered (JSON LeasedJob[]), so a re-sent lease, to any control plane, returns the same jobs. */
export interface LeaseRepliesTable {
  node_id: string;
  request_id: string;
  reply_json: string;
  created_at: Iso;
}

export type Account = Selectable<AccountsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Job = Selectable<JobsTable>;
export type NewJob = Insertable<JobsTable>;
export type JobUpdate = Updateable<JobsTable>;
export type Upload = Selectable<UploadsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type AgentNode = Selectable<AgentNodesTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type FontRow = Selectable<FontsTable>;
export type User = Selectable<UsersTable>;
export type Session = Selectable<SessionsTable>;
export type JobTranscript = Selectable<JobTranscriptsTable>;
