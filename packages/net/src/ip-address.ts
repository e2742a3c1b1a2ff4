import ipaddr from 'ipaddr.js';

/**
 * Classifies IP addresses as public (globally routable unicast) or not. This is the single
 * source of truth for "may we connect there": used on IP-literal URL hosts, on every address a
 * DNS lookup returns (inside undici's connect lookup), and on the socket's remote address after
 * connecting.
 *
 * Parsing is ipaddr.js's; the range policy below is ours.
 *
 * IPv4: a deny list of the IANA special-purpose ranges. IPv6: an allow list (only 2000::/3
 * global unicast, plus NAT64 64:ff9b::/96 and IPv4-mapped ::ffff:0:0/96 when the embedded IPv4
 * is itself public), minus the special ranges inside 2000::/3. Addresses that embed an IPv4
 * (mapped, compatible, NAT64, 6to4) are judged by that IPv4; Teredo is refused outright.
 */

export type AddressRange =
  | 'this-network'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared-cgnat'
  | 'link-local'
  | 'ietf-protocol'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'unique-local'
  | 'site-local'
  | 'teredo'
  | 'not-an-ip';

export type AddressCheck =
  | { ok: true; address: string; family: 4 | 6 }
  | {
      ok: false;
      address: string;
      /** The range of the address, or of the IPv4 it embeds. */
      range: AddressRange;
      /** How an IPv6 address embeds the IPv4 that was judged, when it does. */
      via?: 'ipv4-mapped' | 'ipv4-compatible' | 'nat64' | '6to4';
      /** Human-readable: "127.0.0.1 is a loopback address". */
      reason: string;
    };

type V4Range = readonly [base: number, prefix: number, range: AddressRange];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

// IANA IPv4 Special-Purpose Address Registry, plus multicast and the old class E block.
// Ranges the registry marks "globally reachable" (AS112, AMT, 192.0.0.9/32 ...) are still
// refused when they sit inside a larger non-global block: no webhook receiver lives there.
const V4_BLOCKED: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8, 'this-network'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared-cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'], // includes 169.254.169.254 (cloud metadata)
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'ietf-protocol'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, 'reserved'], // deprecated 6to4 relay anycast
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

const RANGE_WORDS: Record<AddressRange, string> = {
  'this-network': 'a "this network" address (0.0.0.0/8)',
  unspecified: 'the unspecified address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  'shared-cgnat': 'a carrier-grade NAT address (100.64.0.0/10)',
  'link-local': 'a link-local address (includes cloud metadata 169.254.169.254)',
  'ietf-protocol': 'an IETF protocol-assignment address',
  documentation: 'a documentation-only address',
  benchmarking: 'a benchmarking address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  broadcast: 'the broadcast address',
  'unique-local': 'a unique-local IPv6 address (fc00::/7)',
  'site-local': 'a site-local IPv6 address (fec0::/10)',
  teredo: 'a Teredo tunnel address (2001::/32)',
  'not-an-ip': 'not an IP address',
};

// ipaddr.js's own four-decimal-parts pattern, tested first: its isValid throws (and catches) on
// a host name: a stack trace per call, on every job create (seen in bench:api's profile).
const FOUR_PART_DECIMAL = /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/;

/** Strict dotted-quad IPv4 (what DNS and the WHATWG URL parser produce) to a uint32. */
function parseIPv4(input: string): number | null {
  // Four decimal parts only: ipaddr.js's IPv4.parse would also take `0x7f.1` or `2130706433`.
  if (!FOUR_PART_DECIMAL.test(input) || !ipaddr.IPv4.isValidFourPartDecimal(input)) return null;
  const [a, b, c, d] = ipaddr.IPv4.parse(input).octets as [number, number, number, number];
  return v4(a, b, c, d);
}

function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

