import dns from 'node:dns';
import type { BlockList } from 'node:net';
import { SafeFetchError, type SafeFetchErrorCode } from './errors.ts';
import { checkAddress, isIpLiteral, type AddressCheck } from './ip-address.ts';
import { inNetworks } from './networks.ts';

/** One resolved address, as `dns.lookup(host, { all: true })` returns it. */
export interface LookupAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to all its addresses. Injectable so tests can simulate DNS (a name
 * that resolves to 127.0.0.1, a rebinding name that changes its answer). Whatever it returns
 * is checked: an injected lookup can never make a non-public address acceptable.
 */
export type LookupFn = (hostname: string) => Promise<LookupAddress[]>;

export const defaultLookup: LookupFn = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface AddressPolicy {
  /**
   * TEST ONLY. Lets loopback addresses (127.0.0.0/8, ::1, their IPv4-mapped forms) and the
   * `localhost` names through, so test suites can run HTTPS receivers on loopback. Private,
   * link-local and every other non-public range stay blocked. Off by default; see README.
   */
  allowLoopbackForTests?: boolean;
  /**
   * The operator's private networks (parseAllowedNetworks: CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS),
   * for a self-hosted farm whose webhook receivers or video sources live on its own network. An
   * address inside one is accepted whatever its range; every other non-public address stays
   * refused. With any network listed, host names are judged by their addresses only (an internal
   * name such as `hooks.svc.cluster.local` or `receiver` is allowed to resolve into the list).
   */
  allowedNetworks?: BlockList | undefined;
}

export type UrlCheck =
  | {
      ok: true;
      url: URL;
      /** Addresses the host resolved to (or the IP literal), when a lookup was done. */
      addresses: string[];
    }
  | { ok: false; code: SafeFetchErrorCode; reason: string };

/** Applies the policy to one address (checkAddress plus the test-only loopback exception). */
export function checkAddressWithPolicy(address: string, policy: AddressPolicy = {}): AddressCheck {
  const result = checkAddress(address);
  if (!result.ok && result.range === 'loopback' && policy.allowLoopbackForTests === true) {
    return { ok: true, address, family: address.includes(':') ? 6 : 4 };
  }
  if (!result.ok && result.range !== 'not-an-ip' && inNetworks(address, policy.allowedNetworks)) {
    return { ok: true, address, family: address.includes(':') ? 6 : 4 };
  }
  return result;
}

// Names that never resolve to a public service: RFC 6761/6762/8375 special-use names and the
// ICANN private-use `.internal` TLD. `localhost` is also resolved locally by many resolvers
// without DNS, so it is refused by name, not only by its address.
const LOCAL_NAMES = ['localhost', 'local', 'internal', 'home.arpa', 'localdomain', 'invalid'];

function hostnameProblem(name: string, policy: AddressPolicy): string | null {
  const isLocalhost = name === 'localhost' || name.endsWith('.localhost');
  if (isLocalhost && policy.allowLoopbackForTests === true) return null;
  // The operator's networks: the name's addresses decide (checked on lookup and on connect).
  if (policy.allowedNetworks && policy.allowedNetworks.rules.length > 0) return null;
  for (const suffix of LOCAL_NAMES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) {
      return `${name} is a local-only host name; use a public host name`;
    }
  }
  if (!name.includes('.')) {
    return `${name} is a single-label host name (resolved through local search domains); use a fully-qualified public host name`;
  }
  return null;
}

function fail(code: SafeFetchErrorCode, reason: string): UrlCheck {
  return { ok: false, code, reason };
}

/**
 * Every check that needs no DNS: parse (WHATWG, which canonicalises `0x7f.1`, `2130706433`,
 * `0177.0.0.1`, `127.1`, `127.0.0.1.` and IDNA tricks to one form), https only, no
 * credentials, IP literals judged directly, local-only names refused.
 */
