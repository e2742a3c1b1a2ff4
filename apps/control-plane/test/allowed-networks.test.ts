import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/index.ts';
import { createUrlPolicy } from '../src/url-policy.ts';

// CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: the operator's own networks for webhookUrl and videoUrl
// (containers/test/farm delivers a webhook to a receiver there through the images).
describe('CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS', () => {
  const lookup = async (host: string) =>
    host === 'hooks.farm.internal' ? [{ address: '10.20.0.7', family: 4 as const }] : [{ address: '10.99.0.1', family: 4 as const }];

  it('lets webhook and video URLs into the listed networks only', async () => {
    const policy = createUrlPolicy(loadConfig({ CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: '10.20.0.0/16, fd00:1::/32' }), lookup);
    expect(await policy('https://hooks.farm.internal/captions')).toBeNull();
    expect(await policy('https://10.20.3.4/captions')).toBeNull();
    expect(await policy('https://10.21.0.1/captions')).toMatch(/10\.21\.0\.1 is a private-network address/);
    expect(await policy('https://other.farm.internal/captions')).toMatch(/non-public address/);
    expect(await policy('https://169.254.169.254/latest/meta-data/')).toMatch(/link-local/);
    // Unset (the default): the same internal name is refused.
    expect(await createUrlPolicy(loadConfig({}), lookup)('https://hooks.farm.internal/captions')).toMatch(/local-only host name/);
  });

  it('stops the control plane at start on an entry that is not a network', () => {
    expect(() => loadConfig({ CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/8, hooks.internal' })).toThrow(
      /CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: "hooks\.internal" is not a network in CIDR notation/,
    );
  });
});
