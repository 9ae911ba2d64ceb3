/**
 * The cluster as operators see it: each node, whether it is up, how long ago
 * it was heard from, and how many devices it holds and has connected (the
 * `gateway cluster status` command and the per-node metrics).
 *
 * Owns: turning node rows into that view. Must never: change anything.
 */
import type { NodeRow } from './repository.js';

/** A node silent this long is DOWN (docs/internals.md, Clusters); also the lease time. */
export const DEFAULT_LEASE_MS = 15_000;

export interface NodeStatus {
  readonly node: string;
  readonly status: 'ACTIVE' | 'DOWN';
  /** Seconds since its last heartbeat, one decimal. */
  readonly heartbeatAgeS: number;
  readonly devices: number;
  readonly connected: number;
  readonly url: string;
  /** Stopped cleanly (SIGTERM), rather than gone silent. */
  readonly stopped: boolean;
}

export function nodeStatuses(rows: readonly NodeRow[], now: number, leaseMs = DEFAULT_LEASE_MS): NodeStatus[] {
  return rows.map((row) => ({
    node: row.name,
    status: row.stoppedAt === null && now - row.heartbeatAt < leaseMs ? 'ACTIVE' : 'DOWN',
    heartbeatAgeS: Math.max(0, Math.round((now - row.heartbeatAt) / 100) / 10),
    devices: row.devices,
    connected: row.connected,
    url: row.url,
    stopped: row.stoppedAt !== null,
  }));
}
