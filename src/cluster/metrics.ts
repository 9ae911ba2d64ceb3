/**
 * Per-node gauges on /metrics (docs/internals.md, Clusters), read from the store when
 * scraped, so any node's /metrics shows the whole cluster.
 *
 * Owns: the gauge names and labels. Must never: fail a scrape because the
 * store is slow or down (the cluster gauges are then left out).
 */
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Cluster } from './index.js';
import { nodeStatuses, type NodeStatus } from './status.js';

/** One read of the nodes serves every gauge of a scrape (they are collected at once). */
const SNAPSHOT_MS = 500;

export function installClusterMetrics(registry: Registry, cluster: Cluster, clock: Clock): void {
  const node = cluster.node;
  if (node === null) return;
  let snapshot: { at: number; statuses: Promise<NodeStatus[]> } | null = null;
  const statuses = (): Promise<NodeStatus[]> => {
    const now = clock.now();
    if (snapshot === null || now - snapshot.at > SNAPSHOT_MS) {
      snapshot = {
        at: now,
        statuses: cluster.nodes().then(
          (rows) => nodeStatuses(rows, now, node.leaseMs),
          () => [],
        ),
      };
    }
    return snapshot.statuses;
  };
  const perNode = (name: string, help: string, value: (status: NodeStatus) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const status of await statuses()) this.set({ node: status.node }, value(status));
      },
    });
  perNode('gateway_cluster_node_up', 'Whether the node is ACTIVE (1) or DOWN (0)', (s) =>
    s.status === 'ACTIVE' ? 1 : 0,
  );
  perNode(
    'gateway_cluster_node_heartbeat_age_seconds',
    'Seconds since the node was last heard from',
    (s) => s.heartbeatAgeS,
  );
  perNode('gateway_cluster_node_devices', 'Devices whose lease the node holds', (s) => s.devices);
  perNode(
    'gateway_cluster_node_connected_devices',
    'Devices the node holds with their connection open',
    (s) => s.connected,
  );
  new Gauge({
    name: 'gateway_cluster_devices_held_here',
    help: 'Devices this node acts for now (its own view of its leases)',
    registers: [registry],
    collect() {
      this.set(node.heldDevices().length);
    },
  });
}
