// Owns the decision "may the gateway open a connection to this IP address?" for every outbound
// request made on a user's behalf (media URLs, webhook URLs). It must never resolve names or do
// I/O: it judges one already-resolved address, so the caller can apply it to the address it is
// really about to connect to. When in doubt it must answer false (fail closed).
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Answers true when a connection to `ip` (a literal IPv4 or IPv6 address) is allowed. `hostname`
 * is the URL's host it was reached by (the name, or the literal itself), for policies that trust
 * some names (see allow-list.ts); the default policy judges the address alone.
 */
export type AddressPolicy = (ip: string, hostname?: string) => boolean;

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

// ipaddr.js already classifies most special-purpose space (RFC 6890 and successors); these lists
// restate the ranges we rely on so that a change in the library's tables cannot silently widen
// what counts as public.
const REFUSED_V4: readonly Cidr[] = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT: inside the provider's network, not the internet
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, home of cloud metadata endpoints
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4', // includes 255.255.255.255
].map((cidr) => ipaddr.parseCIDR(cidr));

// Only 2000::/3 is allocated as global unicast; everything outside it (ULA, link-local, loopback,
// multicast, NAT64 64:ff9b::/96, IPv4-compatible ::/96, SRv6 5f00::/16, ...) is refused by that
// test alone. These are the parts of 2000::/3 that still do not lead to a host on the internet.
const REFUSED_V6_INSIDE_GLOBAL: readonly Cidr[] = [
  '2001::/23', // IETF protocol assignments, including Teredo 2001::/32 (tunnels to arbitrary v4)
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4 embeds an IPv4 address we would then have to trust
  '3fff::/20', // documentation (RFC 9637)
].map((cidr) => ipaddr.parseCIDR(cidr));

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

// ipaddr.js reads the deprecated IPv4-compatible form "::a.b.c.d" as if it were IPv4-mapped
// "::ffff:a.b.c.d"; the kernel does not (it is ::a0b:c0d, not routed anywhere), so it must not
// inherit the IPv4 address's verdict.
const IPV4_COMPATIBLE_DOTTED = /^::\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

function inAny(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly Cidr[]): boolean {
  return ranges.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits));
}

function isPublicV4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast' && !inAny(address, REFUSED_V4);
}

function isPublicV6(address: ipaddr.IPv6): boolean {
  // A mapped address reaches the embedded IPv4 host through a dual-stack socket, so it is exactly
  // as public as that host.
  if (address.isIPv4MappedAddress()) return isPublicV4(address.toIPv4Address());
  if (!address.match(GLOBAL_UNICAST_V6)) return false;
  return address.range() === 'unicast' && !inAny(address, REFUSED_V6_INSIDE_GLOBAL);
}

/**
 * The default policy: only globally routable unicast addresses are public. Anything that is not a
 * plain IPv4 dotted quad or IPv6 literal (as `net.isIP` understands them) is refused, so exotic
 * spellings such as `0x7f.1` can never slip through a looser parser.
 */
export function isPublicAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return false;
  // A zone id only has meaning for scoped (link-local) addresses, none of which are public.
  if (ip.includes('%') || IPV4_COMPATIBLE_DOTTED.test(ip)) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return false;
  }
  if (family === 4 && parsed instanceof ipaddr.IPv4) return isPublicV4(parsed);
  if (family === 6 && parsed instanceof ipaddr.IPv6) return isPublicV6(parsed);
  return false;
}
