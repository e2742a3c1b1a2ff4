import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type AgentTokenView, type NodeView } from '../../api.ts';
import { ago, shortId, when } from '../../format.ts';
import { Card, ConfirmButton, Empty, FormError, PageHeader, QueryRows, Table } from '../../ui.tsx';

function capabilityList(c: NodeView['capabilities']): string[] {
  const slots = c.maxConcurrentJobs;
  return [c.gpu ? 'GPU' : 'CPU only', c.nvenc ? 'NVENC' : 'x264', c.cudaWhisper ? 'CUDA whisper' : 'CPU whisper', `${slots} slot${slots === 1 ? '' : 's'}`];
}

export function NodesPage() {
  const qc = useQueryClient();
  const nodes = useQuery({ queryKey: ['admin', 'nodes'], queryFn: () => api<{ nodes: NodeView[] }>('GET', '/admin/nodes'), refetchInterval: 2000 });
  const toggle = useMutation({
    mutationFn: (n: NodeView) => api('POST', `/admin/nodes/${encodeURIComponent(n.id)}/${n.drain ? 'undrain' : 'drain'}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['admin', 'nodes'] }),
  });
  return (
    <>
      <PageHeader title="Nodes" subtitle="Agents connected to this control plane. Draining finishes current jobs and leases no new ones." />
      <Card>
        <QueryRows
          query={nodes}
          rows={(d) => d.nodes}
          retry
          empty={<Empty title="No agents yet">Create a token with “captionfarm admin agents token create” and start an agent with it.</Empty>}
        >
          {(rows) => (
            <Table columns={['Node', 'State', 'Capabilities', 'Current jobs', 'Last heartbeat']} actions>
              {rows.map((n) => (
                <tr key={n.id} data-node={n.name}>
                  <td>
                    <strong>{n.name}</strong>
                    <div className="muted small">
                      <code>{shortId(n.id)}</code>
                    </div>
                  </td>
                  <td>
                    <span className={`badge ${n.drain ? 'queued' : n.state === 'online' ? 'succeeded' : 'cancelled'}`} data-testid="node-state">
                      {n.state}
                    </span>
                  </td>
                  <td>{capabilityList(n.capabilities).join(' · ')}</td>
                  <td>
                    {n.currentJobs.length === 0 ? (
                      <span className="muted">idle</span>
                    ) : (
                      n.currentJobs.map((j) => (
                        <div key={j.id}>
                          <code>{shortId(j.id)}</code> {j.phase}
                          {j.percent != null ? ` ${j.percent}%` : ''}
                        </div>
                      ))
                    )}
                  </td>
                  <td>{ago(n.lastHeartbeatAt)}</td>
                  <td className="right">
                    <button type="button" className={`btn small ${n.drain ? '' : 'danger'}`} disabled={toggle.isPending} onClick={() => toggle.mutate(n)}>
                      {n.drain ? 'Undrain' : 'Drain'}
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </QueryRows>
        <FormError error={toggle.error} />
      </Card>
      <AgentTokens />
    </>
  );
}

/** The tokens agents connect with; revoking one disconnects its agents and queues their jobs again. */
function AgentTokens() {
  const qc = useQueryClient();
  const tokens = useQuery({
    queryKey: ['admin', 'agent-tokens'],
    queryFn: () => api<{ tokens: AgentTokenView[] }>('GET', '/admin/agents/tokens'),
    refetchInterval: 5000,
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api('POST', `/admin/agents/tokens/${encodeURIComponent(id)}/revoke`),
    onSuccess: () => Promise.all([qc.invalidateQueries({ queryKey: ['admin', 'agent-tokens'] }), qc.invalidateQueries({ queryKey: ['admin', 'nodes'] })]),
  });
  return (
    <Card title="Agent tokens">
      <QueryRows
        query={tokens}
        rows={(d) => d.tokens}
        retry
        empty={<Empty title="No agent tokens">Create one with “captionfarm admin agents token create”.</Empty>}
      >
        {(rows) => (
          <Table columns={['Name', 'Prefix', 'Created', 'Nodes']} actions>
            {rows.map((t) => (
              <tr key={t.id} data-token-prefix={t.prefix}>
                <td>
                  {t.name ?? <span className="muted">unnamed</span>}
                  <div className="muted small">
                    <code>{shortId(t.id)}</code>
                  </div>
                </td>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>{when(t.createdAt)}</td>
                <td>{t.nodes.length === 0 ? <span className="muted">none</span> : t.nodes.map((n) => n.name).join(', ')}</td>
                <td className="right">
                  {t.revokedAt ? (
                    <span className="badge cancelled" data-testid="token-revoked">
                      Revoked {when(t.revokedAt)}
                    </span>
                  ) : (
                    <ConfirmButton
                      className="btn small danger"
                      disabled={revoke.isPending}
                      confirm={`Revoke ${t.name ?? t.prefix}? Its agents are disconnected at once and their jobs go back to the queue.`}
                      onConfirm={() => revoke.mutate(t.id)}
                    >
                      Revoke
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </QueryRows>
      <FormError error={revoke.error} />
    </Card>
  );
}
