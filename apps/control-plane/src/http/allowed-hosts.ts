import { isIP } from 'node:net';

/**
 * Which Host a dashboard API request may name (issue 40 item 15b, DNS rebinding). A page on
 * evil.example whose name is made to resolve to this server is same-origin with itself: its
 * requests carry `Host: evil.example` and a matching Origin, which the CSRF check alone accepts.
 * Accepted: the public URL's host name, the names of CAPTIONFARM_ALLOWED_HOSTS, loopback names
 * (localhost, *.localhost: browsers resolve them to loopback themselves) and IP literals (no DNS
 * name, nothing to rebind; also what a reverse proxy that does not pass the Host on sends).
 * Ports are not compared: a rebinding page controls the name, not the port.
 */
export function createHostAllowlist(o: { publicUrl?: string | undefined; allowedHosts?: readonly string[] }): (host: string | undefined) => boolean {
  const names = new Set((o.allowedHosts ?? []).map(normalHostName));
  if (o.publicUrl) names.add(normalHostName(new URL(o.publicUrl).hostname));
  return (host) => {
    const name = hostNameOf(host);
    if (name === undefined) return false;
    return names.has(name) || name === 'localhost' || name.endsWith('.localhost') || isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0;
  };
}

/** What a refusal says to do. */
export const HOST_HELP = "use CAPTIONFARM_PUBLIC_URL's host, localhost or an IP address, or add the name to CAPTIONFARM_ALLOWED_HOSTS.";

/** CAPTIONFARM_ALLOWED_HOSTS: comma-separated host names (a port, if given, is ignored). Throws with a message on a malformed entry. */
export function parseAllowedHosts(value: string | undefined): string[] {
  if (!value?.trim()) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const name = hostNameOf(entry);
      if (name === undefined) throw new Error(`"${entry}" is not a host name (e.g. captions.example.com)`);
      return name;
    });
}

/** The host name of a Host header value ("Example.COM:8080" -> "example.com", "[::1]:80" -> "[::1]"), or undefined when it is none. */
function hostNameOf(host: string | undefined): string | undefined {
  if (!host || /[\s/?#@\\]/.test(host)) return undefined;
  try {
    const url = new URL(`http://${host}`);
    return url.hostname ? normalHostName(url.hostname) : undefined;
  } catch {
    return undefined;
  }
}

function normalHostName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
