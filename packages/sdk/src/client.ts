import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  FontListSchema,
  FontRecordSchema,
  FontUploadRecordSchema,
  type CreateFontRequest,
  type CreateJobRequest as CreateJobBody,
  type CreateUploadRequest,
  type FontRecord,
  type FontUploadRecord,
  type TranscriptRecord,
  type UploadRecord,
} from '@captionfarm/contracts';
import { ClientJobEditSchema, ClientProfanityWordsSchema, type JobEdit } from './edit.ts';
import { CaptionfarmError, InvalidResponseError } from './errors.ts';
import { createTransport, SDK_VERSION, type BinaryOrJson } from './http.ts';
import {
  ClientJobListSchema,
  ClientJobSchema,
  ClientJobStyleSchema,
  ClientTranscriptSchema,
  ClientUploadSchema,
  TemplateDetailSchema,
  TemplateSummarySchema,
  type CaptionStyle,
  type Job,
  type JobStyle,
  type TemplateDetail,
  type TemplateSummary,
} from './job.ts';
import {
  downloadOutput,
  downloadRendition,
  putUpload,
  type DownloadOptions,
  type PutUploadOptions,
  type TransferProgress,
  type UploadBody,
} from './transfer.ts';
import { ClientJobOutputsSchema, type JobOutputs } from './outputs.ts';
import { pollUntilTerminal, type WaitForJobOptions } from './wait.ts';

