import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SafeFetchError } from '../src/errors.ts';
import { createSafeFetch, safeFetch, type SafeFetch } from '../src/safe-fetch.ts';
import { createFakeLookup } from './helpers/fake-dns.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { RESOLVING_TO_BLOCKED, SSRF_URLS } from './helpers/ssrf-cases.ts';
import { createTestCertificates, TEST_HOSTNAME, type TestCertificates } from './helpers/test-ca.ts';

let certs: TestCertificates;
let receiver: Receiver;
/** Test setting ON: loopback receivers reachable. */
let testFetch: SafeFetch;
/** Test setting OFF, but the same CA and fake DNS: only the flag differs. */
let strictFetch: SafeFetch;

async function rejection(promise: Promise<unknown>): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(SafeFetchError);
    return err as SafeFetchError;
  }
  throw new Error('expected a rejection');
}

async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  certs = await createTestCertificates();
  receiver = await startReceiver(certs, (_req, res) => res.end('ok'));
  testFetch = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup() });
  strictFetch = createSafeFetch({ ca: certs.ca, lookup: createFakeLookup() });
});

beforeEach(() => {
  receiver.setHandler((_req, res) => res.end('ok'));
});

afterAll(async () => {
  await testFetch?.close();
  await strictFetch?.close();
  await receiver?.close();
  certs?.cleanup();
});

/** Points a trick URL at the live receiver's port, keeping the host text exactly as written. */
const withPort = (url: string): string => url.replace(/^(https:\/\/[^/]*)/, `$1:${receiver.port}`);

