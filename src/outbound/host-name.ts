// Owns what a URL's host means to the address policy: the one canonical spelling of a host (as the
// WHATWG URL parser reads it, with trailing dots, case, IPv4 shorthand and brackets removed) and the
// verdict on a host before any name is resolved. Every check of a user-supplied destination (the
// webhook URL check, the guarded connect for media and webhooks) judges hosts through here, so two
// spellings of one host can never get two answers. It must never resolve names or do I/O; names it
// cannot judge alone are left to the resolved-address check ('resolve').
import net from 'node:net';
import type { AddressPolicy } from './address-policy.js';

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * The host as the policy compares it: lower case, no brackets, no trailing dots, an IP address in
 * its one standard form (`0x7f.1`, `2130706433` and `127.1` all become `127.0.0.1`; IPv6 is
 * compressed). A host the WHATWG parser refuses is answered lower-cased and trimmed as given.
 */
export function canonicalHost(host: string): string {
  let value = unbracket(host.trim());
  let parsed: string;
  try {
    // The WHATWG parser is the reference for what a URL's host is: it decodes percent escapes,
    // maps full-width characters, applies IDNA and reads every IPv4 radix and shorthand.
    parsed = new URL(`http://${net.isIPv6(value) ? `[${value}]` : value}/`).hostname;
  } catch {
    parsed = value.toLowerCase();
  }
  value = unbracket(parsed).replace(/\.+$/, '');
  // "127.0.0.1." is still an IPv4 address once its dots are gone: read it again as one.
  if (value !== parsed && /^[0-9a-fx.]+$/.test(value)) {
    try {
      value = unbracket(new URL(`http://${value}/`).hostname);
    } catch {
      // Not an address; keep the name.
    }
  }
  return value;
}

/** Names that always mean this machine (RFC 6761: `localhost` and every name under it). */
export function isLoopbackName(canonical: string): boolean {
  return canonical === 'localhost' || canonical.endsWith('.localhost');
}

/** A host judged before resolution: refused outright, allowed outright, or up to its addresses. */
export type HostVerdict = 'allowed' | 'refused' | 'resolve';

function failClosed(policy: AddressPolicy, ip: string, hostname: string): boolean {
  try {
    return policy(ip, hostname) === true;
  } catch {
    return false;
  }
}

/**
 * The verdict on a URL's host under `policy`, before any lookup. An IP address (however spelled) is
 * judged as that address; a loopback name as the loopback address it stands for, since resolvers
 * differ on `localhost.` and `x.localhost` and one that fails must not make it pass; any other name
 * is 'resolve': the caller judges every address it resolves to, passing `canonicalHost(host)`.
 */
export function hostVerdict(policy: AddressPolicy, host: string): HostVerdict {
  const canonical = canonicalHost(host);
  if (net.isIP(canonical) !== 0) return failClosed(policy, canonical, canonical) ? 'allowed' : 'refused';
  if (isLoopbackName(canonical)) return failClosed(policy, '127.0.0.1', canonical) ? 'resolve' : 'refused';
  return 'resolve';
}
