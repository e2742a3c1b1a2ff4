import { BlockList, isIP } from 'node:net';

/**
 * Adds an address or a CIDR range (`10.20.0.0/16`, `fd00::/8`, `192.168.7.9`) to `list`; false
 * when `entry` is neither. Node's BlockList then answers `check(address)`, an IPv4-mapped IPv6
 * address matching its IPv4's rules. The control plane's CAPTIONFARM_TRUSTED_PROXIES uses it too.
 */
export function addNetwork(list: BlockList, entry: string): boolean {
  const [address, bits] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || (bits !== undefined && !/^\d{1,3}$/.test(bits)) || Number(bits) > (family === 4 ? 32 : 128)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) list.addAddress(address!, type);
  else list.addSubnet(address!, Number(bits), type);
  return true;
}

/**
 * The operator's private networks (CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: CIDR ranges or addresses,
 * comma- or space-separated). Throws an Error naming the first entry that does not parse, so a
 * typo stops the process at start rather than silently refusing (or allowing) deliveries.
 */
export function parseAllowedNetworks(value: string | undefined): BlockList {
  const list = new BlockList();
  for (const entry of (value ?? '').split(/[\s,]+/).filter(Boolean)) {
    if (!addNetwork(list, entry)) throw new Error(`"${entry}" is not a network in CIDR notation (like 10.20.0.0/16 or fd00::/8)`);
  }
  return list;
}

/** Whether an address is inside one of the networks. */
export function inNetworks(address: string, list: BlockList | undefined): boolean {
  const family = isIP(address);
  return list !== undefined && family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * A listen address `host:port` (`0.0.0.0:8081`, `[::1]:9100`, `metrics.local:9100`), as the
 * control plane's CAPTIONFARM_METRICS_LISTEN and the agent's CAPTIONFARM_AGENT_HEALTH_LISTEN take
 * it: the host without brackets and a port in 0-65535; null for anything else.
 */
export function parseListenAddress(value: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d{1,5})$/.exec(value);
  if (!m || Number(m[2]) > 65535) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
