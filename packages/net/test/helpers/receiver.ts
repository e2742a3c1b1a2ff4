import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestCertificates } from './test-ca.ts';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse) => unknown;

export interface Receiver {
  port: number;
  server: Server;
  /** Requests whose body arrived completely. */
  requests: ReceivedRequest[];
  /** TCP connections accepted (before TLS): proves a blocked request never connected. */
  connections: number;
  /** Sockets the server saw closed by the client (e.g. after a size-cap abort). */
  closedSockets: number;
  setHandler(handler: Handler): void;
  /** Resolves when `count` requests have arrived, or rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A real HTTPS server on 127.0.0.1:0 with the test certificate. */
export async function startReceiver(certs: TestCertificates, handler: Handler): Promise<Receiver> {
  let current = handler;
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      for (const w of waiters.splice(0)) w();
      Promise.resolve(current(received, res)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  const receiver: Receiver = {
    port: 0,
    server,
    requests,
    connections: 0,
    closedSockets: 0,
    setHandler(h) {
      current = h;
    },
    async waitForRequests(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return requests;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  server.on('connection', (socket) => {
    receiver.connections += 1;
    socket.on('close', () => {
      receiver.closedSockets += 1;
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}
