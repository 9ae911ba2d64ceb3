/**
 * Which device sends for `POST /messages`, and whether it can send now: the messages service's sender
 * directory, answered from the device directory, this node's connections and, in a cluster, the other nodes.
 *
 * Owns: the rule that any node accepts for any device (docs/internals.md, Clusters): a device held by
 * another node counts as connected when its row says so and that node is up.
 * Must never: read leases (the cluster node answers whether a node is up) or open a connection.
 */
import type { ClusterNode } from '../cluster/node.js';
import type { SenderDirectory } from '../messages/service.js';
import type { ConnectionManager } from './connections.js';
import type { DeviceDirectory } from './directory.js';

export interface SendersOptions {
  readonly directory: DeviceDirectory;
  readonly connections: ConnectionManager;
  /** The cluster node on PostgreSQL; null with one node. */
  readonly node: Pick<ClusterNode, 'isUp'> | null;
  /** This node's name (GATEWAY_SERVER_NAME). */
  readonly serverName: string;
}

export function senderDirectory({ directory, connections, node, serverName }: SendersOptions): SenderDirectory {
  return {
    findByPhone: (accountId, phone) => directory.findByPhone(accountId, phone),
    findByPhoneIn: (db, accountId, phone) => directory.findByPhoneIn(db, accountId, phone),
    isConnected: (device) =>
      connections.isConnected(device.id) ||
      (node !== null &&
        device.connected === 1 &&
        device.server_name !== null &&
        device.server_name !== serverName &&
        node.isUp(device.server_name)),
    isRecovering: (device) => connections.isRecovering(device.id),
  };
}
