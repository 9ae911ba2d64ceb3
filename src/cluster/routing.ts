/**
 * Where a request for a device runs in a cluster (docs/internals.md, Clusters, PostgreSQL): here, on the
 * live node holding the device (forwarded), or nowhere for now (the device needs a connection and no live
 * node holds it).
 *
 * Owns: that decision, from the device's placement in the store and this node's own view of its leases.
 * Must never: forward a request that already hopped once, or send a request needing a live connection
 * to a node that is not up.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../store/schema.js';
import { clusterRepository, type Placement } from './repository.js';

/** How a request for a device is routed. */
export type Route =
  | { readonly kind: 'here' }
  | { readonly kind: 'forward'; readonly node: string; readonly url: string }
  | { readonly kind: 'unavailable' };

/** What routing needs of this node. */
export interface RoutingNode {
  readonly node: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  /** The epoch this node holds the device under now, or null. */
  epochOf(deviceId: number): number | null;
}

/**
 * Where a request needing the device's live connection should run. `anywhere`: the request can also
 * be served without the connection (deleting a device), so with no live holder it runs here.
 */
export async function routeDevice(
  db: Db,
  here: RoutingNode,
  deviceId: number,
  hop: boolean,
  anywhere: boolean,
): Promise<Route> {
  const [placement, wanted] = await Promise.all([
    clusterRepository.placement(db, deviceId),
    clusterRepository.isWanted(db, deviceId),
  ]);
  if (placement?.node === here.node) {
    return here.epochOf(deviceId) !== null || !wanted || anywhere ? { kind: 'here' } : { kind: 'unavailable' };
  }
  if (placement !== null && placement.node !== null && alive(placement, here.clock.now(), here.leaseMs)) {
    if (hop || placement.url === null) return { kind: 'unavailable' };
    return { kind: 'forward', node: placement.node, url: placement.url };
  }
  // Nobody live holds it: a device that needs no connection is handled here (a pairing attempt claims
  // it); one that does waits for a node to take it over.
  return wanted && !anywhere ? { kind: 'unavailable' } : { kind: 'here' };
}

function alive(p: Placement, now: number, leaseMs: number): boolean {
  return p.stoppedAt === null && p.heartbeatAt !== null && p.heartbeatAt >= now - leaseMs;
}
