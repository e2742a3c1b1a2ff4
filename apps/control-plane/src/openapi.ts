import { z } from 'zod';
import { StyleSchema, TemplateSchema } from '@captionfarm/captions';
import {
  CREATE_JOB_MAX_JSON_BYTES,
  CreateFontRequestSchema,
  CreateJobRequestSchema,
  FontListSchema,
  FontRecordSchema,
  FontUploadRecordSchema,
  JobEditSchema,
  JobOutputsSchema,
  JobStyleSchema,
  MAX_OUTPUTS,
  SAFE_AREA_REFERENCE,
  SAFE_AREA_ZONES,
  MAX_FONTS_PER_ACCOUNT,
  MAX_FONT_BYTES,
  CreateUploadRequestSchema,
  ErrorBodySchema,
  JobListSchema,
  JobRecordSchema,
  PROFANITY_WORD_MAX_CHARS,
  PROFANITY_WORDS_MAX,
  ProfanityWordsSchema,
  TRANSCRIPT_CONTENT_TYPES,
  TranscriptRecordSchema,
  UploadRecordSchema,
} from '@captionfarm/contracts';

const schema = (s: z.ZodType, io: 'input' | 'output' = 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } });
const json = (ref: string, description: string) => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'Malformed percent-encoding here gets 400 invalid_request.',
  schema: { type: 'string', format: 'uuid' },
};
const common = {
  '401': errorResponse('Missing, unknown or revoked API key (unauthenticated); each failure counts against the client address'),
  '408': errorResponse(
    'request_timeout: the body stalled longer than CAPTIONFARM_BODY_IDLE_SECONDS (10 s) ' +
      'or took longer than CAPTIONFARM_BODY_TOTAL_SECONDS (30 s); the connection is closed',
  ),
  '413': errorResponse('payload_too_large: decided from the declared Content-Length alone, before the body is read; the connection is closed'),
  '429': errorResponse(
    "rate_limited (the account's requests per minute, or more than CAPTIONFARM_AUTH_FAILURES_PER_MINUTE " +
      'failed authentications from this address this minute); see Retry-After',
  ),
  '500': errorResponse('internal'),
};

const STYLE_DESCRIPTION =
  'A per-job style: any template field but id, name and description, nested objects partially (null ' +
  'turns an effect off). Validated by the template schema: 400 invalid_request with details[].path ' +
  'such as "style.fill". font.fontId names an uploaded font (POST /v1/fonts) of this account; emoji ' +
  '"auto" adds at most one emoji per caption page from a fixed table (the same words always give the ' +
  'same emoji); keywords are always emphasised (case-insensitive, whole words).';

/** The create-job body with `style` documented as what the server validates it with. */
function createJobRequestSchema(): Record<string, unknown> {
  const doc = schema(CreateJobRequestSchema, 'input') as { properties: Record<string, Record<string, unknown>> };
  doc.properties.style = { $ref: '#/components/schemas/Style', description: STYLE_DESCRIPTION };
  doc.properties.overlay = {
    ...doc.properties.overlay,
    description:
      "Only the captions on transparent frames, at the source's size, frame rate and duration, no audio: " +
      'format "webm" (VP9 with alpha, yuva420p) or "mov" (ProRes 4444 with alpha). "mov" is accepted only ' +
      'with overlay: true, and an overlay is never "mp4", so burned videos stay mp4 or webm.',
  };
  doc.properties.format = { ...doc.properties.format, description: 'mp4 or webm for a burned video; mov (ProRes 4444) only with overlay: true.' };
  return doc;
}