export function validatePublicHttpsUrlSyntax(input: string | URL, policy: AddressPolicy = {}): UrlCheck {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return fail('invalid_url', 'The URL does not parse; give an absolute https:// URL.');
  }
  if (url.protocol !== 'https:') {
    return fail('not_https', `Only https:// URLs are allowed, not ${url.protocol}//.`);
  }
  if (url.username !== '' || url.password !== '') {
    return fail('credentials_in_url', 'The URL contains credentials (user:password@); remove them.');
  }
  const host = url.hostname;
  if (host === '') return fail('invalid_url', 'The URL has no host.');
  if (isIpLiteral(host)) {
    const result = checkAddressWithPolicy(host, policy);
    if (!result.ok) return fail('blocked_address', `${result.reason}; use a public address.`);
    return { ok: true, url, addresses: [host.replace(/^\[|\]$/g, '')] };
  }
  const name = host.replace(/\.+$/, '');
  if (name === '') return fail('invalid_url', 'The URL has no host.');
  // The WHATWG parser turns every numeric form into dotted IPv4, but a trailing dot could in
  // principle hide one from isIpLiteral above; judge the stripped form too.
  if (isIpLiteral(name)) {
    const result = checkAddressWithPolicy(name, policy);
    if (!result.ok) return fail('blocked_address', `${result.reason}; use a public address.`);
    return { ok: true, url, addresses: [name] };
  }
  const problem = hostnameProblem(name, policy);
  if (problem !== null) return fail('blocked_address', `${problem}.`);
  return { ok: true, url, addresses: [] };
}

/**
 * Judges every address of a lookup. All must be public: a name with one private address among
 * public ones is refused (the connection could land on any of them).
 */
export function checkResolvedAddresses(hostname: string, addresses: readonly LookupAddress[], policy: AddressPolicy): SafeFetchError | null {
  if (addresses.length === 0) {
    return new SafeFetchError('dns_failed', `${hostname} has no addresses.`);
  }
  for (const { address } of addresses) {
    const result = checkAddressWithPolicy(address, policy);
    if (!result.ok) {
      // The address itself is never echoed: a client must not learn what internal names resolve
      // to (an internal-DNS oracle); operators see it in the logs of the fetch, not in the API.
      return new SafeFetchError('blocked_address', `${hostname} resolves to a non-public address; use a host whose addresses are all public.`);
    }
  }
  return null;
}

export interface ValidateUrlOptions extends AddressPolicy {
  /** Resolver; defaults to the system resolver (dns.lookup, all addresses). */
  lookup?: LookupFn;
  /** Gives up on a slow resolver after this long (default 5000 ms) with `dns_failed`. */
  dnsTimeoutMs?: number;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, hostname: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SafeFetchError('dns_failed', `Resolving ${hostname} took longer than ${ms} ms.`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creation-time check of a URL we will later fetch (webhookUrl, videoUrl): the syntax checks
 * plus a DNS lookup, refusing names with any non-public address. Returns a reason fit for an
 * API error message. This is advisory for the time of the request: DNS can change, so
 * safeFetch checks again, on the address it actually connects to.
 */
export async function validatePublicHttpsUrl(input: string | URL, options: ValidateUrlOptions = {}): Promise<UrlCheck> {
  const policy: AddressPolicy = { allowLoopbackForTests: options.allowLoopbackForTests === true, allowedNetworks: options.allowedNetworks };
  const syntax = validatePublicHttpsUrlSyntax(input, policy);
  if (!syntax.ok || syntax.addresses.length > 0) return syntax;
  // `name.example.org.` is the same host as `name.example.org`, but the system resolver does not
  // match a trailing-dot name against the hosts file or nss (glibc `files`), so looking it up as
  // given could miss a private mapping and let the URL through. Judge the canonical name.
  const hostname = syntax.url.hostname.replace(/\.+$/, '');
  const lookup = options.lookup ?? defaultLookup;
  let addresses: LookupAddress[];
  try {
    addresses = await withTimeout(lookup(hostname), options.dnsTimeoutMs ?? 5000, hostname);
  } catch (err) {
    if (err instanceof SafeFetchError) return fail(err.code, err.message);
    const code = (err as { code?: unknown }).code;
    return fail('dns_failed', `${hostname} does not resolve${typeof code === 'string' ? ` (${code})` : ''}; check the host name.`);
  }
  const problem = checkResolvedAddresses(hostname, addresses, policy);
  if (problem) return fail(problem.code, problem.message);
  return { ok: true, url: syntax.url, addresses: addresses.map((a) => a.address) };
}
