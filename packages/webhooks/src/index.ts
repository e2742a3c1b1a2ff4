export {
  SafeFetchError,
  isSafeFetchError,
  type SafeFetchErrorCode,
} from './errors.ts';
export {
  checkAddress,
  isPublicAddress,
  isIpLiteral,
  type AddressCheck,
  type AddressRange,
} from './ip-address.ts';
export {
  validatePublicHttpsUrl,
  validatePublicHttpsUrlSyntax,
  defaultLookup,
  type LookupAddress,
  type LookupFn,
  type UrlCheck,
  type ValidateUrlOptions,
} from './url-policy.ts';
export {
  createSafeFetch,
  safeFetch,
  type SafeFetch,
  type SafeFetchFn,
  type SafeFetchInit,
  type SafeFetchOptions,
} from './safe-fetch.ts';
export {
  signWebhook,
  verifyWebhook,
  computeSignature,
  generateWebhookSecret,
  generateWebhookId,
  activeWebhookSecrets,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRET_ROTATION_OVERLAP_MS,
  DEFAULT_TIMESTAMP_TOLERANCE_SECONDS,
  type WebhookHeaders,
  type SignWebhookArgs,
  type VerifyWebhookArgs,
  type VerifyResult,
  type HeaderSource,
} from './signing.ts';
export {
  nextAttemptAt,
  classifyResponse,
  retryJitterBoundMs,
  RETRY_OFFSETS_MS,
  MAX_ATTEMPTS,
  RETRY_JITTER_FRACTION,
  RETRY_JITTER_MAX_MS,
  type NextAttemptArgs,
  type ResponseClass,
} from './retry-schedule.ts';
export {
  deliverWebhook,
  WEBHOOK_DEADLINE_MS,
  WEBHOOK_USER_AGENT,
  type DeliverWebhookArgs,
  type DeliveryResult,
  type DeliveryErrorCode,
} from './deliver.ts';
export {
  createWebhookDispatcher,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
  type WebhookStore,
  type WebhookDelivery,
  type ClaimDueArgs,
  type AttemptRecord,
  type Clock,
  type DispatcherEvent,
  type TickSummary,
} from './dispatcher.ts';
