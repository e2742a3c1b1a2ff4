import { BlockList, isIP } from 'node:net';
import { addNetwork } from '@captionfarm/net';

/** The client's address of a request, as the limits key it: see createClientAddress. */
export type ClientAddress = (req: { socket: { remoteAddress?: string | undefined }; headers: Record<string, string | string[] | undefined> }) => string;

/** IPv4 peers of a dual-stack socket read `::ffff:a.b.c.d`: the same client as `a.b.c.d`. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The trusted proxies of CAPTIONFARM_TRUSTED_PROXIES: addresses and CIDR ranges, comma-separated,
 * or `loopback` for 127.0.0.0/8 and ::1. Throws on an entry that is neither.
 */
export function parseTrustedProxies(value: string | undefined): BlockList {
  const list = new BlockList();
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    if (!addNetwork(list, entry)) throw new Error(`"${entry}" is not an address, a CIDR range or "loopback"`);
  }
  return list;
}

/**
 * The address the per-client limits key on. Without trusted proxies it is the TCP peer. When the
 * peer is a trusted proxy, X-Forwarded-For is read from the right: each hop a trusted proxy added
 * is skipped, and the first address no trusted proxy vouches for is the client (an address the
 * client wrote itself at the left cannot be chosen, since the proxies append what they saw). A
 * malformed header counts as no header: the proxy's own address.
 */
export function createClientAddress(trusted: BlockList): ClientAddress {
  const isTrusted = (a: string) => {
    const family = isIP(a);
    return family !== 0 && trusted.check(a, family === 4 ? 'ipv4' : 'ipv6');
  };
  return (req) => {
    const peer = plain(req.socket.remoteAddress ?? 'unknown');
    if (!isTrusted(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((h) => plain(h.trim()))
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (isIP(hop) === 0) return peer;
      if (!isTrusted(hop)) return hop;
    }
    return hops[0] ?? peer;
  };
}
