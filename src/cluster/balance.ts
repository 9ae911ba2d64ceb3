/**
 * How many devices a node should hold, and how many it should claim or hand
 * back in one round (docs/internals.md, Clusters: spread evenly, moved gradually).
 *
 * Owns: the arithmetic only. Must never: touch the store or the clock.
 */

export interface BalanceInput {
  /** Devices that need a connection, cluster-wide. */
  readonly wanted: number;
  /** Nodes alive now, this one included. */
  readonly liveNodes: number;
  /** Devices this node holds now (pairing attempts not counted). */
  readonly held: number;
  /** At most this many claimed in one round. */
  readonly maxClaims: number;
  /** At most this many handed back in one round, so a joining node takes its share gradually. */
  readonly maxReleases: number;
}

export interface BalancePlan {
  readonly target: number;
  readonly claim: number;
  readonly release: number;
}

/** Each node's share: every device held, none more than one above another node's count. */
export function fairShare(wanted: number, liveNodes: number): number {
  return Math.ceil(Math.max(0, wanted) / Math.max(1, liveNodes));
}

export function balance(input: BalanceInput): BalancePlan {
  const target = fairShare(input.wanted, input.liveNodes);
  if (input.held < target) {
    return { target, claim: Math.min(target - input.held, Math.max(0, input.maxClaims)), release: 0 };
  }
  return { target, claim: 0, release: Math.min(input.held - target, Math.max(0, input.maxReleases)) };
}
