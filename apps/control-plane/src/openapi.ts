import { z } from 'zod';
import {
  CREATE_JOB_MAX_JSON_BYTES,
  CreateJobRequestSchema,
  CreateUploadRequestSchema,
  ErrorBodySchema,
  JobListSchema,
  JobRecordSchema,
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
const idParam = { name: 'id', in: 'path', required: true, description: 'Malformed percent-encoding here gets 400 invalid_request.', schema: { type: 'string', format: 'uuid' } };
const common = {
  '401': errorResponse('Missing, unknown or revoked API key (unauthenticated); each failure counts against the client address'),
  '408': errorResponse('request_timeout: the body stalled longer than CAPTIONFARM_BODY_IDLE_SECONDS (10 s) or took longer than CAPTIONFARM_BODY_TOTAL_SECONDS (30 s); the connection is closed'),
  '413': errorResponse('payload_too_large: decided from the declared Content-Length alone, before the body is read; the connection is closed'),
  '429': errorResponse('rate_limited (the account\'s requests per minute, or more than CAPTIONFARM_AUTH_FAILURES_PER_MINUTE failed authentications from this address this minute); see Retry-After'),
  '500': errorResponse('internal'),
};

/** The OpenAPI 3.1 document, generated from the same zod schemas the server validates with. */
export function buildOpenApiDocument(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Captionfarm API', version: '1.0.0', description: 'Burn animated captions into videos.' },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'cf_live_... API key' } },
      schemas: {
        JobRecord: schema(JobRecordSchema),
        JobList: schema(JobListSchema),
        CreateJobRequest: schema(CreateJobRequestSchema, 'input'),
        CreateUploadRequest: schema(CreateUploadRequestSchema, 'input'),
        UploadRecord: schema(UploadRecordSchema),
        ErrorBody: schema(ErrorBodySchema),
        TranscriptRecord: schema(TranscriptRecordSchema),
      },
    },
    paths: {
      '/v1/automation-jobs': {
        post: {
          operationId: 'createJob',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateJobRequest' } } } },
          responses: {
            '202': json('JobRecord', 'Job created (queued)'),
            '400': errorResponse(
              'invalid_request: a request that could never succeed (schema, both or neither of videoUrl/uploadId, unknown templateId, a non-public videoUrl/webhookUrl, a language the recognizer does not know, a resolution that is odd, under 64 px a side or wider than 4:1)',
            ),
            '404': errorResponse('not_found (unknown uploadId)'),
            '409': errorResponse('upload_not_completed | upload_already_used'),
            '415': errorResponse('unsupported_media_type'),
            '422': errorResponse('limit_exceeded (resolution over the frame budget)'),
            ...common,
            '413': errorResponse(
              `payload_too_large: this route takes bodies up to CAPTIONFARM_MAX_JOB_JSON_BYTES (default ${CREATE_JOB_MAX_JSON_BYTES} bytes, room for a 20,000-word transcript), every other route CAPTIONFARM_MAX_JSON_BYTES (default 65536); decided from the declared Content-Length alone, before the body is read; the connection is closed`,
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
          responses: { '200': json('JobRecord', 'Cancelled (idempotent)'), '404': errorResponse('not_found'), '409': errorResponse('job_not_cancellable'), ...common },
        },
      },
      '/v1/automation-jobs/{id}/transcript': {
        get: {
          operationId: 'getTranscript',
          description:
            'The words a succeeded job burned (recognized, or given at creation), in seconds, or as subtitles: SRT or WebVTT, at most 42 display columns a line (east-asian wide characters count 2) and 2 lines a cue, right-to-left text in logical order. Available once the job has succeeded: before that, and for failed or cancelled jobs, 409 transcript_not_available.',
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
            '409': errorResponse('transcript_not_available: the job has not succeeded (queued, running, failed or cancelled); poll the job and retry once it succeeded'),
            ...common,
          },
        },
      },
      '/v1/automation-jobs/{id}/webhook-deliveries': {
        get: { operationId: 'listWebhookDeliveries', parameters: [idParam], responses: { '200': { description: "The job's webhook deliveries and their attempts" }, '404': errorResponse('not_found'), ...common } },
      },
      '/v1/templates': {
        get: { operationId: 'listTemplates', responses: { '200': { description: 'Built-in and custom templates' }, ...common } },
        post: { operationId: 'createTemplate', responses: { '201': { description: 'The saved custom template' }, '400': errorResponse('invalid_request'), '409': errorResponse('conflict (id taken)'), ...common } },
      },
      '/v1/templates/{id}': {
        get: { operationId: 'getTemplate', parameters: [{ ...idParam, schema: { type: 'string' } }], responses: { '200': { description: 'The template' }, '404': errorResponse('not_found'), ...common } },
        delete: { operationId: 'deleteTemplate', parameters: [{ ...idParam, schema: { type: 'string' } }], responses: { '204': { description: 'Deleted' }, '403': errorResponse('forbidden (built-in)'), '404': errorResponse('not_found'), ...common } },
      },
      '/v1/templates/{id}/preview': {
        post: {
          operationId: 'previewTemplate',
          parameters: [{ ...idParam, schema: { type: 'string' } }],
          description: 'Rendered on a worker thread pool. At most 1 (free), 2 (starter) or 4 (pro) previews of an account in flight; at most 3840x2160 pixels.',
          responses: {
            '200': { description: 'One rendered frame', content: { 'image/png': {} } },
            '400': errorResponse('invalid_request'),
            '404': errorResponse('not_found'),
            '422': errorResponse('limit_exceeded (more than 3840x2160 pixels)'),
            ...common,
            '429': errorResponse('rate_limited: the plan\'s previews in flight are all busy (Retry-After: 1), or the request limits of every route'),
            '503': errorResponse('unavailable: the preview pool is full or the render took over 20 s; see Retry-After'),
          },
        },
      },
      '/v1/automation-jobs/uploads': {
        post: {
          operationId: 'createUpload',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateUploadRequest' } } } },
          responses: {
            '201': json(
              'UploadRecord',
              'Presigned upload URL. Its PUT (to the built-in store): 200 for exactly sizeBytes; 403 for another size or a tampered/expired URL; 409 UploadAlreadyUsed once a job has claimed the upload (the object can no longer be replaced); 400 RequestTimeout when the body stalls for CAPTIONFARM_UPLOAD_IDLE_SECONDS (20 s; the connection is cut); 503 SlowDown with Retry-After past 4 concurrent PUTs to one URL or 64 concurrent requests from one address.',
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
    },
  };
}
