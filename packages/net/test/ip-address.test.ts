import { describe, expect, it } from 'vitest';
import { checkAddress, isPublicAddress, parseIPv6 } from '../src/ip-address.ts';

describe('checkAddress', () => {
  const blocked: Array<[string, string]> = [
    ['0.0.0.0', 'this-network'],
    ['0.1.2.3', 'this-network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared-cgnat'],
    ['100.127.255.255', 'shared-cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.1', 'ietf-protocol'],
    ['192.0.2.55', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::127.0.0.1', 'loopback'], // IPv4-compatible
    ['::8.8.8.8', 'reserved'], // IPv4-compatible is deprecated, even of a public address
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::1', 'reserved'],
    ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['2001:0:a00:1:0:0:f5ff:fffe', 'teredo'], // server 10.0.0.1, client 10.0.0.1
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ietf-protocol'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['100::1', 'reserved'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['::ffff:0:a00:1', 'reserved'], // SIIT, outside 2000::/3
    ['4000::1', 'reserved'],
    ['example.com', 'not-an-ip'],
    ['0x7f.1', 'not-an-ip'], // non-canonical text is never "public"
    ['2130706433', 'not-an-ip'],
    ['', 'not-an-ip'],
  ];
  it.each(blocked)('%s is blocked as %s', (address, range) => {
    const result = checkAddress(address);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.range).toBe(range);
      expect(result.reason.length).toBeGreaterThan(10);
    }
    expect(isPublicAddress(address)).toBe(false);
  });

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81c::200e',
    '[2606:4700:4700::1111]',
    '64:ff9b::808:808', // NAT64 of 8.8.8.8
    '2002:808:808::1', // 6to4 of 8.8.8.8
    '::ffff:8.8.8.8',
  ];
  it.each(allowed)('%s is public', (address) => {
    expect(checkAddress(address)).toMatchObject({ ok: true });
  });

  it('explains embedded addresses', () => {
    const result = checkAddress('::ffff:7f00:1');
    expect(result).toMatchObject({ ok: false, via: 'ipv4-mapped', range: 'loopback' });
    if (!result.ok) expect(result.reason).toContain('127.0.0.1');
  });

  it('parses IPv6 forms to the same value', () => {
    expect(parseIPv6('::ffff:127.0.0.1')).toBe(parseIPv6('0:0:0:0:0:ffff:7f00:0001'));
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toBe(parseIPv6('1:2:3:4:5:6:102:304'));
    expect(parseIPv6('1::')).toBe(1n << 112n);
    expect(parseIPv6('1:2:3:4:5:6:7::')).toBe(parseIPv6('1:2:3:4:5:6:7:0'));
    expect(parseIPv6('nope')).toBeNull();
  });
});
