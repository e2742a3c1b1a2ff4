/**
 * Which websocket connections each agent node speaks through. When the last one closes, the node
 * is declared gone after `graceMs` unless it speaks again meanwhile (wsLink reconnects in 0.25-5 s
 * after a blip and re-sends its subscription, which marks it seen).
 */
export function createAgentPresence(opts: { graceMs: number; onGone: (nodeId: string) => void }) {
  const nodesOf = new Map<object, Set<string>>();
  const connsOf = new Map<string, Set<object>>();
  const pending = new Map<string, NodeJS.Timeout>();
  let stopped = false;
  return {
    /** A call from `nodeId` arrived on `conn`. */
    seen(conn: object, nodeId: string): void {
      const timer = pending.get(nodeId);
      if (timer) {
        clearTimeout(timer);
        pending.delete(nodeId);
      }
      if (nodesOf.get(conn)?.has(nodeId)) return;
      if (!nodesOf.has(conn)) nodesOf.set(conn, new Set());
      nodesOf.get(conn)!.add(nodeId);
      if (!connsOf.has(nodeId)) connsOf.set(nodeId, new Set());
      connsOf.get(nodeId)!.add(conn);
    },
    /** `conn` closed. */
    closed(conn: object): void {
      // Our own shutdown closes every socket: that says nothing about the agents.
      if (stopped) return;
      for (const nodeId of nodesOf.get(conn) ?? []) {
        const conns = connsOf.get(nodeId);
        conns?.delete(conn);
        if (conns && conns.size > 0) continue;
        connsOf.delete(nodeId);
        clearTimeout(pending.get(nodeId));
        const timer = setTimeout(() => {
          pending.delete(nodeId);
          opts.onGone(nodeId);
        }, opts.graceMs);
        timer.unref();
        pending.set(nodeId, timer);
      }
      nodesOf.delete(conn);
    },
    close(): void {
      stopped = true;
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    },
  };
}
export type AgentPresence = ReturnType<typeof createAgentPresence>;
