export {
  signWebhook,
  computeSignature,
  generateWebhookSecret,
  generateWebhookId,
  activeWebhookSecrets,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRET_ROTATION_OVERLAP_MS,
  type WebhookHeaders,
  type SignWebhookArgs,
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
