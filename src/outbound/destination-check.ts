// Owns the early warning for a URL the guard will refuse: when a user sets a destination (a
// device's webhook URL), say at once that nothing will ever reach it, instead of letting every
// delivery fail silently. It must never be the protection itself: the guarded dispatcher checks
// the address really connected to at every attempt (names can change what they resolve to), so
// this check may only refuse what is certain to be refused and must let through what it cannot
// judge (a name that does not resolve now, a slow resolver).
import dns from 'node:dns';
import net from 'node:net';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { AddressPolicy } from './address-policy.js';
import { PRIVATE_DESTINATION_HINT } from './allow-list.js';
import { canonicalHost, hostVerdict } from './host-name.js';

export interface DestinationCheckOptions {
  readonly policy: AddressPolicy | 'allow-all';
  /** Replaces dns.lookup (tests resolve made-up names with it). */
  readonly lookup?: LookupFunction;
  /** A lookup slower than this is not judged. Default 3000 ms. */
  readonly timeoutMs?: number;
}

const NOT_PUBLIC = 'an address that is not public (loopback, private, link-local, ...)';

function resolveAll(lookup: LookupFunction, hostname: string, timeoutMs: number): Promise<LookupAddress[] | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    try {
      lookup(hostname, { all: true }, (err, result) => {
        clearTimeout(timer);
        if (err) return resolve(null);
        resolve(Array.isArray(result) ? result : [{ address: result, family: net.isIP(result) }]);
      });
    } catch {
      clearTimeout(timer);
      resolve(null);
    }
  });
}

function judge(policy: AddressPolicy, ip: string, hostname: string): boolean {
  try {
    return policy(ip, hostname) === true;
  } catch {
    return false;
  }
}

/**
 * Why deliveries to `url` (an absolute http(s) URL) will always be refused, or null when they may
 * go through. A name counts as refused when any address it resolves to is refused, as at delivery.
 */
export async function destinationProblem(url: string, options: DestinationCheckOptions): Promise<string | null> {
  const { policy, lookup = dns.lookup as unknown as LookupFunction, timeoutMs = 3_000 } = options;
  if (policy === 'allow-all') return null;
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return null;
  }
  const verdict = hostVerdict(policy, hostname);
  if (verdict === 'refused') {
    return `the host is ${NOT_PUBLIC}, so nothing would ever be delivered; ${PRIVATE_DESTINATION_HINT}`;
  }
  if (verdict === 'allowed') return null;
  const name = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const addresses = await resolveAll(lookup, name, timeoutMs);
  if (addresses === null || addresses.length === 0) return null;
  const canonical = canonicalHost(hostname);
  if (addresses.every((entry) => judge(policy, entry.address, canonical))) return null;
  return `the host resolves to ${NOT_PUBLIC}, so nothing would ever be delivered; ${PRIVATE_DESTINATION_HINT}`;
}