/** GET .../outputs' answer, its fields described (the contracts' schema carries doc comments only). */
function jobOutputsSchema(): Record<string, unknown> {
  const doc = schema(JobOutputsSchema) as { properties: Record<string, Record<string, unknown>> };
  const describe = (node: Record<string, unknown>, descriptions: Record<string, string>) => {
    const props = node.properties as Record<string, Record<string, unknown>>;
    for (const [key, description] of Object.entries(descriptions)) props[key] = { ...props[key], description };
  };
  describe(doc as Record<string, unknown>, {
    safeArea: 'As resolved at creation (default none).',
    placement: 'As resolved at creation (default fixed).',
    subtitles: 'As resolved at creation (default burn).',
    outputs: "Every rendition in the job's order; index 0 is the job record's own (its format, resolution and downloadUrl).",
    poster: 'The poster; null when none was asked for, before the job succeeded, and once its outputs expired.',
  });
  describe((doc.properties.outputs as { items: Record<string, unknown> }).items, {
    requestedResolution: "As asked for at creation; null: the source's size.",
    resolution: 'What was rendered; null until the job succeeded.',
    sizeBytes: 'null until the job succeeded.',
    downloadUrl: 'A presigned GET link (no Authorization header); null before the job succeeded and once the outputs expired.',
    outputExpiresAt: 'When downloadUrl stops working (7 days after the job succeeded); null with downloadUrl.',
  });
  const poster = (doc.properties.poster as { anyOf: Record<string, unknown>[] }).anyOf[0]!;
  describe(poster, { at: 'Output seconds of the first rendition the frame was taken at.', downloadUrl: 'A presigned GET link to the JPEG.' });
  return doc;
}

const fontIdParam = { ...idParam, description: "A font id (uuid); another account's font is 404." };

/** The OpenAPI 3.1 document, generated from the same zod schemas the server validates with. */
export function buildOpenApiDocument(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Captionfarm API', version: '1.0.0', description: 'Burn animated captions into videos.' },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    components: components(),
    paths: {
      ...jobPaths(),
      ...jobOutputPaths(),
      ...renditionPaths(),
      ...fontPaths(),
      ...deliveryPaths(),
      ...profanityPaths(),
      ...templatePaths(),
      ...uploadPaths(),
    },
  };
}

/** The components: the bearer scheme and every schema the paths name. */
function components(): Record<string, unknown> {
  return {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'cf_live_... API key' } },
    schemas: {
      JobRecord: schema(JobRecordSchema),
      JobList: schema(JobListSchema),
      CreateJobRequest: createJobRequestSchema(),
      Style: { ...schema(StyleSchema, 'input'), description: STYLE_DESCRIPTION },
      Template: schema(TemplateSchema),
      JobStyle: schema(JobStyleSchema),
      CreateFontRequest: schema(CreateFontRequestSchema, 'input'),
      FontUploadRecord: schema(FontUploadRecordSchema),
      FontRecord: schema(FontRecordSchema),
      FontList: schema(FontListSchema),
      CreateUploadRequest: schema(CreateUploadRequestSchema, 'input'),
      UploadRecord: schema(UploadRecordSchema),
      ErrorBody: schema(ErrorBodySchema),
      TranscriptRecord: schema(TranscriptRecordSchema),
      JobEdit: schema(JobEditSchema),
      JobOutputs: jobOutputsSchema(),
      ProfanityWords: schema(ProfanityWordsSchema, 'input'),
    },
  };
}

