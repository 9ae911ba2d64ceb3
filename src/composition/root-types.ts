/**
 * The composition root's shapes: what a caller may set besides the configuration, the services it hands out, and
 * what it answers (root.ts builds them).
 *
 * Owns: these types only.
 * Must never: build anything, or be imported by anything but app.ts and root.ts.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { MessageActions } from '../messages/actions.js';
import type { LookupFunction } from 'node:net';
import type { AccountsService } from '../accounts/service.js';
import type { Clock } from '../clock.js';
import type { Cluster } from '../cluster/index.js';
import type { ClusterNode, ClusterTimings } from '../cluster/node.js';
import type { Config } from '../config.js';
import type { ConnectionManager } from '../devices/connections.js';
import type { DeviceDirectory } from '../devices/directory.js';
import type { DeviceNetworks } from '../devices/networks.js';
import type { PairingService } from '../devices/pairing.js';
import type { DevicesService } from '../devices/service.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { ContactBook } from '../contacts/book.js';
import type { ProfileService } from '../contacts/profile.js';
import type { ContactsService } from '../contacts/service.js';
import type { ChatsService } from '../chats/service.js';
import type { WebhookTimings } from '../events/deliverer.js';
import type { WebhooksService } from '../events/service.js';
import type { AccountWebhooks } from '../webhooks/service.js';
import type { EventSignal } from '../events/signal.js';
import type { LogWatch } from '../events/log-follow.js';
import type { Brokers, BrokerTimings } from '../destinations/index.js';
import type { LogStreams, StreamSettings } from '../events/log-streams.js';
import type { GroupAdminService } from '../groups/admin.js';
import type { MembersService } from '../groups/members.js';
import type { GroupsService } from '../groups/service.js';
import type { GroupSync } from '../groups/sync.js';
import type { MediaUpkeep, MediaLinks } from '../media/index.js';
import type { MediaDownloader } from '../media/downloader.js';
import type { MediaExpiry } from '../media/expiry.js';
import type { MediaServing } from '../media/serving.js';
import type { MessagesService } from '../messages/service.js';
import type { NetworkHost, WhatsAppConnector } from '../network/create.js';
import type { Network } from '../network/network.js';
import type { SandboxOptions } from '../network/sandbox/index.js';
import type { Retention, RetentionTimings } from '../store/retention.js';
import type { Store } from '../store/store.js';
import type { Lifecycle } from './lifecycle.js';

/** What a caller may set besides the configuration (tests shorten timings and replace the network). */
export interface RootOptions {
  /**
   * A network to use instead of the configured one (tests), or a maker of one given what the app
   * would hand the configured one (its store for network state, its logger). Closed with the app.
   */
  readonly network?: Network | ((host: NetworkHost) => Network);
  /** Settings of the in-process sandbox (QR rotation, receipt latencies). */
  readonly sandbox?: SandboxOptions;
  /** Dispatcher retry timings (tests shorten them). */
  readonly dispatch?: { retryBaseMs?: number; retryMaxMs?: number; maxAttempts?: number; maxQueuedMs?: number };
  /** Connection manager timings (tests shorten them). */
  readonly connections?: {
    qrWaitMs?: number;
    reconnectBaseMs?: number;
    reconnectMaxMs?: number;
    reconnectJitter?: () => number;
    maxConcurrentConnects?: number;
    replacedRetryMs?: number;
    outdatedRetryMs?: number;
  };
  /** Webhook delivery timings and bounds (tests shorten them). */
  readonly webhooks?: WebhookTimings;
  /** Name resolution for media and webhook destinations instead of dns.lookup (tests fake names with it). */
  readonly outboundLookup?: LookupFunction;
  /** Retention sweep timings (tests shorten them). */
  readonly retention?: RetentionTimings;
  /** Free space the media upkeep keeps rather than gives back (tests set 0). */
  readonly mediaUpkeep?: { readonly keepFreeBytes?: number };
  /** Incoming media download timings (tests shorten them). */
  readonly incomingMedia?: { readonly retryBaseMs?: number; readonly stallMs?: number; readonly readyWaitMs?: number };
  /** Cluster timings (PostgreSQL), and the clock of leases (default: the system's, whatever `clock` is). */
  readonly cluster?: ClusterTimings & { readonly clock?: Clock };
  /** The event log's followers (events/log-follow.ts): the head poll; the streams' bounds (tests shorten them). */
  readonly eventLog?: { readonly pollMs?: number; readonly streams?: Partial<StreamSettings> };
  /** Broker publishing timings (src/destinations/driver.ts; tests shorten them). */
  readonly brokers?: BrokerTimings & { readonly confirmTimeoutMs?: number };
}

export interface Services {
  readonly accounts: AccountsService;
  readonly devices: DevicesService;
  readonly connections: ConnectionManager;
  readonly network: Network;
  /** Which network each device is on (docs/networks-per-device.md). */
  readonly networks: DeviceNetworks;
  readonly messages: MessagesService;
  readonly actions: MessageActions;
  readonly dispatcher: Dispatcher;
  readonly groupSync: GroupSync;
  readonly retention: Retention;
  readonly mediaUpkeep: MediaUpkeep;
  readonly cluster: Cluster;
  /** The event log's wake-ups: rung after commits that recorded events, here or (PostgreSQL) on another node. */
  readonly eventLog: { readonly signal: EventSignal; readonly watch: LogWatch; readonly streams: LogStreams };
  /** RabbitMQ and NATS publishers of the event log (docs/brokers.md), those the configuration names. */
  readonly brokers: Brokers;
  /** Incoming media: its downloads, its retention and its serving (src/media/). */
  readonly incomingMedia: {
    readonly downloader: MediaDownloader;
    readonly expiry: MediaExpiry;
    readonly serving: MediaServing;
    readonly links: MediaLinks;
  };
}

/** Everything built, for app.ts to hand to the routes. */
export interface Root {
  readonly services: Services;
  /** Start and stop of every running part, in derived order. */
  readonly lifecycle: Lifecycle;
  readonly clusterNode: ClusterNode | null;
  readonly directory: DeviceDirectory;
  readonly pairing: PairingService;
  readonly webhooks: WebhooksService;
  /** The account's webhooks (src/webhooks/). */
  readonly accountWebhooks: AccountWebhooks;
  readonly groups: GroupsService;
  readonly members: MembersService;
  readonly groupAdmin: GroupAdminService;
  readonly contacts: ContactsService;
  readonly chats: ChatsService;
  readonly contactBook: ContactBook;
  readonly profile: ProfileService;
}

export interface RootInputs {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** Opened and migrated by app.ts (a failed migration lets go of it before anything else holds it). */
  readonly store: Store;
  readonly accounts: AccountsService;
  readonly options: RootOptions;
  /** Loaded by app.ts when the gateway runs WhatsApp (network/create.ts `loadWhatsApp`), else null. */
  readonly whatsapp: WhatsAppConnector | null;
  /** The gateway's public address for signed media URLs (known once it listens). */
  readonly publicUrl: () => string;
}
