export {
  createClient,
  type CaptionfarmClient,
  type CreateJobRequest,
  type CallOptions,
  type UploadFontOptions,
  type ClientOptions,
  type JobPage,
  type ListJobsOptions,
  type PreviewRequest,
  type TemplatePreview,
  type TranscriptOptions,
  type UploadFileOptions,
} from './client.ts';
export {
  CaptionfarmApiError,
  CaptionfarmError,
  CaptionfarmNetworkError,
  InvalidResponseError,
  UploadRejectedError,
  WebhookVerificationError,
  describeError,
  isApiError,
  type WebhookVerificationCode,
} from './errors.ts';
export { SDK_VERSION } from './http.ts';
export {
  RETRYABLE_FAILURE_CODES,
  isKnownFailureCode,
  isRetryableFailure,
  isTerminal,
  type CaptionStyle,
  type CaptionTemplate,
  type Job,
  type JobStyle,
  type TemplateDetail,
  type TemplateSummary,
} from './job.ts';
export type { DownloadOptions, PutUploadOptions, TransferProgress, UploadBody } from './transfer.ts';
export { DEFAULT_POLL_POLICY, nextPollDelay, type PollPolicy, type WaitForJobOptions } from './wait.ts';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  verifyWebhook,
  type HeadersLike,
  type VerifiedWebhook,
  type VerifiedWebhookSignature,
  type VerifyWebhookOptions,
} from './webhooks.ts';
export {
  FAILURE_CODES,
  type ApiErrorCode,
  type CreateFontRequest,
  type CreateUploadRequest,
  type FontRecord,
  type FontUploadRecord,
  type FailureCode,
  type Format,
  type JobPhase,
  type JobStatus,
  type Quality,
  type Replacement,
  type Resolution,
  type TranscriptInput,
  type TranscriptRecord,
  type TranscriptWord,
  type UploadRecord,
} from '@captionfarm/contracts';
