// Owns the operator's exceptions to the address policy (GATEWAY_ALLOWED_PRIVATE_HOSTS): reading
// the list of host names and CIDRs, and the policy that allows exactly those destinations on top
// of the public-only one. A self-hosted gateway usually runs next to its receivers (a compose
// service name, a LAN address); this lets an operator name them without lifting the guard for
// everything else. It must never resolve names or do I/O, and never widen anything beyond the
// entries given: a name allows only a URL whose host is exactly that name (whatever it resolves
// to), a CIDR only the addresses inside it.
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { isPublicAddress, type AddressPolicy } from './address-policy.js';
import { canonicalHost } from './host-name.js';

/** A setting entry that is neither a host name nor an IP address or CIDR. */
export class AllowListError extends Error {
  override readonly name = 'AllowListError';
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

// A DNS label as compose, Kubernetes and LAN names spell them (underscores appear in compose
// service names); at least one letter somewhere, so "10.0.0" is not taken for a name.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The host form used for matching: lower case, no trailing dot, no IPv6 brackets. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  if (value.endsWith('.')) value = value.slice(0, -1);
  return value;
}

function parseCidr(entry: string): Cidr | null {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    if (net.isIP(entry) === 0) return null;
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

function isHostName(entry: string): boolean {
  if (entry.length > 253 || !/[a-z_]/.test(entry)) return false;
  return entry.split('.').every((label) => LABEL.test(label));
}

/**
 * Reads the comma-separated setting: host names (`n8n`, `hooks.lan`), IP addresses (`10.0.0.7`,
 * `fd00::7`) and CIDRs (`192.168.1.0/24`). Answers the entries normalised; throws AllowListError
 * naming the first entry that is none of these.
 */
export function parseAllowedPrivateHosts(raw: string): string[] {
  const entries: string[] = [];
  for (const part of raw.split(',')) {
    const entry = normalizeHost(part);
    if (entry === '') continue;
    if (parseCidr(entry) !== null || isHostName(entry)) {
      if (!entries.includes(entry)) entries.push(entry);
      continue;
    }
    throw new AllowListError(`"${part.trim()}" is neither a host name nor an IP address or CIDR`);
  }
  return entries;
}

function asComparable(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (net.isIP(ip) === 0 || ip.includes('%')) return null;
  try {
    const parsed = ipaddr.parse(ip);
    // A mapped address reaches the embedded IPv4 host, so it matches the IPv4 ranges.
    return parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  } catch {
    return null;
  }
}

/**
 * The public-only policy plus the operator's entries: an address is allowed when it is public,
 * when it lies in one of the CIDRs, or when the URL's host is one of the names.
 */
export function allowListPolicy(entries: readonly string[]): AddressPolicy {
  const ranges: Cidr[] = [];
  const names = new Set<string>();
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (cidr !== null) ranges.push(cidr);
    else names.add(entry);
  }
  return (ip, hostname) => {
    if (isPublicAddress(ip)) return true;
    if (hostname !== undefined && names.has(canonicalHost(hostname))) return true;
    const address = asComparable(ip);
    if (address === null) return false;
    return ranges.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits));
  };
}

/** The settings that decide where the gateway may connect on a user's behalf. */
export interface DestinationSettings {
  readonly allowPrivateUrls: boolean;
  readonly allowedPrivateHosts: readonly string[];
}

/** The one policy for media and webhook destinations, from the settings. */
export function destinationPolicy(settings: DestinationSettings): AddressPolicy | 'allow-all' {
  if (settings.allowPrivateUrls) return 'allow-all';
  return settings.allowedPrivateHosts.length === 0 ? isPublicAddress : allowListPolicy(settings.allowedPrivateHosts);
}

/** What an operator can do about a refused destination; shown wherever a refusal is explained. */
export const PRIVATE_DESTINATION_HINT =
  'GATEWAY_ALLOWED_PRIVATE_HOSTS (host names and CIDRs) allows chosen private destinations; ' +
  'GATEWAY_ALLOW_PRIVATE_URLS=true allows all of them (development only)';