/** Create, list, get and cancel a job. */
function jobPaths(): Record<string, unknown> {
  return {
    '/v1/automation-jobs': {
      post: {
        operationId: 'createJob',
        description:
          'Creates a job (202, queued; minutes are reserved on the source duration, also for an edited job whose output is ' +
          'shorter). Issue 42: edit (silences, fillers, zoom, or your own keep-ranges), hookTitle and profanity make a short ' +
          'in the same job; GET /v1/automation-jobs/{id}/edit shows what was cut. An edit.keep range past the end of the ' +
          'source fails the job after ingest with failureCode edit-out-of-range; an edit that leaves nothing to render fails ' +
          'it with edit-left-nothing (neither retryable). Issue 43: reframe, safeArea, placement, outputs (up to ' +
          `${MAX_OUTPUTS} renditions from one decode and one recognition), poster and subtitles; the record's format, resolution ` +
          "and downloadUrl are the first rendition's, GET /v1/automation-jobs/{id}/outputs lists them all. A rendition larger " +
          'than the source fails the job after ingest with output-larger-than-source.',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateJobRequest' } } } },
        responses: {
          '202': json('JobRecord', 'Job created (queued)'),
          '400': errorResponse(
            'invalid_request: a request that could never succeed (schema, both or neither of videoUrl/uploadId, ' +
              'unknown templateId, a non-public videoUrl/webhookUrl, a language the recognizer does not know, a ' +
              'resolution that is odd, under 64 px a side or wider than 4:1, over 100 vocabulary terms or 200 ' +
              'replacements, a term or from/to over 50 characters or not one line, the same from twice; an edit value outside ' +
              'its set, edit.keep not ascending, overlapping or with silences/fillers, a hookTitle over 120 characters or ' +
              '10 seconds; an overlay with an edit or with profanity "bleep"; issue 43: more than 4 outputs, an output ' +
              'resolution that is odd, under 64 px or wider than 4:1, the same rendition twice, outputs with a top-level ' +
              'resolution, reframe "subject" with no resolution to crop to, an unknown safeArea, placement or subtitles, ' +
              'an overlay with reframe, outputs, poster or subtitles other than "burn")',
          ),
          '404': errorResponse('not_found (unknown uploadId)'),
          '409': errorResponse('upload_not_completed | upload_already_used'),
          '415': errorResponse('unsupported_media_type'),
          '422': errorResponse("limit_exceeded (resolution, or an outputs[i].resolution, over the plan's frame budget; details[].path names it)"),
          ...common,
          '413': errorResponse(
            `payload_too_large: this route takes bodies up to CAPTIONFARM_MAX_JOB_JSON_BYTES (default ` +
              `${CREATE_JOB_MAX_JSON_BYTES} bytes, room for a 20,000-word transcript), every other route ` +
              `CAPTIONFARM_MAX_JSON_BYTES (default 65536); decided from the declared Content-Length alone, before ` +
              `the body is read; the connection is closed`,
          ),
        },
      },
      get: {
        operationId: 'listJobs',
        parameters: [
          { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        ],
        responses: { '200': json('JobList', 'A page of jobs, newest first'), '400': errorResponse('invalid_request (bad cursor or limit)'), ...common },
      },
    },
    '/v1/automation-jobs/{id}': {
      get: { operationId: 'getJob', parameters: [idParam], responses: { '200': json('JobRecord', 'The job'), '404': errorResponse('not_found'), ...common } },
    },
    '/v1/automation-jobs/{id}/cancel': {
      post: {
        operationId: 'cancelJob',
        parameters: [idParam],
        responses: {
          '200': json('JobRecord', 'Cancelled (idempotent)'),
          '404': errorResponse('not_found'),
          '409': errorResponse('job_not_cancellable'),
          ...common,
        },
      },
    },
  };
}

/** What a job rendered with and recognized: its transcript and style. */
function jobOutputPaths(): Record<string, unknown> {
  return {
    '/v1/automation-jobs/{id}/transcript': {
      get: {
        operationId: 'getTranscript',
        description:
          'The words a succeeded job burned (recognized, or given at creation), in seconds, or as subtitles: ' +
          'SRT or WebVTT, at most 42 display columns a line (east-asian wide characters count 2) and 2 lines a ' +
          'cue, right-to-left text in logical order. Available once the job has succeeded: before that, and ' +
          'for failed or cancelled jobs, 409 transcript_not_available. An edited job (edit, hookTitle or profanity): each ' +
          'JSON word has outputStart/outputEnd, its time in the output video (null when a cut removed it), profane words ' +
          'are masked (f***), and SRT/WebVTT are on the output timeline. The JSON can be sent back as a transcript ' +
          'unchanged (the output times are ignored).',
        parameters: [idParam, { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'srt', 'vtt'], default: 'json' } }],
        responses: {
          '200': {
            description: 'The transcript',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/TranscriptRecord' } },
              [TRANSCRIPT_CONTENT_TYPES.srt]: { schema: { type: 'string' } },
              [TRANSCRIPT_CONTENT_TYPES.vtt]: { schema: { type: 'string' } },
            },
          },
          '400': errorResponse('invalid_request (format is not json, srt or vtt; unknown query parameter)'),
          '404': errorResponse("not_found (unknown id, malformed id, or another account's job)"),
          '409': errorResponse(
            'transcript_not_available: the job has not succeeded (queued, running, failed or cancelled); poll the job and retry once it succeeded',
          ),
          ...common,
        },
      },
    },
    '/v1/automation-jobs/{id}/edit': {
      get: {
        operationId: 'getJobEdit',
        description:
          "Issue 42: the edit a succeeded job rendered: its options as resolved (edit, hookTitle, profanity) and its agent's " +
          'plan: keep (source seconds, frame-aligned, ascending; the output is their concatenation, outputSeconds their summed ' +
          'length), every cut with its reason (silence, filler, repeat, voiced-gap, client) and the words it removed, the zooms ' +
          'and bleeps in output seconds. To fix a cut, create the job again with plan.keep changed as edit.keep. Billing stays ' +
          "on the source duration (the job's quotedSeconds).",
        parameters: [idParam],
        responses: {
          '200': json('JobEdit', "The job's edit and plan"),
          '404': errorResponse("not_found (unknown id, malformed id, or another account's job)"),
          '409': errorResponse(
            'edit_not_available: the job has not succeeded (poll it and retry once it has), or it was created without edit, hookTitle or profanity',
          ),
          ...common,
        },
      },
    },
    '/v1/automation-jobs/{id}/style': {
      get: {
        operationId: 'getJobStyle',
        description:
          'What the job renders with: its template, the per-job style sent at creation (override, or null), ' +
          'overlay, and the effective style (the template with the style applied, every default filled in; see ' +
          'the Template schema), and the words of recognition: the vocabulary and replacements the job uses (its ' +
          "own, else its template's defaults, resolved at creation). The job record itself keeps exactly the spec's keys.",
        parameters: [idParam],
        responses: { '200': json('JobStyle', "The job's style"), '404': errorResponse("not_found (unknown id, or another account's job)"), ...common },
      },
    },
  };
}

