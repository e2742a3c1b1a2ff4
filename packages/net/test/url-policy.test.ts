import { describe, expect, it } from 'vitest';
import { validatePublicHttpsUrl, validatePublicHttpsUrlSyntax } from '../src/url-policy.ts';
import { createFakeLookup } from './helpers/fake-dns.ts';
import { RESOLVING_TO_BLOCKED, SSRF_URLS } from './helpers/ssrf-cases.ts';

describe('validatePublicHttpsUrlSyntax', () => {
  it.each(SSRF_URLS)('%s -> %s', (url, code) => {
    const result = validatePublicHttpsUrlSyntax(url);
    expect(result).toMatchObject({ ok: false, code });
    if (!result.ok) expect(result.reason).toMatch(/\w{3,}/);
  });

  it('accepts public literals and names (no DNS)', () => {
    expect(validatePublicHttpsUrlSyntax('https://8.8.8.8/hook')).toMatchObject({ ok: true, addresses: ['8.8.8.8'] });
    expect(validatePublicHttpsUrlSyntax('https://[2606:4700:4700::1111]:8443/')).toMatchObject({ ok: true });
    expect(validatePublicHttpsUrlSyntax('https://hooks.example.com/x?y=1')).toMatchObject({ ok: true, addresses: [] });
    expect(validatePublicHttpsUrlSyntax('https://hooks.example.com./')).toMatchObject({ ok: true });
  });

  it('the test-only policy opens loopback and localhost, nothing else', () => {
    const policy = { allowLoopbackForTests: true };
    expect(validatePublicHttpsUrlSyntax('https://127.0.0.1:9/', policy)).toMatchObject({ ok: true });
    expect(validatePublicHttpsUrlSyntax('https://0x7f.1/', policy)).toMatchObject({ ok: true });
    expect(validatePublicHttpsUrlSyntax('https://[::1]/', policy)).toMatchObject({ ok: true });
    expect(validatePublicHttpsUrlSyntax('https://localhost/', policy)).toMatchObject({ ok: true });
    for (const url of [
      'https://10.0.0.1/',
      'https://169.254.169.254/',
      'https://0.0.0.0/',
      'https://[fd00::1]/',
      'https://metadata.google.internal/',
      'http://127.0.0.1/',
    ]) {
      expect(validatePublicHttpsUrlSyntax(url, policy).ok, url).toBe(false);
    }
  });
});

describe('validatePublicHttpsUrl (with DNS)', () => {
  it.each(SSRF_URLS)('%s -> %s, without asking DNS', async (url, code) => {
    const lookup = createFakeLookup();
    await expect(validatePublicHttpsUrl(url, { lookup })).resolves.toMatchObject({ ok: false, code });
    expect(lookup.calls).toEqual([]);
  });

  it.each(RESOLVING_TO_BLOCKED)('refuses %s, which resolves to a non-public address', async (name) => {
    const lookup = createFakeLookup();
    const result = await validatePublicHttpsUrl(`https://${name}/hook`, { lookup });
    expect(result).toMatchObject({ ok: false, code: 'blocked_address' });
    if (!result.ok) expect(result.reason).toContain(name);
  });

  it.each(RESOLVING_TO_BLOCKED)('never echoes the address %s resolves to (no internal-DNS oracle)', async (name) => {
    const lookup = createFakeLookup();
    const result = await validatePublicHttpsUrl(`https://${name}/hook`, { lookup });
    expect(result.ok).toBe(false);
    const addresses = (await lookup(name)).map((a) => a.address);
    for (const address of addresses) if (!result.ok) expect(result.reason).not.toContain(address);
    if (!result.ok) expect(result.reason).toBe(`${name} resolves to a non-public address; use a host whose addresses are all public.`);
  });

  it.each(RESOLVING_TO_BLOCKED)('judges %s with a trailing dot like the name without it', async (name) => {
    // The fake answers like the system resolver: a trailing-dot name is not found in the hosts file.
    const lookup = createFakeLookup();
    await expect(lookup(`${name}.`)).rejects.toThrow(/ENOTFOUND/);
    for (const dotted of [`${name}.`, `${name}..`, `${name.toUpperCase()}.`]) {
      await expect(validatePublicHttpsUrl(`https://${dotted}/v.mp4`, { lookup })).resolves.toMatchObject({ ok: false, code: 'blocked_address' });
    }
  });

  it('refuses a name resolving to 127.0.0.1 even with a trailing dot', async () => {
    const lookup = createFakeLookup();
    const result = await validatePublicHttpsUrl('https://loopback.example.com./', { lookup });
    expect(result).toMatchObject({ ok: false, code: 'blocked_address' });
  });

  it('with the test setting OFF, loopback is refused even when DNS says 127.0.0.1', async () => {
    const lookup = createFakeLookup();
    await expect(validatePublicHttpsUrl('https://receiver.test/', { lookup })).resolves.toMatchObject({
      ok: false,
      code: 'blocked_address',
    });
    await expect(validatePublicHttpsUrl('https://receiver.test/', { lookup, allowLoopbackForTests: true })).resolves.toMatchObject({
      ok: true,
      addresses: ['127.0.0.1'],
    });
    // The test setting never opens private ranges.
    await expect(validatePublicHttpsUrl('https://private.example.com/', { lookup, allowLoopbackForTests: true })).resolves.toMatchObject({
      ok: false,
      code: 'blocked_address',
    });
  });

  it('accepts names with only public addresses and reports them', async () => {
    const lookup = createFakeLookup();
    await expect(validatePublicHttpsUrl('https://public.example.com/hook', { lookup })).resolves.toMatchObject({
      ok: true,
      addresses: ['93.184.216.34'],
    });
    await expect(validatePublicHttpsUrl('https://public6.example.com/', { lookup })).resolves.toMatchObject({
      ok: true,
    });
  });

  it('reports names that do not resolve, or resolve to nothing, or too slowly', async () => {
    const lookup = createFakeLookup();
    await expect(validatePublicHttpsUrl('https://nx.example.com/', { lookup })).resolves.toMatchObject({
      ok: false,
      code: 'dns_failed',
    });
    await expect(validatePublicHttpsUrl('https://empty.example.com/', { lookup })).resolves.toMatchObject({
      ok: false,
      code: 'dns_failed',
    });
    const hanging = (): Promise<never> => new Promise(() => undefined);
    await expect(validatePublicHttpsUrl('https://slow.example.com/', { lookup: hanging, dnsTimeoutMs: 50 })).resolves.toMatchObject({
      ok: false,
      code: 'dns_failed',
    });
  });
});
