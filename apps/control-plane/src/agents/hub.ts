import { EventEmitter } from 'node:events';
import type { AgentEvent } from '@captionfarm/contracts';
import type { ClusterBus } from '../cluster-bus.ts';

const KEEP = 200;

/**
 * Per-node event queues for the agents' subscription. Each event gets an increasing id so a
 * reconnecting agent resumes after the last one it saw (tRPC `tracked` + lastEventId).
 *
 * Several control planes: an event goes to this process's queue and, through the cluster bus, to
 * every other one's, so the agent hears it whichever control plane it is connected to (or
 * reconnects to). Ids are microseconds since the epoch (kept increasing), so a lastEventId from
 * one control plane means about the same moment on another.
 */
export function createAgentHub(opts: { bus?: ClusterBus; onlineNodes?: () => Iterable<string> } = {}) {
  let seq = 0;
  const buffers = new Map<string, { id: number; event: AgentEvent }[]>();
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const online = opts.onlineNodes ?? (() => []);

  function local(nodeId: string, event: AgentEvent): void {
    const buf = buffers.get(nodeId) ?? [];
    seq = Math.max(seq + 1, Date.now() * 1000);
    buf.push({ id: seq, event });
    if (buf.length > KEEP) buf.splice(0, buf.length - KEEP);
    buffers.set(nodeId, buf);
    emitter.emit(nodeId);
  }

  opts.bus?.onMessage((m) => {
    // The listener was down (PostgreSQL restarted): a message may be lost; the agents here look for work again.
    if ('reconnected' in m) for (const nodeId of online()) local(nodeId, { type: 'work-available' });
    else if ('revokedTokenId' in m) return;
    else if (m.nodeId) local(m.nodeId, m.event);
    else for (const nodeId of online()) local(nodeId, m.event);
  });

  return {
    /** An event for one node, wherever it is connected. */
    push(nodeId: string, event: AgentEvent): void {
      local(nodeId, event);
      opts.bus?.publish({ nodeId, event });
    },
    /** An event for every online node of the farm. */
    pushOnline(event: AgentEvent): void {
      for (const nodeId of online()) local(nodeId, event);
      opts.bus?.publish({ nodeId: null, event });
    },
    /** Events for a node after `lastId`; resolves as soon as there is at least one (or the signal aborts). */
    async next(nodeId: string, lastId: number, signal: AbortSignal | undefined): Promise<{ id: number; event: AgentEvent }[]> {
      for (;;) {
        const pending = (buffers.get(nodeId) ?? []).filter((e) => e.id > lastId);
        if (pending.length > 0 || signal?.aborted) return pending;
        await new Promise<void>((resolve) => {
          const done = () => {
            emitter.off(nodeId, done);
            signal?.removeEventListener('abort', done);
            resolve();
          };
          emitter.on(nodeId, done);
          signal?.addEventListener('abort', done, { once: true });
        });
      }
    },
    /** The id of the newest event of a node (a fresh subscription starts after it). */
    latest(nodeId: string): number {
      return buffers.get(nodeId)?.at(-1)?.id ?? 0;
    },
  };
}
export type AgentHub = ReturnType<typeof createAgentHub>;