const SAFE_AREA_TEXT = Object.entries(SAFE_AREA_ZONES)
  .map(([name, zones]) => `${name}: ${zones.map((z) => `${z.width}x${z.height}+${z.x}+${z.y}`).join(', ')}`)
  .join('; ');

/** Issue 43: a job's renditions and poster. */
function renditionPaths(): Record<string, unknown> {
  return {
    '/v1/automation-jobs/{id}/outputs': {
      get: {
        operationId: 'getJobOutputs',
        description:
          "Issue 43: every rendition of the job (index 0 is the job record's own format, resolution and downloadUrl; the " +
          'others those of outputs at creation, in order) with what was rendered, its size, its own presigned GET link and ' +
          'expiry, and the poster (a JPEG frame of the first rendition with its caption; null when none was asked for). ' +
          'Before the job succeeded, and once its outputs expired (7 days), resolution, sizeBytes and the links are null ' +
          "and the poster null. Also safeArea, placement and subtitles as resolved. safeArea's interface zones, as " +
          `WxH+X+Y in a ${SAFE_AREA_REFERENCE.width}x${SAFE_AREA_REFERENCE.height} frame, scaled to each output: ${SAFE_AREA_TEXT}. ` +
          'Minutes are charged once, on the source duration, whatever the number of renditions.',
        parameters: [idParam],
        responses: {
          '200': json('JobOutputs', "The job's renditions and poster"),
          '404': errorResponse("not_found (unknown id, malformed id, or another account's job)"),
          ...common,
        },
      },
    },
  };
}

