/**
 * The composition root: builds every running part of the gateway from the configuration and the opened
 * store, and lists them as components with what each needs, so their start and stop order is derived
 * (lifecycle.ts) instead of kept by hand.
 *
 * Owns: which part is built with which other parts, and what each part needs while it runs.
 * Must never: decide a rule of a feature (each lives in its service), touch HTTP (app.ts registers the
 * routes), or be imported by anything but app.ts.
 */
import { MessageActions } from '../messages/actions.js';
import type { Logger } from 'pino';
import { TOKENS_REVOKED_SIGNAL } from '../accounts/service.js';
import { systemClock } from '../clock.js';
import { FencedWrites } from '../cluster/fenced-writes.js';
import { createCluster } from '../cluster/index.js';
import { ConnectionManager } from '../devices/connections.js';
import { DeviceDirectory } from '../devices/directory.js';
import { SqlNetworkStateStore } from '../devices/network-state.js';
import { DeviceNetworks, configuredNetwork } from '../devices/networks.js';
import { PairingService } from '../devices/pairing.js';
import { senderDirectory } from '../devices/senders.js';
import { DevicesService } from '../devices/service.js';
import { Dispatcher } from '../dispatch/dispatcher.js';
import { ContactBook } from '../contacts/book.js';
import { PictureFetcher } from '../contacts/picture.js';
import { ProfileService } from '../contacts/profile.js';
import { ContactsService } from '../contacts/service.js';
import { PhoneChatSettings } from '../chats/phone-settings.js';
import { ChatsService } from '../chats/service.js';
import { MessageReads } from '../messages/reads.js';
import { ContactUpdates } from '../contacts/updates.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../events/attempt.js';
import { Deliverer } from '../events/deliverer.js';
import { IncomingMessages } from '../events/incoming.js';
import { HistorySync } from '../messages/history-sync.js';
import { IncomingCalls } from '../devices/calls.js';
import { RepliesByResponse } from '../events/reply.js';
import { WebhooksService } from '../events/service.js';
import { AccountWebhooks } from '../webhooks/service.js';
import { EventSignal } from '../events/signal.js';
import { EVENTS_APPENDED_SIGNAL, LogWatch } from '../events/log-follow.js';
import { createBrokers } from '../destinations/index.js';
import { LogStreams } from '../events/log-streams.js';
import { GroupAdminService } from '../groups/admin.js';
import { MembersService } from '../groups/members.js';
import { GroupsService } from '../groups/service.js';
import { GroupSync } from '../groups/sync.js';
import { MediaUpkeep, MediaLinks, mediaOfMessages } from '../media/index.js';
import { MediaDownloader } from '../media/downloader.js';
import { MediaExpiry } from '../media/expiry.js';
import { MediaServing } from '../media/serving.js';
import { AcceptanceWriter } from '../messages/acceptance.js';
import { LinkPreviewer } from '../messages/link-preview.js';
import { messagesRepository } from '../messages/repository.js';
import { messageRetentionRepository } from '../messages/retention-repository.js';
import { MessagesService } from '../messages/service.js';
import { createNetwork, type NetworkHost } from '../network/create.js';
import { createGuardedDispatcher, destinationPolicy, destinationProblem } from '../outbound/index.js';
import { Committer, WriteBatcher } from '../store/batcher.js';
import { Retention } from '../store/retention.js';
import { lifecycle } from './lifecycle.js';

import type { Services, Root, RootInputs } from './root-types.js';

export type { RootOptions, Services, Root, RootInputs } from './root-types.js';

