import { accessAddress, ipAccessCheck, isIpOrCidr } from './ip-access';

describe('IP access lists', () => {
  it('takes addresses and CIDR blocks of both families, and nothing else', () => {
    for (const ok of ['203.0.113.7', '10.0.0.0/8', '0.0.0.0', '0.0.0.0/0', '2001:db8::1', '2001:db8::/32', '::1']) expect(isIpOrCidr(ok), ok).toBe(true);
    for (const bad of ['', 'example.com', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/8/8', '10.0.0/8', '1.2.3.4/x', '256.1.1.1']) expect(isIpOrCidr(bad), bad).toBe(false);
  });

  it('allows what an entry names or holds, every IPv4 address for 0.0.0.0, and IPv4 seen as IPv6', () => {
    const check = ipAccessCheck(['203.0.113.7', '10.0.0.0/8', '2001:db8::/32']);
    expect(['203.0.113.7', '10.200.3.4', '::ffff:10.1.1.1', '2001:db8:1::5'].map(check)).toEqual([true, true, true, true]);
    expect(['203.0.113.8', '11.0.0.1', '2001:db9::1', '', 'nonsense'].map(check)).toEqual([false, false, false, false, false]);
    expect(ipAccessCheck(['0.0.0.0'])('198.51.100.1')).toBe(true);
    expect(ipAccessCheck(['0.0.0.0/0'])('::ffff:198.51.100.1')).toBe(true);
  });

  it("judges by the peer, or by the entry a proxy on a private address appended, never by the client's own entries", () => {
    expect(accessAddress('198.51.100.4', '10.0.0.1')).toBe('198.51.100.4');
    expect(accessAddress('127.0.0.1', '203.0.113.9')).toBe('203.0.113.9');
    expect(accessAddress('::ffff:10.0.0.2', '10.9.9.9, 203.0.113.9')).toBe('203.0.113.9');
    expect(accessAddress('192.168.1.1', ['203.0.113.1', '203.0.113.2'])).toBe('203.0.113.2');
    expect(accessAddress('127.0.0.1', 'not-an-ip')).toBe('127.0.0.1');
    expect(accessAddress('127.0.0.1', undefined)).toBe('127.0.0.1');
    expect(accessAddress('::ffff:127.0.0.1', undefined)).toBe('127.0.0.1');
  });
});