export interface ClientOptions {
  /** Where the service runs, without /v1: e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Secret API key (`cf_live_...`); keep it server-side. */
  apiKey: string;
  /** A fetch implementation (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
  /**
   * Automatic retries of one call: after 429 `rate_limited` / 503 (waiting for Retry-After), and
   * for GETs and cancel also after network errors and 5xx. Default 2; 0 turns them off.
   */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited out; the error is thrown. Default 60 000. */
  maxRetryDelayMs?: number;
  /** Per-attempt timeout of API calls (uploads and downloads have none). Default 30 000. */
  timeoutMs?: number;
  userAgent?: string;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface ListJobsOptions extends CallOptions {
  /** Jobs per request (1..100; the server's default is 20). */
  pageSize?: number | undefined;
  /** Start after this cursor (a previous page's nextCursor). */
  cursor?: string | undefined;
}

export interface JobPage {
  jobs: Job[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface UploadFileOptions extends CallOptions {
  /** Name sent as `fileName` (its extension picks the content type). Default: the file's base name. */
  fileName?: string | undefined;
  onProgress?: ((p: TransferProgress) => void) | undefined;
}

/** Options of a template preview (the service's defaults apply to what is left out). */
export interface PreviewRequest {
  /** Sample caption text. */
  text?: string;
  /** Frame size in pixels (64..3840). */
  width?: number;
  height?: number;
  /** Moment of the caption animation to show, in seconds. */
  at?: number;
  /** A per-job style to preview over the template: the same object `createJob` takes as `style`. */
  style?: CaptionStyle;
}

/**
 * POST /v1/automation-jobs: the contract's body, with `style` typed as the template schema.
 * `vocabulary` (terms for the recognizer) and `replacements` (`{ from, to }` applied to the
 * recognized words) replace the template's defaults when given; neither applies to a `transcript`.
 */
export type CreateJobRequest = Omit<CreateJobBody, 'style'> & { style?: CaptionStyle | undefined };

export interface UploadFontOptions extends CallOptions {
  /** Name sent as `fileName` (.ttf, .otf or .woff2). Default: the file's base name. */
  fileName?: string | undefined;
}

export interface TranscriptOptions extends CallOptions {
  /** `json` (default): `{ language, languageProbability, words }`; `srt` / `vtt`: the subtitle file's text. */
  format?: 'json' | 'srt' | 'vtt';
}

/** The preview as the service answers it: image bytes (`binary`, e.g. image/png), or a JSON body. */
export type TemplatePreview = BinaryOrJson<unknown>;

export interface CaptionfarmClient {
  readonly baseUrl: string;
  /** Step 1 of an upload: POST /v1/automation-jobs/uploads -> presigned uploadUrl for exactly `sizeBytes`. */
  createUpload(req: CreateUploadRequest, opts?: CallOptions): Promise<UploadRecord>;
  /** Step 2: the raw PUT of the bytes to `uploadUrl` (no Authorization header, exact Content-Length). */
  putUpload(upload: Pick<UploadRecord, 'uploadUrl' | 'contentType' | 'sizeBytes'>, body: UploadBody, opts?: PutUploadOptions): Promise<void>;
  /** Steps 1 and 2 for a local file; pass the returned `uploadId` to createJob. */
  uploadFile(filePath: string, opts?: UploadFileOptions): Promise<UploadRecord>;
  /** POST /v1/automation-jobs: 202, a `queued` job (minutes are reserved). Exactly one of videoUrl and uploadId. */
  createJob(req: CreateJobRequest, opts?: CallOptions): Promise<Job>;
  getJob(id: string, opts?: CallOptions): Promise<Job>;
  /** Idempotent: cancelling a cancelled job returns it; a succeeded or failed one throws 409 `job_not_cancellable`. */
  cancelJob(id: string, opts?: CallOptions): Promise<Job>;
  /** One page of GET /v1/automation-jobs, newest first. */
  listJobsPage(opts?: ListJobsOptions): Promise<JobPage>;
  /** Every job of the account, newest first, fetching pages as the loop goes: `for await (const job of client.listJobs())`. */
  listJobs(opts?: ListJobsOptions): AsyncGenerator<Job, void, undefined>;
  /** Polls (with backoff and jitter) until the job is succeeded, failed or cancelled, and returns that record. */
  waitForJob(id: string, opts?: WaitForJobOptions): Promise<Job>;
  /**
   * GET /v1/automation-jobs/:id/transcript: the words a succeeded job burned, in seconds, or as an
   * SRT / WebVTT file's text. Before the job succeeded: 409 `transcript_not_available`.
   */
  getTranscript(id: string, opts?: TranscriptOptions & { format?: 'json' }): Promise<TranscriptRecord>;
  getTranscript(id: string, opts: TranscriptOptions & { format: 'srt' | 'vtt' }): Promise<string>;
  getTranscript(id: string, opts?: TranscriptOptions): Promise<TranscriptRecord | string>;
  /** Streams a succeeded job's output to a file (through `file.part`). */
  downloadOutput(job: Pick<Job, 'id' | 'status' | 'downloadUrl'>, filePath: string, opts?: DownloadOptions): Promise<{ path: string; bytes: number }>;
  listTemplates(opts?: CallOptions): Promise<TemplateSummary[]>;
  getTemplate(id: string, opts?: CallOptions): Promise<TemplateDetail>;
  /** POST /v1/templates/:id/preview: one rendered frame of the template (image/png bytes) over a neutral background. */
  previewTemplate(id: string, req?: PreviewRequest, opts?: CallOptions): Promise<TemplatePreview>;
  /** GET /v1/automation-jobs/:id/style: the template, the per-job style sent, and the effective style the job renders with. */
  getJobStyle(id: string, opts?: CallOptions): Promise<JobStyle>;
  /** Step 1 of a font upload: POST /v1/fonts -> presigned uploadUrl for exactly `sizeBytes` (TTF, OTF or WOFF2, at most 10 MB, 20 fonts an account). */
  createFontUpload(req: CreateFontRequest, opts?: CallOptions): Promise<FontUploadRecord>;
  /** Step 3: POST /v1/fonts/:id/complete: the service reads and checks the font; a malformed one is refused with 422 invalid_font (and deleted). */
  completeFont(id: string, opts?: CallOptions): Promise<FontRecord>;
  /** The three steps for a local font file; use the returned `id` as `style.font.fontId`. */
  uploadFont(filePath: string, opts?: UploadFontOptions): Promise<FontRecord>;
  listFonts(opts?: CallOptions): Promise<FontRecord[]>;
  getFont(id: string, opts?: CallOptions): Promise<FontRecord>;
  /** Jobs already created with the font keep rendering with it only if they were leased before. */
  deleteFont(id: string, opts?: CallOptions): Promise<void>;
  /**
   * GET /v1/automation-jobs/:id/edit: the edit a succeeded job rendered (its options, the
   * keep-ranges and every cut with its reason, the zooms and bleeps). Before it succeeded, or for a
   * job with no edit, hook title or profanity: 409 `edit_not_available`. To fix a cut, send the
   * plan's `keep` (changed) as `edit.keep` of a new job.
   */
  getJobEdit(id: string, opts?: CallOptions): Promise<JobEdit>;
  /** GET /v1/profanity-words: the account's own profane words, masked (or bleeped) on top of the language's list. */
  getProfanityWords(opts?: CallOptions): Promise<string[]>;
  /** PUT /v1/profanity-words: replaces the account's own words (at most 500); jobs created from now on use them. */
  setProfanityWords(words: string[], opts?: CallOptions): Promise<string[]>;
  /**
   * GET /v1/automation-jobs/:id/outputs: every rendition of the job (index 0 is the job's own, the
   * others those of `outputs` at creation) with its own presigned link and expiry, and the poster.
   * Links are null (and the poster null) until the job succeeded. Unknown job: 404 `not_found`.
   */
  getJobOutputs(id: string, opts?: CallOptions): Promise<JobOutputs>;
  /**
   * Streams one rendition (`which`: its index) or the poster (`'poster'`) of `getJobOutputs`'s answer
   * to a file (through `file.part`).
   */
  downloadRendition(
    outputs: Pick<JobOutputs, 'jobId' | 'outputs' | 'poster'>,
    which: number | 'poster',
    filePath: string,
    opts?: DownloadOptions,
  ): Promise<{ path: string; bytes: number }>;
}

const enc = encodeURIComponent;

export function createClient(options: ClientOptions): CaptionfarmClient {
  if (!options.baseUrl) throw new CaptionfarmError('invalid_options', 'baseUrl is required (e.g. http://127.0.0.1:8080)');
  if (!options.apiKey) throw new CaptionfarmError('invalid_options', 'apiKey is required (an API key, cf_live_...)');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const userAgent = options.userAgent ?? `captionfarm-sdk/${SDK_VERSION} node/${process.versions.node}`;
  const http = createTransport({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: fetchImpl,
    maxRetries: options.maxRetries ?? 2,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    userAgent,
  });

  // The methods call each other through `client`, the object returned.
  const client = { baseUrl: options.baseUrl.replace(/\/+$/, '') } as CaptionfarmClient;
  const c: ClientContext = { http, fetchImpl, client };
  const methods = { ...jobMethods(c), ...templateMethods(c), ...fontMethods(c), ...editMethods(c), ...renditionMethods(c) } satisfies Omit<
    CaptionfarmClient,
    'baseUrl'
  >;
  return Object.assign(client, methods);
}

type Transport = ReturnType<typeof createTransport>;
type TemplateMethod = 'listTemplates' | 'getTemplate' | 'previewTemplate' | 'getJobStyle';
type FontMethod = 'createFontUpload' | 'completeFont' | 'uploadFont' | 'listFonts' | 'getFont' | 'deleteFont';
type EditMethod = 'getJobEdit' | 'getProfanityWords' | 'setProfanityWords';
type RenditionMethod = 'getJobOutputs' | 'downloadRendition';

/** What the methods of one client share: its transport, its fetch, and the client itself. */
interface ClientContext {
  readonly http: Transport;
  readonly fetchImpl: typeof fetch;
  readonly client: CaptionfarmClient;
}

/** Uploads, jobs, their transcripts and outputs. */
function jobMethods(c: ClientContext): Omit<CaptionfarmClient, 'baseUrl' | TemplateMethod | FontMethod | EditMethod | RenditionMethod> {
  const { http, fetchImpl, client } = c;
  const getJob = (id: string, opts: CallOptions & { maxRetries?: number } = {}) =>
    http.request({
      method: 'GET',
      path: `/v1/automation-jobs/${enc(id)}`,
      schema: ClientJobSchema,
      signal: opts.signal,
      idempotent: true,
      ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
    }) as Promise<Job>;

  const listJobsPage = async (opts: ListJobsOptions = {}): Promise<JobPage> =>
    (await http.request({
      method: 'GET',
      path: '/v1/automation-jobs',
      query: { cursor: opts.cursor, limit: opts.pageSize },
      schema: ClientJobListSchema,
      signal: opts.signal,
      idempotent: true,
    })) as JobPage;

  return {
    createUpload: (req, opts = {}) =>
      http.request({ method: 'POST', path: '/v1/automation-jobs/uploads', body: req, schema: ClientUploadSchema, signal: opts.signal, idempotent: false }),
    putUpload: (upload, body, opts) => putUpload(fetchImpl, upload, body, opts),
    async uploadFile(filePath, opts = {}) {
      const st = await stat(filePath);
      if (!st.isFile()) throw new CaptionfarmError('invalid_file', `${filePath} is not a regular file`);
      const upload = await client.createUpload({ fileName: opts.fileName ?? path.basename(filePath), sizeBytes: st.size }, { signal: opts.signal });
      const stream = createReadStream(filePath);
      try {
        await putUpload(fetchImpl, upload, stream, { signal: opts.signal, onProgress: opts.onProgress });
      } finally {
        stream.destroy();
      }
      return upload;
    },
    createJob: async (req, opts = {}) =>
      (await http.request({ method: 'POST', path: '/v1/automation-jobs', body: req, schema: ClientJobSchema, signal: opts.signal, idempotent: false })) as Job,
    getJob: (id, opts) => getJob(id, opts),
    cancelJob: async (id, opts = {}) =>
      (await http.request({
        method: 'POST',
        path: `/v1/automation-jobs/${enc(id)}/cancel`,
        schema: ClientJobSchema,
        signal: opts.signal,
        idempotent: true,
      })) as Job,
    listJobsPage,
    async *listJobs(opts = {}) {
      let cursor = opts.cursor;
      do {
        const page = await listJobsPage({ ...opts, cursor });
        yield* page.jobs;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    },
    // waitForJob runs its own retry loop (Retry-After, backoff), so each poll is a single attempt.
    waitForJob: (id, opts = {}) => pollUntilTerminal((signal) => getJob(id, { signal, maxRetries: 0 }), opts),
    getTranscript: (async (id: string, opts: TranscriptOptions = {}) => {
      const format = opts.format ?? 'json';
      const path = `/v1/automation-jobs/${enc(id)}/transcript`;
      if (format === 'json') {
        return http.request({ method: 'GET', path, query: { format }, schema: ClientTranscriptSchema, signal: opts.signal, idempotent: true });
      }
      const res = await http.request<BinaryOrJson<unknown>>({
        method: 'GET',
        path,
        query: { format },
        schema: z.unknown() as z.ZodType<BinaryOrJson<unknown>>,
        signal: opts.signal,
        idempotent: true,
        binary: true,
      });
      if (res.kind !== 'binary') throw new InvalidResponseError(200, `GET ${path}?format=${format} answered JSON, not a subtitle file`);
      return new TextDecoder().decode(res.bytes);
    }) as CaptionfarmClient['getTranscript'],
    downloadOutput: (job, filePath, opts) => downloadOutput(fetchImpl, job, filePath, opts),
  };
}

/** Templates, their previews, and a job's style. */
function templateMethods(c: ClientContext): Pick<CaptionfarmClient, TemplateMethod> {
  const { http } = c;
  return {
    listTemplates: async (opts = {}) =>
      (
        await http.request({
          method: 'GET',
          path: '/v1/templates',
          schema: z.looseObject({ templates: z.array(TemplateSummarySchema) }),
          signal: opts.signal,
          idempotent: true,
        })
      ).templates,
    getTemplate: (id, opts = {}) =>
      http.request({ method: 'GET', path: `/v1/templates/${enc(id)}`, schema: TemplateDetailSchema, signal: opts.signal, idempotent: true }),
    previewTemplate: (id, req = {}, opts = {}) =>
      http.request<TemplatePreview>({
        method: 'POST',
        path: `/v1/templates/${enc(id)}/preview`,
        body: req,
        schema: z.unknown() as z.ZodType<TemplatePreview>,
        signal: opts.signal,
        idempotent: true,
        binary: true,
      }),
    getJobStyle: (id, opts = {}) =>
      http.request({ method: 'GET', path: `/v1/automation-jobs/${enc(id)}/style`, schema: ClientJobStyleSchema, signal: opts.signal, idempotent: true }),
  };
}

/** Uploaded fonts. */
function fontMethods(c: ClientContext): Pick<CaptionfarmClient, FontMethod> {
  const { http, fetchImpl, client } = c;
  return {
    createFontUpload: (req, opts = {}) =>
      http.request({ method: 'POST', path: '/v1/fonts', body: req, schema: FontUploadRecordSchema.loose(), signal: opts.signal, idempotent: false }),
    completeFont: (id, opts = {}) =>
      http.request({ method: 'POST', path: `/v1/fonts/${enc(id)}/complete`, schema: FontRecordSchema.loose(), signal: opts.signal, idempotent: true }),
    async uploadFont(filePath, opts = {}) {
      const st = await stat(filePath);
      if (!st.isFile()) throw new CaptionfarmError('invalid_file', `${filePath} is not a regular file`);
      const upload = await client.createFontUpload({ fileName: opts.fileName ?? path.basename(filePath), sizeBytes: st.size }, { signal: opts.signal });
      const stream = createReadStream(filePath);
      try {
        await putUpload(fetchImpl, upload, stream, { signal: opts.signal });
      } finally {
        stream.destroy();
      }
      return client.completeFont(upload.fontId, { signal: opts.signal });
    },
    listFonts: async (opts = {}) =>
      (await http.request({ method: 'GET', path: '/v1/fonts', schema: FontListSchema.loose(), signal: opts.signal, idempotent: true })).fonts,
    getFont: (id, opts = {}) =>
      http.request({ method: 'GET', path: `/v1/fonts/${enc(id)}`, schema: FontRecordSchema.loose(), signal: opts.signal, idempotent: true }),
    async deleteFont(id, opts = {}) {
      await http.request({ method: 'DELETE', path: `/v1/fonts/${enc(id)}`, schema: z.undefined(), signal: opts.signal, idempotent: true });
    },
  };
}

/** Issue 42: a job's edit, and the account's own profane words. */
function editMethods(c: ClientContext): Pick<CaptionfarmClient, EditMethod> {
  const { http } = c;
  return {
    getJobEdit: (id, opts = {}) =>
      http.request({ method: 'GET', path: `/v1/automation-jobs/${enc(id)}/edit`, schema: ClientJobEditSchema, signal: opts.signal, idempotent: true }),
    getProfanityWords: async (opts = {}) =>
      (await http.request({ method: 'GET', path: '/v1/profanity-words', schema: ClientProfanityWordsSchema, signal: opts.signal, idempotent: true })).words,
    // A PUT replaces the list: sending it twice leaves the same list, so it is retried like a GET.
    setProfanityWords: async (words, opts = {}) =>
      (
        await http.request({
          method: 'PUT',
          path: '/v1/profanity-words',
          body: { words },
          schema: ClientProfanityWordsSchema,
          signal: opts.signal,
          idempotent: true,
        })
      ).words,
  };
}

/** Issue 43: a job's renditions and poster. */
function renditionMethods(c: ClientContext): Pick<CaptionfarmClient, RenditionMethod> {
  const { http, fetchImpl } = c;
  return {
    getJobOutputs: (id, opts = {}) =>
      http.request({ method: 'GET', path: `/v1/automation-jobs/${enc(id)}/outputs`, schema: ClientJobOutputsSchema, signal: opts.signal, idempotent: true }),
    downloadRendition: (outputs, which, filePath, opts) => downloadRendition(fetchImpl, outputs, which, filePath, opts),
  };
}
