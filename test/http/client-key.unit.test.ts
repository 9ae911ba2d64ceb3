// The address a connection is counted under for GATEWAY_MAX_CONNECTIONS_PER_IP (issue 22, item 8).
import { describe, expect, it } from 'vitest';
import { clientKey } from '../../src/http/server-limits.js';

describe('clientKey', () => {
  it('counts an IPv4 address as itself, also when it comes IPv4-mapped', () => {
    expect(clientKey('127.0.0.2')).toBe('127.0.0.2');
    expect(clientKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
  });

  it('counts every address of one IPv6 /64 together', () => {
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });

  it('keeps what it cannot read as it is', () => {
    expect(clientKey(undefined)).toBe('');
    expect(clientKey('not an address')).toBe('not an address');
  });
});
