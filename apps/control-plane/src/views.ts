import type { JobStatus, Plan, PlanId } from '@captionfarm/contracts';
import type { AgentNodes } from './agents/nodes.ts';
import type { queueStats } from './dashboard/queue.ts';
import type { UserView } from './dashboard/users.ts';
import type { AccountsService } from './services/accounts.ts';

/**
 * The JSON the dashboard reads, as the code that writes it declares it: apps/dashboard imports
 * these types only (nothing of the control plane reaches the browser bundle), so a change on
 * either side fails tsc instead of a page.
 */
export type { UserView } from './dashboard/users.ts';
export type { TemplateSummary } from './services/templates.ts';
export type { WebhookAttemptView, WebhookDeliveryView } from './webhooks/deliveries.ts';
/** GET /admin/accounts. */
export type AccountSummary = Awaited<ReturnType<AccountsService['list']>>[number];
/** GET /keys and /admin/accounts/:id/keys. */
export type KeyView = Awaited<ReturnType<AccountsService['listKeys']>>[number];
/** GET /webhook-secret. */
export type WebhookSecretView = Awaited<ReturnType<AccountsService['showWebhookSecret']>>;
/** GET /admin/nodes. */
export type NodeView = Awaited<ReturnType<AgentNodes['listNodes']>>[number];
/** GET /admin/agents/tokens (each of `tokens`). */
export type { AgentTokenView } from './agents/nodes.ts';
/** GET /admin/queue. */
export type QueueStats = Awaited<ReturnType<typeof queueStats>>;

/** GET /app/api/session. */
export interface DashboardSession {
  user: UserView | null;
  account: { id: string; name: string; plan: PlanId } | null;
  csrfToken: string;
}

/** GET /app/api/overview: the member's home page. */
export interface DashboardOverview {
  plan: Plan;
  balance: number;
  usedThisMonth: number;
  /** Minutes used per UTC day of this month. */
  usage: { day: string; minutes: number }[];
  jobsByStatus: Record<JobStatus, number>;
}
