import type { LookupAddress, LookupFn } from '../url-policy.ts';

/**
 * Test-only resolver over a fixed table, exported as `@captionfarm/net/testing` so every
 * suite simulates DNS the same way. It answers like the system resolver does for names from the
 * hosts file or nss (glibc `files`, measured with `getent ahosts localhost.` on Debian 12): the
 * match is exact and case-insensitive, and a trailing-dot name (`name.example.org.`) is NOT found.
 * That difference is what let trailing-dot hosts skip the creation check (issue 11, item 6), so a
 * fake that strips the dot itself would hide the hole.
 *
 * Keys are host names, or `*.suffix` for every name under `suffix` (not `suffix` itself).
 */
export type FakeDnsTable = Record<string, LookupAddress[]>;

export function lookupNotFound(hostname: string): Error {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
}

export function createFakeLookup(table: FakeDnsTable): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const entries = Object.entries(table).map(([k, v]) => [k.toLowerCase(), v] as const);
  const fn = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const name = hostname.toLowerCase();
    for (const [key, addresses] of entries) {
      if (key === name || (key.startsWith('*.') && name.endsWith(key.slice(1)))) return addresses;
    }
    throw lookupNotFound(hostname);
  };
  return Object.assign(fn, { calls });
}
