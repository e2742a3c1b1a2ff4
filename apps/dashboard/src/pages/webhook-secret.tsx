import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type WebhookSecretView } from '../api.ts';
import { when } from '../format.ts';
import { Card, ConfirmButton, CopyButton, ErrorState, FormError, Loading, PageHeader } from '../ui.tsx';

export function WebhookSecretPage() {
  const qc = useQueryClient();
  const [shown, setShown] = useState(false);
  // Fetched only when revealed, and never cached after leaving the page.
  const secret = useQuery({ queryKey: ['webhook-secret'], queryFn: () => api<WebhookSecretView>('GET', '/webhook-secret'), enabled: shown, gcTime: 0 });
  const rotate = useMutation({
    mutationFn: () => api<WebhookSecretView>('POST', '/webhook-secret/rotate'),
    onSuccess: (s) => {
      qc.setQueryData(['webhook-secret'], s);
      setShown(true);
    },
  });
  return (
    <>
      <PageHeader title="Webhook signing secret" subtitle="Webhooks are signed with Standard Webhooks; verify the webhook-signature header with this secret." />
      <Card title="Current secret">
        {!shown ? (
          <button type="button" className="btn" onClick={() => setShown(true)}>
            Reveal secret
          </button>
        ) : secret.isPending ? (
          <Loading />
        ) : secret.isError ? (
          <ErrorState error={secret.error} retry={() => void secret.refetch()} />
        ) : (
          <>
            <div className="secret-row">
              <code data-testid="webhook-secret">{secret.data.secret}</code>
              <CopyButton value={secret.data.secret} />
              <button type="button" className="btn small" onClick={() => setShown(false)}>
                Hide
              </button>
            </div>
            {secret.data.previous && (
              <p className="notice" data-testid="previous-secret">
                The previous secret still signs webhooks (next to the new one) until <strong>{when(secret.data.previousExpiresAt)}</strong>. Update your
                receivers before then.
              </p>
            )}
          </>
        )}
      </Card>
      <Card title="Rotate">
        <p className="muted">
          A new secret is made at once. The old one stays valid for 24 hours, and every webhook is signed with both meanwhile, so receivers can switch without
          missing one.
        </p>
        <ConfirmButton
          className="btn danger"
          disabled={rotate.isPending}
          confirm="Rotate the webhook signing secret? The current one stays valid for 24 hours."
          onConfirm={() => rotate.mutate()}
        >
          {rotate.isPending ? 'Rotating…' : 'Rotate secret'}
        </ConfirmButton>
        <FormError error={rotate.error} />
      </Card>
    </>
  );
}
