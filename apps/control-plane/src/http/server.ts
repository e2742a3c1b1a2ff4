import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpServerDeps {
  /** A connection must start its first request, and a request send its headers, within this (config.headersTimeoutSeconds). */
  headersTimeoutSeconds: number;
  /** Tried first: answers a request it owns and returns true (the built-in store's `/s3`). */
  store: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Tried next: the hot routes, outside Express; false (or `fallback`) hands the request to `app`. */
  hot: (req: IncomingMessage, res: ServerResponse, fallback: () => void) => boolean;
  /** Everything else (http/app.ts). */
  app: Handler;
}

/**
 * The control plane's Node HTTP server: the built-in store, the hot routes and the Express app
 * behind one port, with the server-wide timeouts. The agents' websockets are upgrades on it
 * (agents/socket-server.ts).
 */
export function createHttpServer(d: HttpServerDeps): Server {
  // Server-wide backstops; the tighter limits are per route: JSON bodies have their own total and
  // idle timeouts (config.bodyTotalSeconds/bodyIdleSeconds) and store PUTs an idle timeout.
  // requestTimeout bounds a whole upload (5 GB at 0.5 MB/s takes under 3 h). Given to the
  // constructor: assigned afterwards, Node 20 did not enforce headersTimeout (measured), and it is
  // checked every second instead of every 30 s.
  const server = createServer(
    { connectionsCheckingInterval: 1000, headersTimeout: d.headersTimeoutSeconds * 1000, requestTimeout: 3 * 3600_000, keepAliveTimeout: 5_000 },
    (req, res) => {
      // A request has started: the connection's first-request deadline (below) no longer applies;
      // the request's own limits do.
      req.socket.setTimeout(0);
      if (d.store(req, res)) return;
      if (!d.hot(req, res, () => d.app(req, res))) d.app(req, res);
    },
  );
  // headersTimeout does not cover a connection that never sends a byte (measured on Node 20: held
  // for ever), so a connection must start its first request within the same time.
  server.on('connection', (socket) => socket.setTimeout(d.headersTimeoutSeconds * 1000));
  return server;
}