/** Font uploads: create, list, get, delete, complete. */
function fontPaths(): Record<string, unknown> {
  return {
    '/v1/fonts': {
      post: {
        operationId: 'createFontUpload',
        description:
          `Step 1 of a font upload: a presigned PUT URL for exactly sizeBytes (TTF, OTF or WOFF2; at most ` +
          `${MAX_FONT_BYTES} bytes; at most ${MAX_FONTS_PER_ACCOUNT} fonts an account, pending ones included). ` +
          `Step 2: PUT the bytes to uploadUrl (no Authorization header, the returned Content-Type). Step 3: ` +
          `POST /v1/fonts/{id}/complete. An upload never completed is removed an hour after its URL expired.`,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateFontRequest' } } } },
        responses: {
          '201': json('FontUploadRecord', 'Presigned upload URL'),
          '400': errorResponse('invalid_request'),
          '415': errorResponse('unsupported_media_type (not .ttf, .otf or .woff2; WOFF 1.0 and collections are not accepted)'),
          '422': errorResponse(`limit_exceeded (over ${MAX_FONT_BYTES} bytes, or ${MAX_FONTS_PER_ACCOUNT} fonts already)`),
          ...common,
        },
      },
      get: { operationId: 'listFonts', responses: { '200': json('FontList', "The account's fonts, oldest first"), ...common } },
    },
    '/v1/fonts/{id}': {
      get: {
        operationId: 'getFont',
        parameters: [fontIdParam],
        responses: { '200': json('FontRecord', 'The font'), '404': errorResponse('not_found'), ...common },
      },
      delete: {
        operationId: 'deleteFont',
        parameters: [fontIdParam],
        responses: { '204': { description: 'Deleted (object too)' }, '404': errorResponse('not_found'), ...common },
      },
    },
    '/v1/fonts/{id}/complete': {
      post: {
        operationId: 'completeFont',
        description:
          'Reads and checks the uploaded font in a sandboxed checker (structure, checksums, every glyph, a ' +
          'draw by the renderer; a WOFF2 is decoded once here). Only a ready font can be named by a style or ' +
          'template, so no unchecked font reaches an agent. Idempotent once ready.',
        parameters: [fontIdParam],
        responses: {
          '200': json('FontRecord', 'The checked font, status ready'),
          '404': errorResponse('not_found'),
          '409': errorResponse('upload_not_completed: PUT the bytes first'),
          '422': errorResponse('invalid_font: the file is damaged, hostile or not a font; the message says why; the upload is deleted'),
          ...common,
          '429': errorResponse(
            'rate_limited (Retry-After): this account already has a check running and 2 waiting, or its refused fonts used 60 s of the ' +
              'checker in the last hour; also the requests-per-minute limit',
          ),
        },
      },
    },
  };
}

/** A job's webhook deliveries. */
function deliveryPaths(): Record<string, unknown> {
  return {
    '/v1/automation-jobs/{id}/webhook-deliveries': {
      get: {
        operationId: 'listWebhookDeliveries',
        parameters: [idParam],
        responses: { '200': { description: "The job's webhook deliveries and their attempts" }, '404': errorResponse('not_found'), ...common },
      },
    },
  };
}

/** Issue 42: the account's own profane words, on top of the language's list. */
function profanityPaths(): Record<string, unknown> {
  const words = json('ProfanityWords', "The account's own words");
  return {
    '/v1/profanity-words': {
      get: {
        operationId: 'getProfanityWords',
        description:
          "The account's own profane words, masked (profanity: mask) or bleeped (bleep) on top of the LDNOOBW list of the " +
          "job's language (npm naughty-words, CC-BY-4.0). Empty until set.",
        responses: { '200': words, ...common },
      },
      put: {
        operationId: 'setProfanityWords',
        description:
          `Replaces the account's words (at most ${PROFANITY_WORDS_MAX}, each 1..${PROFANITY_WORD_MAX_CHARS} characters, one line; ` +
          '[] removes them all). A job takes the words the account has when it is created: a PUT changes no job already created.',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ProfanityWords' } } } },
        responses: { '200': json('ProfanityWords', 'The words saved'), '400': errorResponse('invalid_request (details: the path of each problem)'), ...common },
      },
    },
  };
}