describe('safeFetch against a real HTTPS receiver (test setting ON)', () => {
  it('fetches through the (simulated) DNS name and the test CA', async () => {
    receiver.setHandler((req, res) => res.end(`hello ${req.method} ${req.body}`));
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/x`, { method: 'POST', body: 'hi' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello POST hi');
    expect(res.url).toBe(`https://${TEST_HOSTNAME}:${receiver.port}/x`);
  });

  it('reaches a loopback IP literal only because the test setting is on', async () => {
    receiver.setHandler((_req, res) => res.end('literal'));
    const res = await testFetch(`https://127.0.0.1:${receiver.port}/`);
    expect(await res.text()).toBe('literal');
  });

  it('returns a 3xx as is and never follows it', async () => {
    const before = receiver.requests.length;
    receiver.setHandler((_req, res) => {
      res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
    });
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://169.254.169.254/latest/meta-data/');
    expect(receiver.requests.length).toBe(before + 1);

    receiver.setHandler((_req, res) => res.writeHead(307, { location: '/elsewhere' }).end());
    const again = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/redirect`, { method: 'POST', body: '{}' });
    expect(again.status).toBe(307);
    expect(receiver.requests.length).toBe(before + 2);
    expect(receiver.requests.some((r) => r.url === '/elsewhere')).toBe(false);
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    receiver.setHandler((_req, res) => {
      res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
      res.end(Buffer.alloc(2 * 1024 * 1024));
    });
    const err = await rejection(testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/big`, { maxBytes: 1024 * 1024 }));
    expect(err.code).toBe('too_large');
  });

  it('aborts a chunked body once it passes the cap and closes the connection', async () => {
    const closedBefore = receiver.closedSockets;
    let serverSawClose = false;
    receiver.setHandler((_req, res) => {
      res.on('close', () => {
        serverSawClose = true;
      });
      res.writeHead(200); // no content-length: chunked
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk)) {
          /* keep writing until backpressure */
        }
        if (!res.destroyed) res.once('drain', pump);
      };
      pump(); // endless: only the client's abort stops it
    });
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/stream`, { maxBytes: 1024 * 1024 });
    expect(res.status).toBe(200);
    const err = await rejection(res.arrayBuffer());
    expect(err.code).toBe('too_large');
    await waitFor(() => serverSawClose && receiver.closedSockets > closedBefore);
  });

  it('counts decoded bytes (a small gzip body that inflates past the cap)', async () => {
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024));
    receiver.setHandler((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/gz`, { maxBytes: 1024 * 1024 });
    expect((await rejection(res.arrayBuffer())).code).toBe('too_large');
  });

  it('lets a body under the cap through, streamed', async () => {
    receiver.setHandler((_req, res) => res.end(Buffer.alloc(300_000, 7)));
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/ok`, { maxBytes: 300_000 });
    expect((await res.arrayBuffer()).byteLength).toBe(300_000);
  });

  it('times out when headers never come (total deadline)', async () => {
    receiver.setHandler(() => undefined); // never answers
    const err = await rejection(testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/hang`, { timeoutMs: 300 }));
    // The call's own 300 ms deadline ended it, not the instance's headers timeout (30 s by default),
    // which says "The request timed out (...)": the message names the deadline that fired.
    expect([err.code, err.message]).toEqual(['timeout', 'No complete response within 300 ms.']);
  });

  it('times out on the headers timeout of the instance', async () => {
    const f = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup(), headersTimeoutMs: 200 });
    try {
      receiver.setHandler(() => undefined);
      const err = await rejection(f(`https://${TEST_HOSTNAME}:${receiver.port}/hang`, { timeoutMs: 10_000 }));
      expect(err.code).toBe('timeout');
      expect(err.message).toMatch(/^The request timed out \(/); // the headers timeout, not the 10 s deadline
    } finally {
      await f.close();
    }
  });

  it('times out when the body stalls (total deadline and idle body timeout)', async () => {
    receiver.setHandler((_req, res) => {
      res.writeHead(200);
      res.write('partial'); // then silence
    });
    const res = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/stall`, { timeoutMs: 300 });
    expect((await rejection(res.text())).code).toBe('timeout');

    const f = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup(), bodyTimeoutMs: 200 });
    try {
      const res2 = await f(`https://${TEST_HOSTNAME}:${receiver.port}/stall`, { timeoutMs: 10_000 });
      expect((await rejection(res2.text())).code).toBe('timeout');
    } finally {
      await f.close();
    }
  });

  it('times out a connection whose TLS handshake never completes (connect timeout)', async () => {
    const silent = net.createServer(() => undefined); // accepts TCP, never speaks TLS
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as AddressInfo).port;
    const f = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup(), connectTimeoutMs: 200 });
    try {
      const err = await rejection(f(`https://${TEST_HOSTNAME}:${port}/`, { timeoutMs: 10_000 }));
      expect(err.code).toBe('timeout');
    } finally {
      await f.close();
      silent.close();
    }
  });

  it('maps the caller abort to aborted', async () => {
    const controller = new AbortController();
    // Cancelled once the request reached the receiver, which never answers: mid-flight, whatever the load.
    receiver.setHandler(() => controller.abort());
    const err = await rejection(testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/hang`, { signal: controller.signal, timeoutMs: 10_000 }));
    expect(err.code).toBe('aborted');
    expect((await rejection(testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/`, { signal: AbortSignal.abort() }))).code).toBe('aborted');
  });

  it('reports TLS failures (certificate not trusted) as network errors', async () => {
    const noCa = createSafeFetch({ allowLoopbackForTests: true, lookup: createFakeLookup() });
    try {
      const err = await rejection(noCa(`https://${TEST_HOSTNAME}:${receiver.port}/`));
      expect(err.code).toBe('network');
    } finally {
      await noCa.close();
    }
  });

  it('still blocks every non-loopback private range with the test setting ON', async () => {
    for (const name of ['private.example.com', 'metadata.example.com', 'zero.example.com', 'ula.example.com', 'cgnat.example.com']) {
      const err = await rejection(testFetch(`https://${name}:${receiver.port}/`));
      expect(err.code, name).toBe('blocked_address');
    }
    for (const url of ['https://10.0.0.1/', 'https://169.254.169.254/', 'https://0.0.0.0/', 'https://[fd00::1]/']) {
      expect((await rejection(testFetch(url))).code, url).toBe('blocked_address');
    }
  });
});

