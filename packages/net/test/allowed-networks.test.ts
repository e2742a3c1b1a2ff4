import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SafeFetchError } from '../src/errors.ts';
import { createSafeFetch } from '../src/safe-fetch.ts';
import { parseAllowedNetworks, parseListenAddress } from '../src/networks.ts';
import { checkAddressWithPolicy, validatePublicHttpsUrl } from '../src/url-policy.ts';
import { createFakeLookup } from './helpers/fake-dns.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { createTestCertificates, type TestCertificates } from './helpers/test-ca.ts';

// CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: an operator opens its own networks (a webhook receiver
// inside the farm) and nothing else.

describe('parseAllowedNetworks', () => {
  it('reads CIDR ranges and bare addresses, comma- or space-separated', () => {
    const nets = parseAllowedNetworks(' 10.20.0.0/16, fd00::/8 192.168.7.9');
    expect(nets.rules).toHaveLength(3);
    expect(nets.check('10.20.255.1', 'ipv4')).toBe(true);
    expect(nets.check('fd00::1', 'ipv6')).toBe(true);
    // A bare address is its /32.
    expect(nets.check('192.168.7.9', 'ipv4')).toBe(true);
    expect(nets.check('192.168.7.10', 'ipv4')).toBe(false);
    expect(parseAllowedNetworks(undefined).rules).toEqual([]);
    expect(parseAllowedNetworks('').rules).toEqual([]);
  });

  it('names the entry that does not parse', () => {
    expect(() => parseAllowedNetworks('10.0.0.0/8,10.1.0.0/33')).toThrow(/"10\.1\.0\.0\/33" is not a network in CIDR notation/);
    expect(() => parseAllowedNetworks('hooks.internal')).toThrow(/"hooks\.internal"/);
  });
});

describe('an address policy with the operator networks', () => {
  const policy = { allowedNetworks: parseAllowedNetworks('10.20.0.0/16,fd00:1::/32') };

  it('accepts addresses inside them, the IPv4-mapped form too', () => {
    for (const address of ['10.20.3.4', '::ffff:10.20.3.4', 'fd00:1::5']) expect(checkAddressWithPolicy(address, policy).ok).toBe(true);
  });

  it('still refuses every other non-public address: the rest of 10/8, loopback, link-local metadata, other ULAs', () => {
    for (const address of ['10.21.0.1', '127.0.0.1', '169.254.169.254', '192.168.1.1', 'fd00:2::1', '::1']) {
      expect(checkAddressWithPolicy(address, policy).ok).toBe(false);
    }
  });

  it('judges a host name by what it resolves to: an internal name into the list passes, one outside is refused', async () => {
    const lookup = createFakeLookup({ 'hooks.farm.internal': [{ address: '10.20.0.7', family: 4 }], receiver: [{ address: '10.20.0.8', family: 4 }] });
    expect((await validatePublicHttpsUrl('https://hooks.farm.internal/h', { ...policy, lookup })).ok).toBe(true);
    expect((await validatePublicHttpsUrl('https://receiver/h', { ...policy, lookup })).ok).toBe(true);
    const outside = await validatePublicHttpsUrl('https://private.example.com/h', { ...policy, lookup });
    expect(outside).toMatchObject({ ok: false, code: 'blocked_address' });
    // Without the list, the same internal name is refused by its name alone.
    expect(await validatePublicHttpsUrl('https://hooks.farm.internal/h', { lookup })).toMatchObject({ ok: false, code: 'blocked_address' });
  });
});

describe('safeFetch with an operator network, against a real HTTPS receiver', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver(certs, (_req, res) => res.end('delivered'));
  });
  afterAll(async () => {
    await receiver?.close();
    certs?.cleanup();
  });

  it('reaches a receiver on a listed address (loopback stands for the farm network here), and only there', async () => {
    const listed = createSafeFetch({ allowedNetworks: parseAllowedNetworks('127.0.0.1/32'), ca: certs.ca });
    const unlisted = createSafeFetch({ allowedNetworks: parseAllowedNetworks('127.0.0.2/32'), ca: certs.ca });
    try {
      const res = await listed(`https://127.0.0.1:${receiver.port}/hook`, { method: 'POST', body: '{}' });
      expect(await res.text()).toBe('delivered');
      const before = receiver.connections;
      const err = await unlisted(`https://127.0.0.1:${receiver.port}/hook`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SafeFetchError);
      expect((err as SafeFetchError).code).toBe('blocked_address');
      // Refused before connecting.
      expect(receiver.connections).toBe(before);
    } finally {
      await listed.close();
      await unlisted.close();
    }
  });
});

describe('parseListenAddress (CAPTIONFARM_METRICS_LISTEN, CAPTIONFARM_AGENT_HEALTH_LISTEN)', () => {
  it.each([
    ['0.0.0.0:8081', { host: '0.0.0.0', port: 8081 }],
    ['[::1]:9100', { host: '::1', port: 9100 }],
    ['[::ffff:10.0.0.1]:80', { host: '::ffff:10.0.0.1', port: 80 }],
    ['metrics.local:65535', { host: 'metrics.local', port: 65535 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
  ])('%s', (value, wanted) => {
    expect(parseListenAddress(value)).toEqual(wanted);
  });

  it.each(['8081', ':8081', 'host:', 'host:65536', 'host:123456', '::1:9100', 'a b:80', '[::1:80', 'host:80x'])('refuses %j', (value) => {
    expect(parseListenAddress(value)).toBeNull();
  });
});
