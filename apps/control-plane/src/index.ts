export { createControlPlane, type ControlPlane, type ControlPlaneOptions } from './server.ts';
export { loadConfig, type ControlPlaneConfig } from './config.ts';
export { readAdminToken, SECRETS_FILE } from './secrets.ts';
export { toJobRecord } from './jobs/record.ts';
export type { AgentRouter } from './agents/router.ts';
export { DEFAULT_AGENT_TIMINGS, type AgentTimings } from './agents/service.ts';
export { sampleWords, renderTemplatePreview } from './preview.ts';
export type { AdminWebhookDeliveryView, WebhookDeliveryView, WebhookAttemptView } from './webhooks/deliveries.ts';
