import { EventEmitter } from 'node:events';
import type { AgentEvent } from '@captionfarm/contracts';

const KEEP = 200;

/**
 * Per-node event queues for the agents' subscription. Each event gets an increasing id so a
 * reconnecting agent resumes after the last one it saw (tRPC `tracked` + lastEventId).
 */
export function createAgentHub() {
  let seq = 0;
  const buffers = new Map<string, { id: number; event: AgentEvent }[]>();
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    push(nodeId: string, event: AgentEvent): void {
      const buf = buffers.get(nodeId) ?? [];
      buf.push({ id: ++seq, event });
      if (buf.length > KEEP) buf.splice(0, buf.length - KEEP);
      buffers.set(nodeId, buf);
      emitter.emit(nodeId);
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
