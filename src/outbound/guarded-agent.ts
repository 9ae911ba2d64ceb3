// Owns the one place where outbound connections to user-supplied URLs (media, webhooks) are
// opened, and the guarantee that each TCP connection goes only to an address the policy accepts.
// The check runs on the resolved address at connect time (not on the URL's name beforehand), so a
// name that resolves differently between a "validation" lookup and the connect (DNS rebinding)
// gains nothing. It must never fall back to an unchecked connect, and must never know about media
// or webhooks: callers layer their own rules on top.
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { canonicalHost, hostVerdict } from './host-name.js';

/** A connection was refused because its destination address is not allowed by the policy. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'ERR_BLOCKED_ADDRESS';

  // The message stays generic on purpose: it may end up in an API answer or a webhook delivery
  // log, and revealing where an internal name resolves to would help an attacker map the network.
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super('Destination address is not allowed');
  }
}

/**
 * The first error code (`ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`, ...) along an outbound
 * failure's `cause` chain: undici wraps connect errors, and the innermost code is the informative one.
 */
export function outboundErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Finds a BlockedAddressError in an error's `cause` chain (undici's fetch wraps connect errors). */
export function findBlockedAddressError(error: unknown): BlockedAddressError | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof BlockedAddressError) return current;
    queue.push((current as { cause?: unknown }).cause);
    if (current instanceof AggregateError) queue.push(...current.errors);
  }
  return undefined;
}

export interface GuardedDispatcherOptions {
  /** Which addresses may be connected to; 'allow-all' is for development and tests only. */
  policy: AddressPolicy | 'allow-all';
  /** Time allowed for DNS lookup plus TCP (and TLS) connect. Default 10000 ms. */
  connectTimeoutMs?: number;
  /** Replaces dns.lookup (tests resolve made-up names with it). Called with `all: true`. */
  lookup?: LookupFunction;
  /** Reuse connections between requests (HTTP keep-alive). Default true. */
  keepAlive?: boolean;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

const systemLookup = dns.lookup as unknown as LookupFunction;

/**
 * Wraps a lookup function so that a name resolving to any refused address fails with
 * BlockedAddressError. One bad address refuses the whole name rather than being filtered out: a
 * public name has no business pointing into private space, and Happy Eyeballs would otherwise be
 * free to pick whichever address answers first.
 */
export function createGuardedLookup(policy: AddressPolicy, lookup: LookupFunction = systemLookup): LookupFunction {
  const allowed = failClosed(policy);
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    lookup(hostname, { ...options, all: true }, (err, result) => {
      if (err) {
        callback(err, '');
        return;
      }
      const addresses: LookupAddress[] = Array.isArray(result)
        ? result
        : [{ address: result, family: net.isIP(result) }];
      if (addresses.length === 0) {
        callback(Object.assign(new Error(`No address found for ${hostname}`), { code: 'ENOTFOUND' }), '');
        return;
      }
      const canonical = canonicalHost(hostname);
      const refused = addresses.find((entry) => !allowed(entry.address, canonical));
      if (refused) {
        callback(new BlockedAddressError(hostname, refused.address), '');
        return;
      }
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

// A policy that throws (say, on an address form it did not expect) must refuse, not crash the
// socket's event handler.
function failClosed(policy: AddressPolicy): AddressPolicy {
  return (ip, hostname) => {
    try {
      return policy(ip, hostname) === true;
    } catch {
      return false;
    }
  };
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Builds an undici Agent for requests to untrusted URLs. Use it as `dispatcher` with undici's
 * `request`/`fetch`; a refused destination rejects the request with a BlockedAddressError (directly,
 * or as the `cause` of fetch's TypeError; see findBlockedAddressError).
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  const { policy, connectTimeoutMs = 10_000, lookup, keepAlive = true } = options;
  const agentOptions = {
    // pipelining 0 is undici's way to say "one request per connection, then close".
    pipelining: keepAlive ? 1 : 0,
  };

  if (policy === 'allow-all') {
    return new Agent({
      ...agentOptions,
      connect: { timeout: connectTimeoutMs, ...(lookup ? { lookup } : {}) },
    });
  }

  const allowed = failClosed(policy);
  const connectChecked = buildConnector({ timeout: connectTimeoutMs, lookup: createGuardedLookup(allowed, lookup) });

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname);
    // Judged before any lookup: net.connect skips the lookup for IP literals, so the guarded lookup
    // never sees them, and a loopback name must not depend on what the resolver makes of it.
    if (hostVerdict(allowed, host) === 'refused') {
      process.nextTick(callback, new BlockedAddressError(host, host), null);
      return;
    }
    connectChecked(connectOptions, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      // Last line of defence: whatever path the connect took, the peer we ended up talking to must
      // itself be allowed. Nothing has been written on the socket yet.
      const remote = socket.remoteAddress;
      if (remote === undefined || !allowed(remote, canonicalHost(host))) {
        socket.destroy();
        callback(new BlockedAddressError(host, remote ?? 'unknown'), null);
        return;
      }
      callback(null, socket);
    });
  };

  return new Agent({ ...agentOptions, connect });
}
