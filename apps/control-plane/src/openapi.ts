import { z } from 'zod';
import { CreateJobRequestSchema, CreateUploadRequestSchema, ErrorBodySchema, JobListSchema, JobRecordSchema, UploadRecordSchema } from '@captionfarm/contracts';

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
