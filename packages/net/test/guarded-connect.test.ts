import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { buildConnector } from 'undici';
import { SafeFetchError } from '../src/errors.ts';
import { createGuardedLookup, guardConnector } from '../src/safe-fetch.ts';
import { createFakeLookup } from './helpers/fake-dns.ts';

// Unit tests of the two layers below safeFetch's URL check, for paths the URL check cannot
// exercise: undici handing the connector an IP literal (net.connect skips `lookup` for
// those), and a socket that ends up connected to a non-public address anyway.

function fakeSocket(remoteAddress: string | undefined): Socket & { destroyed: boolean } {
  const s = new EventEmitter() as unknown as Socket & { destroyed: boolean };
  Object.assign(s, { remoteAddress, destroyed: false, destroy: () => Object.assign(s, { destroyed: true }) });
  return s;
}

function run(connector: buildConnector.connector, hostname: string): Promise<{ err: Error | null; socket: Socket | null }> {
  return new Promise((resolve) => {
    connector({ hostname, protocol: 'https:', port: '443' }, (err, socket) => resolve({ err, socket }));
  });
}

describe('guardConnector', () => {
  it.each(['127.0.0.1', '0.0.0.0', '::1', '::ffff:7f00:1', '169.254.169.254', '10.1.1.1', 'fd00::1'])(
    'refuses the IP literal %s without calling the base connector',
    async (hostname) => {
      let called = false;
      const guarded = guardConnector(() => {
        called = true;
      }, {});
      const { err } = await run(guarded, hostname);
      expect(err).toBeInstanceOf(SafeFetchError);
      expect((err as SafeFetchError).code).toBe('blocked_address');
      expect(called).toBe(false);
    },
  );

  it('destroys a socket that connected to a non-public address, whatever the path', async () => {
    const socket = fakeSocket('127.0.0.1');
    const guarded = guardConnector((_opts, cb) => cb(null, socket), {});
    const { err, socket: got } = await run(guarded, 'public.example.com');
    expect((err as SafeFetchError).code).toBe('blocked_address');
    expect(got).toBeNull();
    expect(socket.destroyed).toBe(true);
  });

  it('refuses a socket without a remote address', async () => {
    const guarded = guardConnector((_opts, cb) => cb(null, fakeSocket(undefined)), {});
    expect((await run(guarded, 'public.example.com')).err).toBeInstanceOf(SafeFetchError);
  });

  it('passes a socket connected to a public address, and loopback only in test mode', async () => {
    const pub = fakeSocket('93.184.216.34');
    expect(
      (
        await run(
          guardConnector((_o, cb) => cb(null, pub), {}),
          'public.example.com',
        )
      ).socket,
    ).toBe(pub);
    const loop = fakeSocket('127.0.0.1');
    const testMode = guardConnector((_o, cb) => cb(null, loop), { allowLoopbackForTests: true });
    expect((await run(testMode, 'receiver.test')).socket).toBe(loop);
  });

  it('passes connect errors through', async () => {
    const boom = new Error('ECONNREFUSED');
    const guarded = guardConnector((_o, cb) => cb(boom, null), {});
    expect((await run(guarded, 'public.example.com')).err).toBe(boom);
  });
});

describe('createGuardedLookup', () => {
  type Answer = { err: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined };
  const call = (
    lookup: ReturnType<typeof createGuardedLookup>,
    host: string,
    options: Parameters<ReturnType<typeof createGuardedLookup>>[1],
  ): Promise<Answer> => new Promise((resolve) => lookup(host, options, (err, address, family) => resolve({ err, address, family })));

  it('answers all:true calls (autoSelectFamily) with every checked address', async () => {
    const lookup = createGuardedLookup(createFakeLookup(), {});
    const answer = await call(lookup, 'public.example.com', { all: true });
    expect(answer.err).toBeNull();
    expect(answer.address).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('answers single-address calls and honours the family', async () => {
    const lookup = createGuardedLookup(
      createFakeLookup({
        'dual.example.com': [
          { address: '2606:4700::1', family: 6 },
          { address: '1.1.1.1', family: 4 },
        ],
      }),
      {},
    );
    expect(await call(lookup, 'dual.example.com', {})).toMatchObject({ err: null, address: '2606:4700::1', family: 6 });
    expect(await call(lookup, 'dual.example.com', { family: 4 })).toMatchObject({ err: null, address: '1.1.1.1', family: 4 });
    const v4only = await call(lookup, 'public.example.com', { family: 6 });
    expect(v4only.err?.code).toBe('ENOTFOUND');
  });

  it('refuses the whole answer when any address is non-public, even of the other family', async () => {
    const lookup = createGuardedLookup(
      createFakeLookup({
        'sneaky.example.com': [
          { address: '1.1.1.1', family: 4 },
          { address: '::1', family: 6 },
        ],
      }),
      {},
    );
    const answer = await call(lookup, 'sneaky.example.com', { family: 4 });
    expect((answer.err as SafeFetchError).code).toBe('blocked_address');
  });

  it('passes resolver errors through', async () => {
    const lookup = createGuardedLookup(createFakeLookup(), {});
    expect((await call(lookup, 'nx.example.com', { all: true })).err?.code).toBe('ENOTFOUND');
  });
});
