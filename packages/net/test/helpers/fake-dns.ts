import type { LookupAddress, LookupFn } from '../../src/url-policy.ts';
import { createFakeLookup as createTableLookup, lookupNotFound } from '../../src/testing/fake-lookup.ts';

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

/** Simulated DNS: names used by the tests and what they "resolve" to (see src/testing/fake-lookup.ts). */
export const FAKE_DNS: Record<string, LookupAddress[]> = {
  'receiver.test': [v4('127.0.0.1')],
  'loopback.example.com': [v4('127.0.0.1')],
  'loopback-127-9.example.com': [v4('127.0.0.9')],
  'mixed.example.com': [v4('93.184.216.34'), v4('127.0.0.1')],
  'v6-loopback.example.com': [v6('::1')],
  'mapped-loopback.example.com': [v6('::ffff:127.0.0.1')],
  'metadata.example.com': [v4('169.254.169.254')],
  'private.example.com': [v4('10.0.0.5')],
  'rfc1918-172.example.com': [v4('172.20.1.1')],
  'cgnat.example.com': [v4('100.64.1.1')],
  'zero.example.com': [v4('0.0.0.0')],
  'ula.example.com': [v6('fd00::1')],
  'link-local6.example.com': [v6('fe80::1')],
  'nat64-private.example.com': [v6('64:ff9b::a00:1')],
  'public.example.com': [v4('93.184.216.34')],
  'public6.example.com': [v6('2606:2800:220:1:248:1893:25c8:1946')],
  'empty.example.com': [],
};

export const notFound = lookupNotFound;

/** Lookup over FAKE_DNS (plus `extra`), counting calls per name; behaves like the system resolver. */
export function createFakeLookup(extra: Record<string, LookupAddress[]> = {}): LookupFn & { calls: string[] } {
  return createTableLookup({ ...FAKE_DNS, ...extra });
}
