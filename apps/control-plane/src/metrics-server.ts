import { createServer } from 'node:http';
import express, { type RequestHandler } from 'express';

export interface MetricsServer {
  /** Listens at the configured address (nothing without one). */
  listen(): Promise<void>;
  /** Closes it, if it listens. */
  close(): Promise<void>;
}

/**
 * CAPTIONFARM_METRICS_LISTEN: /metrics alone, without the admin token, on an address the operator
 * keeps private. Without the setting, no server (listen and close do nothing).
 */
export function createMetricsServer(address: { host: string; port: number } | undefined, serveMetrics: RequestHandler): MetricsServer {
  if (!address) return { listen: async () => {}, close: async () => {} };
  const metricsApp = express();
  metricsApp.disable('x-powered-by');
  metricsApp.get('/metrics', serveMetrics);
  metricsApp.use((_req, res) => res.status(404).end());
  const server = createServer(metricsApp);
  return {
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(address.port, address.host, () => resolve());
      });
    },
    async close() {
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
