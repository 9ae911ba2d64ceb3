// Pins down which addresses count as public: the table is the contract, the properties guard the
// edges of each refused IPv4 range and the IPv4-mapped IPv6 spelling of every address.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/outbound/index.js';

const PUBLIC = [
  '1.1.1.1',
  '8.8.8.8',
  '9.9.9.9',
  '93.184.216.34',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
];

const NOT_PUBLIC: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'this network'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.255', 'CGNAT'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['198.51.100.7', 'documentation TEST-NET-2'],
  ['203.0.113.9', 'documentation TEST-NET-3'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['::', 'unspecified v6'],
  ['::1', 'loopback v6'],
  ['fe80::1', 'link-local v6'],
  ['fe80::1%eth0', 'link-local v6 with zone'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'multicast v6'],
  ['ff0e::1', 'multicast v6'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated, not routable)'],
  ['::808:808', 'IPv4-compatible, hex'],
  ['0:0:0:0:0:0:8.8.8.8', 'IPv4-compatible, long form'],
  ['::ffff:8.8.8.8%1', 'zone id on a mapped address'],
  ['2606:4700:4700::1111%eth0', 'zone id on a global address'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated (RFC 6145)'],
  ['64:ff9b::7f00:1', 'NAT64 well-known prefix'],
  ['64:ff9b::808:808', 'NAT64 of a public address'],
  ['64:ff9b:1::1', 'NAT64 local-use'],
  ['2002:7f00:1::1', '6to4'],
  ['2002:808:808::1', '6to4 of a public address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:db8::1', 'documentation v6'],
  ['3fff::1', 'documentation v6 (RFC 9637)'],
  ['2001:2::1', 'benchmarking v6'],
  ['100::1', 'discard-only'],
  ['5f00::1', 'SRv6 SIDs'],
  ['4000::1', 'outside 2000::/3'],
];

const NOT_ADDRESSES = [
  '',
  'localhost',
  'example.com',
  '127.1',
  '0x7f.0.0.1',
  '2130706433',
  '1.2.3.4.5',
  '[::1]',
  ' 8.8.8.8',
];

describe('isPublicAddress', () => {
  it.each(PUBLIC)('accepts %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each(NOT_PUBLIC)('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(NOT_ADDRESSES)('refuses %j, which is not a plain IP literal', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });

  const refusedV4 = [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '127.0.0.0/8',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.0.0.0/24',
    '192.0.2.0/24',
    '192.168.0.0/16',
    '198.18.0.0/15',
    '198.51.100.0/24',
    '203.0.113.0/24',
    '224.0.0.0/4',
    '240.0.0.0/4',
  ];

  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((octets) => octets.join('.'));

  it.each(refusedV4)('refuses every address in %s, in both spellings', (cidr) => {
    const [network, bits] = ipaddr.IPv4.parseCIDR(cidr);
    const base = network.toByteArray().reduce((acc, byte) => acc * 256 + byte, 0);
    const size = 2 ** (32 - bits);
    const inRange = fc.nat(size - 1).map((offset) => {
      const n = base + offset;
      return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
    });
    fc.assert(
      fc.property(inRange, (ip) => {
        expect(isPublicAddress(ip)).toBe(false);
        expect(isPublicAddress(`::ffff:${ip}`)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('judges an IPv4-mapped address exactly like the address it wraps', () => {
    fc.assert(
      fc.property(v4, (ip) => {
        expect(isPublicAddress(`::ffff:${ip}`)).toBe(isPublicAddress(ip));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts a random IPv4 address exactly when it lies outside every refused range', () => {
    const ranges = refusedV4.map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
    fc.assert(
      fc.property(v4, (ip) => {
        const address = ipaddr.IPv4.parse(ip);
        const refused = ranges.some(([network, bits]) => address.match(network, bits));
        // AS112 and AMT anycast ranges are special-purpose too; the policy may refuse them.
        const special = ['as112', 'amt', 'reserved', 'broadcast'].includes(address.range());
        if (refused) expect(isPublicAddress(ip)).toBe(false);
        else if (!special) expect(isPublicAddress(ip)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses every IPv6 address outside 2000::/3', () => {
    const global = ipaddr.IPv6.parseCIDR('2000::/3');
    const part = fc.nat(0xffff);
    fc.assert(
      fc.property(fc.array(part, { minLength: 8, maxLength: 8 }), (parts) => {
        const address = new ipaddr.IPv6(parts);
        fc.pre(!address.match(global) && !address.isIPv4MappedAddress());
        expect(isPublicAddress(address.toString())).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