describe('safeFetch SSRF defences (test setting OFF)', () => {
  it.each(SSRF_URLS)('%s -> %s, without connecting', async (url, code) => {
    const connections = receiver.connections;
    const target = url.startsWith('https://') && !url.includes('@') && url !== 'https://' ? withPort(url) : url;
    const err = await rejection(strictFetch(target));
    expect(err.code).toBe(code);
    expect(receiver.connections).toBe(connections);
  });

  it.each(RESOLVING_TO_BLOCKED)('refuses %s at connect time (lookup answer checked)', async (name) => {
    const connections = receiver.connections;
    const err = await rejection(strictFetch(`https://${name}:${receiver.port}/`));
    expect(err.code).toBe('blocked_address');
    expect(err.message).toContain(name);
    expect(receiver.connections).toBe(connections);
  });

  it('refuses a name that resolves to 127.0.0.1 even though a receiver listens there', async () => {
    const connections = receiver.connections;
    // Same CA, same DNS as the test-mode instance: only the flag differs.
    const err = await rejection(strictFetch(`https://${TEST_HOSTNAME}:${receiver.port}/`));
    expect(err.code).toBe('blocked_address');
    expect(receiver.connections).toBe(connections);
    const requests = receiver.requests.length;
    const ok = await testFetch(`https://${TEST_HOSTNAME}:${receiver.port}/`);
    expect(await ok.text()).toBe('ok');
    expect(receiver.requests.length).toBe(requests + 1);
  });

  it('is DNS-rebinding safe: the address checked is the one connected to', async () => {
    let answers = 0;
    const rebinding = async (_hostname: string) => {
      answers += 1;
      // First answer (creation-time check) public, every later one loopback.
      return answers === 1 ? [{ address: '93.184.216.34', family: 4 as const }] : [{ address: '127.0.0.1', family: 4 as const }];
    };
    const f = createSafeFetch({ ca: certs.ca, lookup: rebinding });
    try {
      const url = `https://rebind.example.com:${receiver.port}/`;
      await expect(f.validateUrl(url)).resolves.toMatchObject({ ok: true });
      const connections = receiver.connections;
      const err = await rejection(f(url));
      expect(err.code).toBe('blocked_address');
      expect(answers).toBe(2);
      expect(receiver.connections).toBe(connections);
    } finally {
      await f.close();
    }
  });

  it('the default instance refuses loopback and has no test switch', async () => {
    const err = await rejection(safeFetch(`https://127.0.0.1:${receiver.port}/`));
    expect(err.code).toBe('blocked_address');
    expect((await rejection(safeFetch(`https://localhost:${receiver.port}/`))).code).toBe('blocked_address');
    // A per-call option of the same name (e.g. smuggled in from request JSON) does nothing.
    const smuggled = { allowLoopbackForTests: true } as unknown as Parameters<typeof safeFetch>[1];
    expect((await rejection(strictFetch(`https://${TEST_HOSTNAME}:${receiver.port}/`, smuggled))).code).toBe('blocked_address');
    // Only the boolean true enables it (not "true" or 1 from an env string or JSON).
    for (const value of ['true', 1, 'yes']) {
      const f = createSafeFetch({ allowLoopbackForTests: value as unknown as boolean, ca: certs.ca, lookup: createFakeLookup() });
      expect(f.allowsLoopbackForTests).toBe(false);
      expect((await rejection(f(`https://${TEST_HOSTNAME}:${receiver.port}/`))).code).toBe('blocked_address');
      await f.close();
    }
    expect(createSafeFetch().allowsLoopbackForTests).toBe(false);
  });

  it('reports names that do not resolve as dns_failed', async () => {
    expect((await rejection(strictFetch('https://nx.example.com/'))).code).toBe('dns_failed');
  });
});
