import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AuthFailureLimiter } from '../http/auth-failures.ts';
import type { ClientAddress } from '../http/client-address.ts';
import type { AgentPresence } from './presence.ts';
import type { AgentRouter } from './router.ts';
import type { createAgentSockets } from './sockets.ts';

export interface AgentSocketServerDeps {
  server: Server;
  router: AgentRouter;
  authenticate: (token: string) => Promise<{ tokenId: string } | null>;
  presence: AgentPresence;
  sockets: ReturnType<typeof createAgentSockets>;
  authFailures: AuthFailureLimiter;
  clientAddress: ClientAddress;
  /** Open agent websockets at most (config.maxAgentConnections). */
  maxConnections: number;
  /** A socket must authenticate within this (config.agentAuthSeconds). */
  authSeconds: number;
  log: (msg: string, extra?: unknown) => void;
}

/** The 503 an upgrade gets when the server holds its most agent sockets. */
function refuseUpgrade(socket: Duplex, retryAfter: number): void {
  socket.end(`HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${retryAfter}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * Agents: tRPC over a websocket at /agent on the HTTP server, authenticated by
 * connectionParams.token. A socket that has not authenticated within `authSeconds` is closed
 * (4401), at most `maxConnections` are open, and at most a quarter of them may be still
 * unauthenticated, so strangers cannot crowd out agents. Refusals answer the upgrade with a plain
 * HTTP status (503). A wrong token from an address past its failures for the minute closes the
 * socket at once (4429); a valid token connects whatever its address did.
 */
export function attachAgentSocketServer(d: AgentSocketServerDeps): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const unauthenticated = new Set<WebSocket>();
  const maxUnauthenticated = Math.max(1, Math.floor(d.maxConnections / 4));
  d.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (req.url?.split('?')[0] !== '/agent') {
      socket.destroy();
      return;
    }
    if (wss.clients.size >= d.maxConnections || unauthenticated.size >= maxUnauthenticated) return refuseUpgrade(socket, 5);
    wss.handleUpgrade(req, socket, head, (ws) => {
      unauthenticated.add(ws);
      const deadline = setTimeout(() => {
        if (!unauthenticated.has(ws)) return;
        ws.close(4401, 'authentication required');
        // A client that never answers the close frame is cut anyway.
        setTimeout(() => ws.terminate(), 1000).unref();
      }, d.authSeconds * 1000);
      deadline.unref();
      ws.once('close', () => {
        clearTimeout(deadline);
        unauthenticated.delete(ws);
        d.presence.closed(ws);
      });
      wss.emit('connection', ws, req);
    });
  });
  const handler = applyWSSHandler({
    wss,
    router: d.router,
    createContext: async ({ req, res: ws, info }) => {
      const token = info.connectionParams?.token;
      const auth = typeof token === 'string' ? await d.authenticate(token) : null;
      if (auth) {
        unauthenticated.delete(ws);
        d.sockets.add(auth.tokenId, ws);
      } else if (token !== undefined) {
        const answer = d.authFailures.refuse(
          d.clientAddress(req),
          { kind: 'agent-token', reason: 'unknown or revoked', path: '/agent' },
          'unknown agent token',
        );
        if (answer.code === 'rate_limited') ws.close(4429, 'too many failed authentications from this address');
      }
      return { tokenId: auth?.tokenId ?? null, conn: ws };
    },
    onError: ({ error }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') d.log('agent procedure failed', error.cause ?? error);
    },
    keepAlive: { enabled: true, pingMs: 10_000, pongWaitMs: 5_000 },
  });
  return {
    close() {
      handler.broadcastReconnectNotification();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