/** IPv6 (optionally bracketed, optionally with a %zone) to a 128-bit bigint. */
export function parseIPv6(input: string): bigint | null {
  let s = input;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  // A dotted IPv4 tail becomes two hex groups first: ipaddr.js reads `::8.8.8.8` (IPv4-compatible,
  // deprecated, refused) as `::ffff:8.8.8.8` (IPv4-mapped, judged by the IPv4).
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const embedded = parseIPv4(tail);
    if (embedded === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(embedded >>> 16).toString(16)}:${(embedded & 0xffff).toString(16)}`;
  }
  if (!ipaddr.IPv6.isValid(s)) return null;
  let value = 0n;
  for (const part of ipaddr.IPv6.parse(s).parts) value = (value << 16n) | BigInt(part);
  return value;
}

function inV6(value: bigint, prefix: bigint, length: number): boolean {
  const shift = BigInt(128 - length);
  return value >> shift === prefix >> shift;
}

function v6(literal: string): bigint {
  const parsed = parseIPv6(literal);
  if (parsed === null) throw new Error(`bad IPv6 constant ${literal}`);
  return parsed;
}

const V6 = {
  unspecified: v6('::'),
  loopback: v6('::1'),
  mapped: v6('::ffff:0:0'),
  compatible: v6('::'),
  nat64: v6('64:ff9b::'),
  nat64Local: v6('64:ff9b:1::'),
  discard: v6('100::'),
  teredo: v6('2001::'),
  benchmarking: v6('2001:2::'),
  ietf: v6('2001::'),
  documentation: v6('2001:db8::'),
  documentation2: v6('3fff::'),
  sixToFour: v6('2002::'),
  uniqueLocal: v6('fc00::'),
  linkLocal: v6('fe80::'),
  siteLocal: v6('fec0::'),
  multicast: v6('ff00::'),
  globalUnicast: v6('2000::'),
};

function checkV4(address: string, value: number): AddressCheck {
  for (const [base, prefix, range] of V4_BLOCKED) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === base) {
      return { ok: false, address, range, reason: `${address} is ${RANGE_WORDS[range]}` };
    }
  }
  return { ok: true, address, family: 4 };
}

function embedded(address: string, inner: number, via: 'ipv4-mapped' | 'ipv4-compatible' | 'nat64' | '6to4', publicInnerAllowed: boolean): AddressCheck {
  const innerText = formatIPv4(inner);
  const result = checkV4(innerText, inner);
  if (!result.ok) {
    return {
      ok: false,
      address,
      range: result.range,
      via,
      reason: `${address} embeds ${innerText} (${via}), ${RANGE_WORDS[result.range]}`,
    };
  }
  if (!publicInnerAllowed) {
    return {
      ok: false,
      address,
      range: 'reserved',
      via,
      reason: `${address} is a deprecated ${via} IPv6 address`,
    };
  }
  return { ok: true, address, family: 6 };
}

function blocked6(address: string, range: AddressRange): AddressCheck {
  return { ok: false, address, range, reason: `${address} is ${RANGE_WORDS[range]}` };
}

function checkV6(address: string, value: bigint): AddressCheck {
  if (value === V6.unspecified) return blocked6(address, 'unspecified');
  if (value === V6.loopback) return blocked6(address, 'loopback');
  const low32 = Number(value & 0xffffffffn);
  if (inV6(value, V6.mapped, 96)) return embedded(address, low32, 'ipv4-mapped', true);
  if (inV6(value, V6.compatible, 96)) return embedded(address, low32, 'ipv4-compatible', false);
  if (inV6(value, V6.nat64, 96)) return embedded(address, low32, 'nat64', true);
  if (inV6(value, V6.nat64Local, 48)) return blocked6(address, 'reserved');
  if (inV6(value, V6.discard, 64)) return blocked6(address, 'reserved');
  if (inV6(value, V6.uniqueLocal, 7)) return blocked6(address, 'unique-local');
  if (inV6(value, V6.linkLocal, 10)) return blocked6(address, 'link-local');
  if (inV6(value, V6.siteLocal, 10)) return blocked6(address, 'site-local');
  if (inV6(value, V6.multicast, 8)) return blocked6(address, 'multicast');
  if (!inV6(value, V6.globalUnicast, 3)) return blocked6(address, 'reserved');
  // Inside 2000::/3.
  if (inV6(value, V6.teredo, 32)) {
    // Teredo: server IPv4 in bits 32..63, client IPv4 inverted in the low 32 bits. Refused
    // whatever they embed: reaching it needs a Teredo relay, which may sit on our network.
    const server = formatIPv4(Number((value >> 64n) & 0xffffffffn));
    const client = formatIPv4(~low32 >>> 0);
    return {
      ok: false,
      address,
      range: 'teredo',
      reason: `${address} is ${RANGE_WORDS.teredo} (server ${server}, client ${client})`,
    };
  }
  if (inV6(value, V6.benchmarking, 48)) return blocked6(address, 'benchmarking');
  if (inV6(value, V6.ietf, 23)) return blocked6(address, 'ietf-protocol');
  if (inV6(value, V6.documentation, 32)) return blocked6(address, 'documentation');
  if (inV6(value, V6.documentation2, 20)) return blocked6(address, 'documentation');
  if (inV6(value, V6.sixToFour, 16)) {
    return embedded(address, Number((value >> 80n) & 0xffffffffn), '6to4', true);
  }
  return { ok: true, address, family: 6 };
}

/**
 * Judges one address as returned by DNS, written in a URL (`[v6]` brackets allowed), or read
 * from `socket.remoteAddress`. Only canonical IP text is accepted (the WHATWG URL parser has
 * already turned `0x7f.1`, `2130706433`, `0177.0.0.1` into `127.0.0.1`); anything else is
 * `not-an-ip`, which is also "not ok".
 */
export function checkAddress(address: string): AddressCheck {
  const asV4 = parseIPv4(address);
  if (asV4 !== null) return checkV4(address, asV4);
  const asV6 = parseIPv6(address);
  if (asV6 !== null) return checkV6(address, asV6);
  return { ok: false, address, range: 'not-an-ip', reason: `${address} is not an IP address` };
}

export function isPublicAddress(address: string): boolean {
  return checkAddress(address).ok;
}

/** True for an IP literal (dotted IPv4 or IPv6, bracketed or not). */
export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== null || parseIPv6(host) !== null;
}
