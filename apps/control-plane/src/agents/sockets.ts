import type { WebSocket } from 'ws';
import type { ClusterBus } from '../cluster-bus.ts';

/** The close code an agent's socket gets when its token is revoked (4401 is "authentication required"). */
export const TOKEN_REVOKED_CLOSE = 4403;

/**
 * The open agent websockets by the token they authenticated with, so that revoking a token closes
 * its sockets on every control plane of the farm: here at once, on the others through the cluster
 * bus. A bus message lost while a listener was down is caught up on its reconnect: each control
 * plane asks which of its sockets' tokens are revoked. (Calls on a socket not closed yet are
 * refused anyway: agents/router.ts asks for the token on each call.)
 */
export function createAgentSockets(opts: {
  bus: ClusterBus;
  revokedAmong: (tokenIds: string[]) => Promise<string[]>;
  log: (msg: string, err?: unknown) => void;
}) {
  const byToken = new Map<string, Set<WebSocket>>();

  function closeLocal(tokenId: string): void {
    for (const ws of byToken.get(tokenId) ?? []) {
      ws.close(TOKEN_REVOKED_CLOSE, 'agent token revoked');
      // A client that never answers the close frame is cut anyway.
      setTimeout(() => ws.terminate(), 1000).unref();
    }
    byToken.delete(tokenId);
  }

  opts.bus.onMessage((m) => {
    if ('revokedTokenId' in m) closeLocal(m.revokedTokenId);
    else if ('reconnected' in m)
      opts.revokedAmong([...byToken.keys()]).then(
        (ids) => ids.forEach(closeLocal),
        (err: unknown) => opts.log('checking agent sockets for revoked tokens failed', err),
      );
  });

  return {
    /** `ws` authenticated with `tokenId`. */
    add(tokenId: string, ws: WebSocket): void {
      const set = byToken.get(tokenId) ?? new Set();
      set.add(ws);
      byToken.set(tokenId, set);
      ws.once('close', () => {
        set.delete(ws);
        if (set.size === 0 && byToken.get(tokenId) === set) byToken.delete(tokenId);
      });
    },
    /** `tokenId` was revoked: its sockets close, here and on every other control plane. */
    revoked(tokenId: string): void {
      closeLocal(tokenId);
      opts.bus.publish({ revokedTokenId: tokenId });
    },
  };
}