export function buildRoot({ config, clock, logger, store, accounts, options, whatsapp, publicUrl }: RootInputs): Root {
  // Which devices this process holds: all of them on SQLite; a fenced share of them on PostgreSQL (docs/internals.md, Clusters).
  const cluster = createCluster({
    store,
    databaseUrl: config.databaseUrl,
    name: config.serverName,
    url: config.advertiseUrl,
    clock: options.cluster?.clock ?? systemClock,
    logger: logger,
    timings: options.cluster,
    devicesWithWork: (deviceIds) => messagesRepository.devicesWithPending(store.db, deviceIds),
    // A token revoked on another node or by the CLI leaves this node's cache at once.
    others: {
      message: (message) => {
        if (message === TOKENS_REVOKED_SIGNAL) accounts.revokedElsewhere();
        // Another node appended to the event log (the log table's trigger, 013d).
        else if (message === EVENTS_APPENDED_SIGNAL) logWatch.ring();
      },
      connected: () => accounts.revokedElsewhere(),
    },
  });
  const clusterNode = cluster.node;
  const networks = new DeviceNetworks(store, configuredNetwork(config));
  const host: NetworkHost = {
    states: new SqlNetworkStateStore(
      store,
      clock,
      clusterNode === null ? undefined : (db, session) => clusterNode.fenceSession(db, session),
    ),
    // The network library logs warnings and worse only; its debug output would flood the log.
    logger: logger.child({ module: 'network' }, { level: 'warn' }) as unknown as Logger,
    // Once per connection: a paired device's own network, a pairing its account's (docs/internals.md, WhatsApp and sandbox accounts; docs/networks-per-device.md).
    networkOf: (deviceId, pairing) => networks.forConnection(deviceId, pairing),
  };
  const network =
    typeof options.network === 'function'
      ? options.network(host)
      : (options.network ?? createNetwork(config, host, whatsapp, options.sandbox));
  // Rung by the store after each commit of this process that recorded events (store/appends.ts), so the
  // deliverer, the streams and the brokers look at once, whichever writer recorded them.
  const eventSignal = new EventSignal();
  const stopRinging = store.appends.subscribe(eventSignal.ring);
  // Followers of the event log (streams, brokers) look after each such commit, here or on another node.
  const logWatch = new LogWatch({ db: store.db, signal: eventSignal, clock, logger, pollMs: options.eventLog?.pollMs });
  // One commit stream for every write of the hot path: acceptances and status changes share each fsync.
  const committer = new Committer(store.db);
  // One publisher per configured broker, fed from the log (one process of a cluster each, under a lease).
  const brokers = createBrokers({
    config: config.brokers,
    ...{ store, committer, watch: logWatch, clock, logger, serverName: config.serverName },
    ...(options.brokers === undefined ? {} : { timings: options.brokers }),
  });
  const logStreams = new LogStreams({
    db: store.db,
    watch: logWatch,
    clock,
    logger,
    settings: options.eventLog?.streams,
  });
  const connections = new ConnectionManager({
    store,
    clock,
    network,
    serverName: config.serverName,
    holdings: cluster.holdings,
    logger: logger,
    pairingWindowMs: config.pairingWindowS * 1000,
    pairingNetwork: (accountId, db) => networks.ofAccount(accountId, db),
    ...options.connections,
  });
  // Groups follow the network: synced on every `connected` and `groups_changed`.
  const groupSync = new GroupSync({ store, clock, connections, logger: logger });
  const batcher = new WriteBatcher(committer);
  // One policy for every destination a user names: public addresses, plus the operator's allowed private hosts.
  const outboundPolicy = destinationPolicy(config);
  const lookup = options.outboundLookup;
  const mediaAgent = createGuardedDispatcher({ policy: outboundPolicy, ...(lookup ? { lookup } : {}) });
  const dispatcher = new Dispatcher({
    store,
    writes: new FencedWrites(committer, cluster.holdings),
    clock,
    connections,
    holdings: cluster.holdings,
    logger: logger,
    sendIntervalMs: config.sendIntervalMs,
    linkPreviews: new LinkPreviewer({ dispatcher: mediaAgent, logger }),
    ...options.dispatch,
  });
  // Webhook URLs get the same address guard as media (docs/internals.md, Sending); a refused address is a failed attempt.
  const webhookAgent = createGuardedDispatcher({
    policy: outboundPolicy,
    connectTimeoutMs: options.webhooks?.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    ...(lookup ? { lookup } : {}),
  });
  const deliverer = new Deliverer({
    store,
    // On PostgreSQL the deliverer commits in a stream of its own (docs/internals.md, Webhooks): the server runs
    // commits of several connections at once and flushes their WAL together, so a claim or an outcome need not wait
    // behind the status writes' batch under way. SQLite has one writer and an fsync per commit: one stream.
    committer: store.capabilities.sharedByProcesses ? new Committer(store.db) : committer,
    clock,
    logger: logger,
    signal: eventSignal,
    http: webhookAgent,
    // Replies asked for by a receiver's answer go through POST /messages' own path (`messages` is built below).
    replies: new RepliesByResponse({
      send: (accountId, body, key) => messages.send(accountId, body, key),
      react: (accountId, reaction, key) => messages.react(accountId, reaction, key),
    }),
    perDeviceConcurrency: config.webhookInFlight,
    ...options.webhooks,
  });
  // Incoming media: signed URLs (real time: a URL's life is the receiver's), downloads, retention, serving.
  const mediaLinks = new MediaLinks({ store, clock, ttlS: config.mediaUrlTtlS, baseUrl: publicUrl });
  const downloader = new MediaDownloader({
    store,
    clock,
    logger,
    connections,
    holdings: cluster.holdings,
    maxBytes: config.incomingMediaMaxMb * 1024 * 1024,
    ...options.incomingMedia,
  });
  const mediaExpiry = new MediaExpiry({ store, clock, logger, retentionDays: config.incomingMediaRetentionDays });
  const mediaServing = new MediaServing({
    store,
    links: mediaLinks,
    clock: systemClock,
    ...(options.incomingMedia?.readyWaitMs === undefined ? {} : { readyWaitMs: options.incomingMedia.readyWaitMs }),
  });
  const incoming = new IncomingMessages({
    batcher,
    clock,
    connections,
    logger: logger,
    mediaLinks,
    onMediaPending: () => downloader.wake(),
  });
  // Calls are announced, and rejected where the device says so (its answer goes through POST /messages' path).
  const calls = new IncomingCalls({
    store,
    clock,
    connections,
    logger,
    messages: { send: (accountId, body, key) => messages.send(accountId, body, key) },
  });
  // The history a phone offers at pairing is stored, never announced message by message (DECISIONS 16).
  const history = new HistorySync({
    store,
    clock,
    connections,
    logger,
    days: config.historyDays,
  });
  const webhooks = new WebhooksService(store, clock, (deviceId) => deliverer.retryNow(deviceId));
  const accountWebhooks = new AccountWebhooks({
    store,
    clock,
    urlProblem: (url) => destinationProblem(url, { policy: outboundPolicy, ...(lookup ? { lookup } : {}) }),
    onDue: (webhookId) => deliverer.retryWebhookNow(webhookId),
  });
  const retention = new Retention({
    store,
    deleteMessages: messageRetentionRepository.deleteMessages,
    clock,
    logger: logger,
    webhookRetentionDays: config.webhookRetentionDays,
    eventRetentionDays: config.eventRetentionDays,
    messageRetentionDays: config.messageRetentionDays,
    ...options.retention,
  });
  // Chunks nobody owns are swept; the space deleted media leaves is given back (SQLite).
  const mediaUpkeep = new MediaUpkeep({ store, clock, logger: logger, ...options.mediaUpkeep });
  const directory = new DeviceDirectory(store);
  // Pairing and logout change which device a number names.
  connections.onEvent((_deviceId, event) => {
    if (event.type === 'connected' || event.type === 'logged_out') directory.invalidate();
  });
  const devices = new DevicesService(
    store,
    clock,
    () => connections,
    (deviceId) => {
      directory.invalidate();
      dispatcher.deviceChanged(deviceId);
      // The node holding it (maybe another) looks again: a suspension drops it, a new send interval applies.
      cluster.holdings.deviceChanged(deviceId);
    },
    (url) => destinationProblem(url, { policy: outboundPolicy, ...(lookup ? { lookup } : {}) }),
  );
  const pairing = new PairingService(devices, connections);
  const messages = new MessagesService({
    store,
    // Messages for devices held by another node wake it, from the accepting transaction (docs/internals.md, Clusters).
    writer: new AcceptanceWriter(committer, clock, (trx, deviceIds) => cluster.announceWork(trx, deviceIds)),
    clock,
    senders: senderDirectory({ directory, connections, node: clusterNode, serverName: config.serverName }),
    mediaDispatcher: mediaAgent,
    logger: logger,
    onAccepted: (deviceId) => dispatcher.notify(deviceId),
    incomingMedia: mediaOfMessages(store, mediaLinks),
  });
  const actions = new MessageActions({
    incomingMedia: mediaOfMessages(store, mediaLinks),
    store,
    committer,
    clock,
    senders: senderDirectory({ directory, connections, node: clusterNode, serverName: config.serverName }),
    messages,
    onAccepted: (deviceId) => dispatcher.notify(deviceId),
    announce: (trx, deviceIds) => cluster.announceWork(trx, deviceIds),
  });
  const groups = new GroupsService({ store, sync: groupSync, clock, connections, devices: directory, messages });
  const members = new MembersService({ store, clock, groups, sync: groupSync });
  const pictures = new PictureFetcher(mediaAgent);
  const groupAdmin = new GroupAdminService({
    pictures,
    store,
    clock,
    groups,
    sync: groupSync,
  });
  const contacts = new ContactsService({ devices: directory, connections });
  const chats = new ChatsService({
    store,
    clock,
    devices: directory,
    connections,
    reads: new MessageReads(store, directory, mediaOfMessages(store, mediaLinks)),
    actions,
  });
  const contactBook = new ContactBook({ store, clock, devices: directory, connections });
  const profile = new ProfileService({ store, book: contactBook, pictures });
  const contactUpdates = new ContactUpdates({ store, clock, connections, logger });
  const phoneChats = new PhoneChatSettings({ store, clock, connections, logger });

  const services = {
    accounts,
    devices,
    connections,
    network,
    networks,
    messages,
    actions,
    dispatcher,
    groupSync,
    retention,
    mediaUpkeep,
    cluster,
    eventLog: { signal: eventSignal, watch: logWatch, streams: logStreams },
    brokers,
    incomingMedia: { downloader, expiry: mediaExpiry, serving: mediaServing, links: mediaLinks },
  } satisfies Services;

  // What each part needs while it runs: it starts after those and stops before them. Joining the cluster
  // hands this node's devices to the parts listening for them, so it comes last; leaving it (the cluster's
  // stop) waits until sending and the connections have stopped, so the devices are handed over at once.
  const parts = lifecycle([
    { name: 'store', stop: () => store.close() },
    { name: 'webhook-agent', stop: () => webhookAgent.close() },
    {
      name: 'event-log',
      needs: ['store'],
      stop: () => {
        stopRinging();
        logWatch.stop();
      },
    },
    { name: 'brokers', needs: ['event-log'], start: () => brokers.start(), stop: () => brokers.close() },
    // Normally closed before the server stops listening (app.ts); this catches a consumer that came late.
    { name: 'event-streams', needs: ['event-log'], stop: () => logStreams.closeAll() },
    { name: 'media-agent', stop: () => mediaAgent.close() },
    { name: 'media-links', needs: ['store'], start: () => mediaLinks.start() },
    {
      name: 'incoming',
      needs: ['store', 'media-links'],
      start: () => incoming.start(),
      stop: () => incoming.close(),
    },
    {
      // Before the devices connect (it hears them connect); stopped before the connections close.
      name: 'media-downloads',
      needs: ['store', 'media-links', 'connections'],
      start: () => downloader.start(),
      stop: () => downloader.close(),
    },
    { name: 'media-expiry', needs: ['store'], start: () => mediaExpiry.start(), stop: () => mediaExpiry.close() },
    { name: 'group-sync', needs: ['store'], start: () => groupSync.start(), stop: () => groupSync.close() },
    { name: 'calls', needs: ['store'], start: () => calls.start(), stop: () => calls.close() },
    { name: 'history', needs: ['store'], start: () => history.start(), stop: () => history.close() },
    {
      name: 'contact-updates',
      needs: ['store'],
      start: () => contactUpdates.start(),
      stop: () => contactUpdates.close(),
    },
    { name: 'phone-chats', needs: ['store'], start: () => phoneChats.start(), stop: () => phoneChats.close() },
    { name: 'network', needs: ['store'], stop: () => network.close() },
    { name: 'retention', needs: ['store'], start: () => retention.start(), stop: () => retention.close() },
    { name: 'media-upkeep', needs: ['store'], start: () => mediaUpkeep.start(), stop: () => mediaUpkeep.close() },
    {
      name: 'deliverer',
      needs: ['store', 'webhook-agent'],
      start: () => deliverer.start(),
      // What is still to be delivered is in the store for the next start (or another node).
      stop: () => deliverer.close(),
    },
    { name: 'cluster', needs: ['store', 'network'], stop: () => cluster.close() },
    { name: 'connections', needs: ['network', 'cluster'], stop: () => connections.close() },
    {
      name: 'dispatcher',
      needs: ['connections', 'cluster'],
      start: () => dispatcher.start(),
      // Sending stops first (in-flight sends finish), so the devices can be handed back at once.
      stop: () => dispatcher.close(),
    },
    {
      // Every listener of connection events is in place before the first device connects.
      name: 'devices-open',
      needs: [
        'connections',
        'dispatcher',
        'incoming',
        'group-sync',
        'media-downloads',
        'calls',
        'history',
        'contact-updates',
      ],
      start: () => connections.start(),
    },
    { name: 'cluster-joined', needs: ['devices-open', 'dispatcher'], start: () => cluster.start() },
  ]);

  return {
    services,
    lifecycle: parts,
    clusterNode,
    directory,
    pairing,
    webhooks,
    accountWebhooks,
    groups,
    members,
    groupAdmin,
    contacts,
    chats,
    contactBook,
    profile,
  };
}
