import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BaseUrl {
  /** The URL clients reach this control plane at; '' until it listens, unless a public URL is configured. */
  get(): string;
  /** The server listens: without a public URL, its address becomes the base URL (loopback for a wildcard address). */
  listening(server: Server): void;
}

export function createBaseUrl(publicUrl: string | undefined): BaseUrl {
  let url = publicUrl?.replace(/\/+$/, '') ?? '';
  return {
    get: () => url,
    listening(server) {
      if (publicUrl) return;
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      url = `http://${h === '0.0.0.0' || h === '[::]' ? '127.0.0.1' : h}:${addr.port}`;
    },
  };
}

export interface Lifecycle {
  /** Listens, then runs `afterListen` in order; resolves to the base URL. */
  listen(port: number, host: string): Promise<string>;
  /** Closes `beforeClose` (one after the other, without waiting), the server (its connections cut), then `afterClose` in order. */
  close(): Promise<void>;
}

/** Listen and close of the HTTP server and of what runs beside it, each in a stated order. */
export function createLifecycle(d: {
  server: Server;
  baseUrl: BaseUrl;
  afterListen: ReadonlyArray<() => unknown>;
  beforeClose: ReadonlyArray<{ close(): void }>;
  afterClose: ReadonlyArray<{ close(): Promise<unknown> }>;
}): Lifecycle {
  const { server } = d;
  return {
    async listen(port, host) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      d.baseUrl.listening(server);
      for (const start of d.afterListen) await start();
      return d.baseUrl.get();
    },
    async close() {
      for (const part of d.beforeClose) part.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      for (const part of d.afterClose) await part.close();
    },
  };
}
