import type { AdminWebhookDeliveryView } from '@captionfarm/control-plane';
import type { AdminHandler } from './admin.ts';
import { CliError, UsageError, print, table } from '../output.ts';

/** The admin API's shape of a delivery (defined once, by the control plane). */
type DeliveryView = AdminWebhookDeliveryView;

const enc = encodeURIComponent;

function optional(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

async function deliveriesOfJob(call: Parameters<AdminHandler>[0]['call'], jobId: string): Promise<DeliveryView[]> {
  const out = (await call('GET', `/webhooks?job=${enc(jobId)}`)) as { deliveries: DeliveryView[] };
  return out.deliveries;
}

function stateOf(d: DeliveryView): string {
  return d.state === 'exhausted' && d.exhaustedReason ? `exhausted (${d.exhaustedReason})` : d.state;
}

function describe(deliveries: DeliveryView[]): string {
  if (deliveries.length === 0) return '(no webhook deliveries: the job has no webhookUrl, or has not ended yet)';
  return deliveries
    .map((d) => {
      const head =
        `${d.id}  ${stateOf(d)}  ${d.url}\n  job ${d.jobId}, account ${d.accountId}; ${d.attemptCount} attempt(s)` +
        (d.state === 'pending' ? `; next attempt ${d.nextAttemptAt ?? 'now'}` : d.deliveredAt ? `; delivered ${d.deliveredAt}` : '');
      const rows = d.attempts.map((a) => ({
        attempt: a.attempt,
        startedAt: a.startedAt,
        status: a.statusCode,
        outcome: a.outcome,
        ms: a.durationMs,
        error: a.error ? `${a.error.code}: ${a.error.message}` : null,
      }));
      return `${head}\n\n${rows.length ? table(rows, ['attempt', 'startedAt', 'status', 'outcome', 'ms', 'error']) : '(no attempts yet)'}`;
    })
    .join('\n\n');
}

/** `captionfarm admin webhooks ...` (program.ts defines their options and runs them with runAdmin). */
export const adminWebhooksHandlers: Record<string, AdminHandler> = {
  'webhooks list': async ({ values, call, json }) => {
    const job = optional(values, 'job');
    if (!job) throw new UsageError('--job is required');
    const deliveries = await deliveriesOfJob(call, job);
    print(deliveries, json, describe);
  },
  'webhooks redeliver': async ({ values, call, json }) => {
    const job = optional(values, 'job');
    let delivery = optional(values, 'delivery');
    if (!job === !delivery) throw new UsageError('give exactly one of --job or --delivery');
    if (!delivery) {
      const [latest] = await deliveriesOfJob(call, job!);
      if (!latest) throw new CliError(`job ${job} has no webhook delivery: it was created without a webhookUrl, or has not ended yet.`);
      delivery = latest.id;
    }
    const out = (await call('POST', `/webhooks/${enc(delivery)}/redeliver`)) as DeliveryView;
    print(
      out,
      json,
      (d: DeliveryView) => `re-queued ${d.id} (same webhook-id) for ${d.url}; it is sent now\n  job ${d.jobId}, ` + `${d.attemptCount} earlier attempt(s)`,
    );
  },
};
