import { validatePublicHttpsUrl, type LookupFn } from '@captionfarm/net';
import type { ControlPlaneConfig } from './config.ts';
import type { UrlPolicy } from './jobs/service.ts';

/**
 * Creation-time policy for videoUrl and webhookUrl: https only, no credentials, no IP-literal
 * tricks, no local names, and no host that resolves to a non-public address. A host that does
 * not resolve at all is accepted (DNS may be temporarily down; the fetch itself checks again and
 * fails the job with source-unreachable, or the delivery, if it still does not).
 */
export function createUrlPolicy(config: Pick<ControlPlaneConfig, 'unsafeTestNetwork' | 'allowedPrivateNetworks'>, lookup?: LookupFn): UrlPolicy {
  return async (url) => {
    const check = await validatePublicHttpsUrl(url, {
      allowLoopbackForTests: config.unsafeTestNetwork?.allowLoopback === true,
      allowedNetworks: config.allowedPrivateNetworks,
      ...(lookup ? { lookup } : {}),
    });
    if (check.ok || check.code === 'dns_failed') return null;
    return check.reason.replace(/\.$/, '');
  };
}
