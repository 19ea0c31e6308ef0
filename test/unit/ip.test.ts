import { describe, expect, test } from 'bun:test';
import { IpMatcher, isCidr, isHostname, isNeverFetchedAddress, limitAddress, normalizeIp } from '../../src/lib/ip.ts';
import { ClientIpResolver } from '../../src/http/client-ip.ts';

describe('IpMatcher', () => {
  test('IPv4, CIDR and IPv4-mapped IPv6 are the same address space', () => {
    const m = new IpMatcher(['10.0.0.0/8', '192.168.1.5', '::1']);
    expect(m.matches('10.200.3.4')).toBe(true);
    expect(m.matches('::ffff:10.1.2.3')).toBe(true);
    expect(m.matches('11.0.0.1')).toBe(false);
    expect(m.matches('192.168.1.5')).toBe(true);
    expect(m.matches('192.168.1.6')).toBe(false);
    expect(m.matches('::1')).toBe(true);
    expect(m.matches('::2')).toBe(false);
    expect(m.matches('garbage')).toBe(false);
  });

  test('IPv6 ranges', () => {
    const m = new IpMatcher(['2001:db8::/32', 'fe80::1%eth0']);
    expect(m.matches('2001:db8:1::7')).toBe(true);
    expect(m.matches('2001:db9::1')).toBe(false);
    expect(m.matches('fe80::1')).toBe(true);
  });

  test('validators', () => {
    expect(isCidr('10.0.0.0/8')).toBe(true);
    expect(isCidr('10.0.0.0/33')).toBe(false);
    expect(isCidr('::/0')).toBe(true);
    expect(isHostname('proxy.lan')).toBe(true);
    expect(isHostname('bad_host!')).toBe(false);
    expect(isHostname('a'.repeat(254))).toBe(false);
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });
});

describe('limitAddress', () => {
  test('IPv4 as it is; IPv6 by its /64, whatever its spelling; an IPv4-mapped one as its IPv4 address', () => {
    expect(limitAddress('203.0.113.9')).toBe('203.0.113.9');
    expect(limitAddress('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(limitAddress('2001:DB8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(limitAddress('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(limitAddress('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(limitAddress('unknown')).toBe('unknown');
  });
});

describe('ClientIpResolver', () => {
  const resolver = new ClientIpResolver(new IpMatcher(['10.0.0.1', '10.0.0.2']));

  test('X-Forwarded-For is ignored from an unknown peer', () => {
    expect(resolver.resolve('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9');
  });

  test('from a known proxy, the rightmost address that is not a proxy is the client', () => {
    expect(resolver.resolve('10.0.0.1', '6.6.6.6, 1.2.3.4, 10.0.0.2')).toBe('1.2.3.4');
  });

  test("an entry with the client's port (Azure, IIS ARR) is its address, so every connection of one client is one client", () => {
    expect(resolver.resolve('10.0.0.1', '6.6.6.6, 1.2.3.4:51234, 10.0.0.2:443')).toBe('1.2.3.4');
    expect(resolver.resolve('10.0.0.1', '[2001:DB8::1]:51234')).toBe('2001:db8::1');
    expect(resolver.resolve('10.0.0.1', '[2001:db8::1]')).toBe('2001:db8::1');
    expect(resolver.resolve('10.0.0.1', '[::ffff:1.2.3.4]:9')).toBe('1.2.3.4');
  });

  test('no proxies configured: the peer', () => {
    expect(new ClientIpResolver(new IpMatcher([])).resolve('::ffff:127.0.0.1', '9.9.9.9')).toBe('127.0.0.1');
  });

  test('each request gets its own peer, whichever peer the one before came from', () => {
    const r = new ClientIpResolver(new IpMatcher(['10.0.0.1']));
    const peers: [string | null, string | null, string][] = [
      ['::ffff:127.0.0.1', null, '127.0.0.1'],
      ['::ffff:127.0.0.1', null, '127.0.0.1'],
      ['::1', null, '::1'],
      [null, null, 'unknown'],
      ['10.0.0.1', '1.2.3.4', '1.2.3.4'],
      ['10.0.0.1', null, '10.0.0.1'],
      ['::ffff:203.0.113.9', '1.2.3.4', '203.0.113.9'],
    ];
    for (const [peer, forwardedFor, client] of peers) expect(r.resolve(peer, forwardedFor)).toBe(client);
  });
});

describe('isNeverFetchedAddress', () => {
  test('link-local (cloud metadata), "this host", multicast and broadcast; not loopback or private LAN addresses', () => {
    for (const ip of [
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      'fe80::1',
      'ff02::1',
      'fd00:ec2::254',
      '::ffff:169.254.169.254',
    ]) {
      expect([ip, isNeverFetchedAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['127.0.0.1', '::1', '10.0.0.5', '192.168.1.20', '172.16.0.1', '203.0.113.7', 'fd12::1']) {
      expect([ip, isNeverFetchedAddress(ip)]).toEqual([ip, false]);
    }
  });
});