/** Templates: list, create, get, delete, preview. */
function templatePaths(): Record<string, unknown> {
  return {
    '/v1/templates': {
      get: { operationId: 'listTemplates', responses: { '200': { description: 'Built-in and custom templates' }, ...common } },
      post: {
        operationId: 'createTemplate',
        responses: {
          '201': { description: 'The saved custom template' },
          '400': errorResponse('invalid_request'),
          '409': errorResponse('conflict (id taken)'),
          ...common,
        },
      },
    },
    '/v1/templates/{id}': {
      get: {
        operationId: 'getTemplate',
        parameters: [{ ...idParam, schema: { type: 'string' } }],
        responses: { '200': { description: 'The template' }, '404': errorResponse('not_found'), ...common },
      },
      delete: {
        operationId: 'deleteTemplate',
        parameters: [{ ...idParam, schema: { type: 'string' } }],
        responses: { '204': { description: 'Deleted' }, '403': errorResponse('forbidden (built-in)'), '404': errorResponse('not_found'), ...common },
      },
    },
    '/v1/templates/{id}/preview': {
      post: {
        operationId: 'previewTemplate',
        parameters: [{ ...idParam, schema: { type: 'string' } }],
        description: 'Rendered on a worker thread pool. At most 1 (free), 2 (starter) or 4 (pro) previews of an account in flight; at most 3840x2160 pixels.',
        requestBody: {
          required: false,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  text: { type: 'string', minLength: 1, maxLength: 300, description: 'Sample caption text' },
                  width: { type: 'integer', minimum: 64, maximum: 3840, default: 1080 },
                  height: { type: 'integer', minimum: 64, maximum: 3840, default: 1920 },
                  at: { type: 'number', minimum: 0, maximum: 600, default: 2, description: 'Seconds: which moment of the animation to show' },
                  style: { $ref: '#/components/schemas/Style', description: 'The same style POST /v1/automation-jobs takes, previewed over the template' },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'One rendered frame', content: { 'image/png': {} } },
          '400': errorResponse('invalid_request'),
          '404': errorResponse('not_found'),
          '422': errorResponse('limit_exceeded (more than 3840x2160 pixels)'),
          ...common,
          '429': errorResponse("rate_limited: the plan's previews in flight are all busy (Retry-After: 1), or the request limits of every route"),
          '503': errorResponse('unavailable: the preview pool is full or the render took over 20 s; see Retry-After'),
        },
      },
    },
  };
}

/** Video uploads. */
function uploadPaths(): Record<string, unknown> {
  return {
    '/v1/automation-jobs/uploads': {
      post: {
        operationId: 'createUpload',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateUploadRequest' } } } },
        responses: {
          '201': json(
            'UploadRecord',
            'Presigned upload URL. Its PUT (to the built-in store): 200 for exactly sizeBytes; 403 for another ' +
              'size or a tampered/expired URL; 409 UploadAlreadyUsed once a job has claimed the upload (the object ' +
              'can no longer be replaced); 400 RequestTimeout when the body stalls for ' +
              'CAPTIONFARM_UPLOAD_IDLE_SECONDS (20 s; the connection is cut); 503 SlowDown with Retry-After past 4 ' +
              'concurrent PUTs to one URL or 64 concurrent requests from one address.',
          ),
          '400': errorResponse('invalid_request'),
          '415': errorResponse('unsupported_media_type (file extension)'),
          '422': errorResponse('limit_exceeded (file too big for the plan)'),
          '429': errorResponse('rate_limited | quota_exceeded (uploads per day); see Retry-After'),
          '401': common['401'],
          '408': common['408'],
          '413': common['413'],
          '500': common['500'],
        },
      },
    },
  };
}
