/**
 * The cluster as the app wires it: on PostgreSQL a node (heartbeat, leases)
 * and a listener for wake-ups from other nodes; on SQLite the sole node,
 * holding everything, with nothing running.
 *
 * Owns: choosing between the two, and the calls the app makes at start, after
 * listening (the address other nodes forward to) and at shutdown.
 * Must never: decide anything about devices or messages.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/schema.js';
import { SoleHoldings, type DeviceHoldings } from './holdings.js';
import { ClusterNode, type ClusterTimings } from './node.js';
import { SignalListener, channelOf, notify, parseWork, workMessages } from './signals.js';
import { clusterRepository, type NodeRow } from './repository.js';

export interface Cluster {
  readonly holdings: DeviceHoldings;
  /** The node on PostgreSQL; null on SQLite. */
  readonly node: ClusterNode | null;
  start(): Promise<void>;
  /** Where other nodes reach this one (known once it listens). */
  advertise(url: string): Promise<void>;
  /** Inside an accepting transaction: wakes the nodes holding these devices once it commits. */
  announceWork(db: Db, deviceIds: readonly number[]): Promise<void>;
  /** Every node, for the device's `server` status, the CLI and metrics (empty on SQLite). */
  nodes(): Promise<NodeRow[]>;
  /**
   * Resolves once the wake-up listener has first connected and woken the node for it (at once on SQLite): tests that
   * drive rounds by hand wait for it, so that its round does not come between their writes.
   */
  listening(): Promise<void>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  readonly store: Store;
  readonly databaseUrl: string | null;
  readonly name: string;
  /** GATEWAY_ADVERTISE_URL, or null: http://HOST:PORT once listening. */
  readonly url: string | null;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly timings?: ClusterTimings;
  /** Which of these devices have work waiting (ClusterNodeOptions). */
  readonly devicesWithWork: (deviceIds: readonly number[]) => Promise<number[]>;
  /**
   * Notifications the cluster does not own (a token revoked: accounts/service.ts), and each
   * (re)connect of the listener, after which whatever was notified meanwhile may have been missed.
   */
  readonly others?: { readonly message: (message: string) => void; readonly connected: () => void };
}

export function createCluster(options: ClusterOptions): Cluster {
  if (options.databaseUrl === null || !options.store.capabilities.sharedByProcesses) {
    const holdings = new SoleHoldings(options.name);
    return {
      holdings,
      node: null,
      start: async () => undefined,
      advertise: async () => undefined,
      announceWork: async () => undefined,
      nodes: async () => [],
      listening: async () => undefined,
      close: async () => undefined,
    };
  }
  const { store, logger } = options;
  const databaseUrl = options.databaseUrl;
  let channel: string | null = null;
  let listener: SignalListener | null = null;
  const publish = async (message: string) => {
    if (channel !== null) await notify(store.db, channel, message);
  };
  const node = new ClusterNode({
    store,
    name: options.name,
    url: options.url ?? '',
    clock: options.clock,
    logger: logger.child({ module: 'cluster' }),
    publish,
    devicesWithWork: options.devicesWithWork,
    ...options.timings,
  });
  return {
    holdings: node,
    node,
    async start() {
      channel = await channelOf(store.db);
      listener = new SignalListener({
        databaseUrl,
        channel,
        logger,
        onMessage: (message) => {
          if (message.startsWith('w:')) node.work(parseWork(message));
          else node.signalled(message);
          options.others?.message(message);
        },
        // Anything notified while the listener was away is looked for now.
        onConnected: () => {
          node.wake();
          options.others?.connected();
        },
      });
      listener.start();
      await node.start();
    },
    async advertise(url) {
      if (options.url !== null) return;
      await clusterRepository.setUrl(store.db, node.node, node.instance, url);
    },
    async announceWork(db, deviceIds) {
      if (channel === null) return;
      // Devices held here are woken in this process after the commit; the others by their holder.
      const elsewhere = deviceIds.filter((id) => node.epochOf(id) === null);
      for (const message of workMessages(elsewhere)) await notify(db, channel, message);
    },
    nodes: () => clusterRepository.nodes(store.db),
    async listening() {
      // Not started yet: nothing to wait for (start makes the listener).
      await listener?.connected;
    },
    async close() {
      await node.close();
      await listener?.close();
    },
  };
}
