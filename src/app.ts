/**
 * Builds the gateway as a Fastify application: store, services, routes and
 * the HTTP conventions. Tests build it and call `inject`; `main.ts` builds it
 * and listens.
 *
 * Owns: wiring. What each piece does lives in its feature folder.
 * Must never: listen on a port or handle signals (that is main.ts).
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import pino from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { newRequestId } from './ids.js';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { openStore, type Store } from './store/store.js';
import { AccountsService, TOKENS_REVOKED_SIGNAL } from './accounts/service.js';
import { tokenRoutes } from './accounts/routes.js';
import { DevicesService } from './devices/service.js';
import { deviceRoutes } from './devices/routes.js';
import { ConnectionManager } from './devices/connections.js';
import { PairingService } from './devices/pairing.js';
import { createNetwork, sandboxScope, type NetworkHost } from './network/create.js';
import { SqlNetworkStateStore } from './devices/network-state.js';
import { DeviceNetworks, configuredNetwork } from './devices/networks.js';
import type { Logger } from 'pino';
import type { Network } from './network/network.js';
import type { SandboxOptions } from './network/sandbox/index.js';
import { sandboxRoutes } from './sandbox-control/routes.js';
import { DeviceDirectory } from './devices/directory.js';
import { AcceptanceWriter } from './messages/acceptance.js';
import { Committer, WriteBatcher } from './store/batcher.js';
import { FencedWrites } from './cluster/fenced-writes.js';
import { MessagesService } from './messages/service.js';
import { messageRoutes } from './messages/routes.js';
import { GroupSync } from './groups/sync.js';
import { GroupsService } from './groups/service.js';
import { MembersService } from './groups/members.js';
import { groupRoutes } from './groups/routes.js';
import { ContactsService } from './contacts/service.js';
import { contactRoutes } from './contacts/routes.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { EventSignal } from './events/signal.js';
import { Deliverer, type WebhookTimings } from './events/deliverer.js';
import { RepliesByResponse } from './events/reply.js';
import { IncomingMessages } from './events/incoming.js';
import { installIncomingMetrics } from './events/incoming-metrics.js';
import { WebhooksService } from './events/service.js';
import { webhookRoutes } from './events/routes.js';
import type { LookupFunction } from 'node:net';
import { createGuardedDispatcher, destinationPolicy, destinationProblem } from './outbound/index.js';
import { installAuth } from './http/auth.js';
import { installErrorHandling, sendError } from './http/error-handler.js';
import { installTwinStatus } from './http/envelope.js';
import { ApiError } from './http/errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './http/json-depth.js';
import { installFormBodies } from './http/forms.js';
import { installValidation, isOptionalBody } from './http/validation.js';
import { capConnections, serverTimeoutOptions } from './http/server-limits.js';
import { installOpenApi, isHiddenAlias } from './http/openapi.js';
import { healthRoutes } from './http/health.js';
import { gatewayInfoRoutes } from './http/gateway-info.js';
import { dashboardRoutes, defaultDashboardDir, isDashboardPath } from './http/dashboard.js';
import { requestUrlForLog, urlForLog } from './http/log-redaction.js';
import { createMetricsRegistry, installHttpMetrics } from './http/metrics.js';
import { Retention, type RetentionTimings } from './store/retention.js';
import { createCluster, type Cluster } from './cluster/index.js';
import type { ClusterTimings } from './cluster/node.js';
import { installForwarding } from './cluster/forward.js';
import { holderLookups } from './cluster/holder-routes.js';
import { installClusterMetrics } from './cluster/metrics.js';
import { MediaUpkeep, installMediaMetrics } from './media/index.js';

export interface BuildOptions {
  readonly config: Config;
  readonly clock?: Clock;
  /**
   * Fastify logger options; `false` silences (tests). Defaults to JSON lines at
   * config.logLevel on standard output, written in blocks (see `gatewayLogger`).
   */
  readonly logger?: FastifyServerOptions['logger'];
  /** SQLite file name under the data dir (tests use their own). */
  readonly sqliteFile?: string;
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
    maxConcurrentConnects?: number;
    replacedRetryMs?: number;
    outdatedRetryMs?: number;
  };
  /** Webhook delivery timings and bounds (tests shorten them). */
  readonly webhooks?: WebhookTimings;
  /** Where the built dashboard is (default dist/dashboard beside the server code). */
  readonly dashboardDir?: string;
  /** Name resolution for media and webhook destinations instead of dns.lookup (tests fake names with it). */
  readonly outboundLookup?: LookupFunction;
  /** Retention sweep timings (tests shorten them). */
  readonly retention?: RetentionTimings;
  /** Free space the media upkeep keeps rather than gives back (tests set 0). */
  readonly mediaUpkeep?: { readonly keepFreeBytes?: number };
  /** Cluster timings (PostgreSQL), and the clock of leases (default: the system's, whatever `clock` is). */
  readonly cluster?: ClusterTimings & { readonly clock?: Clock };
}

export interface Services {
  readonly accounts: AccountsService;
  readonly devices: DevicesService;
  readonly connections: ConnectionManager;
  readonly network: Network;
  /** Which network each device is on (docs/networks-per-device.md). */
  readonly networks: DeviceNetworks;
  readonly messages: MessagesService;
  readonly dispatcher: Dispatcher;
  readonly groupSync: GroupSync;
  readonly retention: Retention;
  readonly mediaUpkeep: MediaUpkeep;
  readonly cluster: Cluster;
}

export interface RouteInfo {
  readonly method: string;
  readonly url: string;
  readonly public: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for tests that must cover them all (e.g. auth). */
    routeCatalog: RouteInfo[];
    store: Store;
    services: Services;
  }
}

/**
 * Paths and fields whose values are secrets; pino replaces them before a line
 * is written. Exact paths only: wildcard paths made redaction a visible share
 * of every request's cost, and nothing logs secrets nested deeper than these.
 */
const REDACT = [
  'req.headers.authorization',
  'token',
  'webhook_secret',
  'webhook_secret_previous',
  'network_session',
  'device.webhook_secret',
  'device.webhook_secret_previous',
  'device.network_session',
];

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: REDACT, censor: '[redacted]' },
    serializers: {
      // Never headers (tokens travel there); the URL without query values or anything shaped like a secret.
      req: (req: { method: string; url: string }) => ({ method: req.method, url: urlForLog(req.url) }),
    },
  };
}

/** How long a log line may wait in the output buffer before it is written. */
export const LOG_FLUSH_MS = 100;

/**
 * The gateway's own logger: JSON lines on standard output, gathered into
 * blocks of up to 4 KiB and written at least every LOG_FLUSH_MS, instead of a
 * write per line. Under load that is one system call for dozens of requests,
 * not one each. What is buffered is written on any exit, including a crash;
 * a SIGKILL loses at most the last LOG_FLUSH_MS of lines (never data: logs
 * are not the record of anything).
 */
export function gatewayLogger(config: Config): FastifyBaseLogger {
  return pino(loggerOptions(config) as pino.LoggerOptions, logOutput());
}

/** Standard output in blocks, as `gatewayLogger` writes it (also used by bench/fastify-floor.ts). */
export function logOutput(): pino.DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS });
}

/**
 * On an empty store (and no GATEWAY_BOOTSTRAP_TOKEN), creates the `default`
 * account and prints its one-time token. Called once the gateway listens
 * (main.ts), so a start that fails before (port taken, bad network setting)
 * leaves the store empty and the next start prints a token.
 */
export async function printBootstrapToken(app: FastifyInstance, config: Config): Promise<void> {
  if (config.bootstrapToken !== null) return;
  const { printedToken } = await app.services.accounts.bootstrap(null);
  if (printedToken === null) return;
  app.log.info(
    { api_token: printedToken },
    'Created account "default". Its API token is shown here once; keep it (it is stored only as a hash). ' +
      'To make another: gateway tokens create --account default',
  );
}

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const app = Fastify({
    ...(options.logger === undefined ? { loggerInstance: gatewayLogger(config) } : { logger: options.logger }),
    bodyLimit: 1024 * 1024,
    // Bounded time for every request and idle connection; parser refusals answered in the envelope.
    ...serverTimeoutOptions(config.http),
    // One line per request, written in onResponse, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
    },
    routerOptions: { ignoreTrailingSlash: true },
    // A URL that cannot be decoded never reaches a route; answer it in the envelope too.
    frameworkErrors: (_error, _request, reply) =>
      sendError(reply, new ApiError('BAD_REQUEST', { error: 'malformed URL' })),
  }).withTypeProvider<TypeBoxTypeProvider>();

  capConnections(app, config.http);
  installValidation(app);
  installErrorHandling(app);
  installTwinStatus(app);
  // JSON and forms (docs/internals.md, Whatspie compatibility) are the bodies the API takes; anything else is 415, not parsed as text.
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      const error = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;
      done(new ApiError('VALIDATION_FAILED', { errors: { body: [error] } }), undefined);
      return;
    }
    // A route whose body may be left out takes `Content-Type: application/json` with nothing after it as no body.
    if (body === '' && isOptionalBody(request.routeOptions.schema?.body)) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
  installFormBodies(app);

  app.decorate('routeCatalog', [] as RouteInfo[]);
  app.addHook('onRoute', (route) => {
    // Every API route is served at its spec path and again with or without /api; the alias stays out of the docs.
    if (isHiddenAlias(route.prefix, route.config)) route.schema = { ...route.schema, hide: true };
    if (route.url.startsWith('/docs') || isDashboardPath(route.url)) route.config = { ...route.config, public: true };
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      app.routeCatalog.push({ method, url: route.url, public: route.config?.public === true });
    }
  });
  // Callback-style hooks: on every request, an async hook would cost a promise and a turn of the microtask queue.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: requestUrlForLog(request),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
    done();
  });

  // One gateway per SQLite data directory (docs/internals.md, Clusters); the CLI opens the same store without this.
  const store = openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteFile: options.sqliteFile,
    exclusive: true,
    onUpkeep: ({ what, failed, ...fields }) =>
      (failed === true ? app.log.warn : app.log.info).call(app.log, fields, what),
  });
  app.decorate('store', store);
  const accounts = new AccountsService(
    store,
    clock,
    (error) => app.log.warn({ err: error }, 'token bookkeeping failed'),
    sandboxScope(config),
  );
  try {
    await store.migrate();
    // A configured token is known to its operator already: in place before the first request, never printed.
    // Without one, an empty store gets its token from `printBootstrapToken`, once the gateway listens.
    if (config.bootstrapToken !== null) await accounts.bootstrap(config.bootstrapToken);
  } catch (error) {
    // Nothing else holds the store yet: let go of it (and of the data directory's lock) before failing.
    await store.close();
    throw error;
  }
  // Which devices this process holds: all of them on SQLite; a fenced share of them on PostgreSQL (docs/internals.md, Clusters).
  const cluster = createCluster({
    store,
    databaseUrl: config.databaseUrl,
    name: config.serverName,
    url: config.advertiseUrl,
    clock: options.cluster?.clock ?? systemClock,
    logger: app.log,
    timings: options.cluster,
    // A token revoked on another node or by the CLI leaves this node's cache at once.
    others: {
      message: (message) => {
        if (message === TOKENS_REVOKED_SIGNAL) accounts.revokedElsewhere();
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
    logger: app.log.child({ module: 'network' }, { level: 'warn' }) as unknown as Logger,
    // Once per connection: a paired device's own network, a pairing its account's (docs/internals.md, WhatsApp and sandbox accounts; docs/networks-per-device.md).
    networkOf: (deviceId, pairing) => networks.forConnection(deviceId, pairing),
  };
  const network =
    typeof options.network === 'function'
      ? options.network(host)
      : (options.network ?? createNetwork(config, host, options.sandbox));
  // Rung after each commit that recorded webhook events, so the deliverer looks at once.
  const eventSignal = new EventSignal();
  const connections = new ConnectionManager({
    store,
    clock,
    network,
    serverName: config.serverName,
    holdings: cluster.holdings,
    logger: app.log,
    pairingWindowMs: config.pairingWindowS * 1000,
    onEventsRecorded: eventSignal.ring,
    pairingNetwork: (accountId, db) => networks.ofAccount(accountId, db),
    ...options.connections,
  });
  // Groups follow the network: synced on every `connected` and `groups_changed`.
  const groupSync = new GroupSync({ store, clock, connections, logger: app.log });
  groupSync.start();
  // One commit stream for every write of the hot path: acceptances and status changes share each fsync.
  const committer = new Committer(store.db);
  const batcher = new WriteBatcher(committer);
  const dispatcher = new Dispatcher({
    store,
    writes: new FencedWrites(committer, cluster.holdings),
    clock,
    connections,
    holdings: cluster.holdings,
    logger: app.log,
    sendIntervalMs: config.sendIntervalMs,
    onEventsRecorded: eventSignal.ring,
    ...options.dispatch,
  });
  // One policy for every destination a user names: public addresses, plus the operator's allowed private hosts.
  const outboundPolicy = destinationPolicy(config);
  const lookup = options.outboundLookup;
  const mediaAgent = createGuardedDispatcher({ policy: outboundPolicy, ...(lookup ? { lookup } : {}) });
  // Webhook URLs get the same address guard as media (docs/internals.md, Sending); a refused address is a failed attempt.
  const webhookAgent = createGuardedDispatcher({
    policy: outboundPolicy,
    connectTimeoutMs: options.webhooks?.timeoutMs ?? 5_000,
    ...(lookup ? { lookup } : {}),
  });
  const deliverer = new Deliverer({
    store,
    committer,
    clock,
    logger: app.log,
    signal: eventSignal,
    http: webhookAgent,
    // Replies asked for by a receiver's answer go through POST /messages' own path (`messages` is built below).
    replies: new RepliesByResponse({
      send: (accountId, body, key) => messages.send(accountId, body, key),
      react: (accountId, reaction, key) => messages.react(accountId, reaction, key),
    }),
    ...options.webhooks,
  });
  const incoming = new IncomingMessages({ batcher, clock, connections, logger: app.log, signal: eventSignal });
  const webhooks = new WebhooksService(store, clock, (deviceId) => deliverer.retryNow(deviceId));
  const retention = new Retention({
    store,
    clock,
    logger: app.log,
    webhookRetentionDays: config.webhookRetentionDays,
    messageRetentionDays: config.messageRetentionDays,
    ...options.retention,
  });
  // Chunks nobody owns are swept; the space deleted media leaves is given back (SQLite).
  const mediaUpkeep = new MediaUpkeep({ store, clock, logger: app.log, ...options.mediaUpkeep });
  // Closed in reverse order of use: the queue first (in-flight sends finish), then connections, the network, the store.
  app.addHook('onClose', async () => {
    // Sending stops first and the devices are handed back at once, so other nodes reconnect them within seconds.
    await dispatcher.close();
    await connections.close();
    await cluster.close();
    // What is still to be delivered is in the store for the next start (or another node).
    await deliverer.close();
    await mediaUpkeep.close();
    await retention.close();
    await network.close();
    await groupSync.close();
    await mediaAgent.close();
    await incoming.close();
    await webhookAgent.close();
    await store.close();
  });
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
    senders: {
      findByPhone: (accountId, phone) => directory.findByPhone(accountId, phone),
      // Any node accepts for any device (docs/internals.md, Clusters): held elsewhere, the row says whether its node has it open.
      isConnected: (device) =>
        connections.isConnected(device.id) ||
        (clusterNode !== null &&
          device.connected === 1 &&
          device.server_name !== null &&
          device.server_name !== config.serverName &&
          clusterNode.isUp(device.server_name)),
      isRecovering: (device) => connections.isRecovering(device.id),
    },
    mediaDispatcher: mediaAgent,
    logger: app.log,
    onAccepted: (deviceId) => dispatcher.notify(deviceId),
  });
  const groups = new GroupsService({ store, sync: groupSync, clock, connections, devices: directory, messages });
  const members = new MembersService({ store, clock, groups, sync: groupSync, onEventsRecorded: eventSignal.ring });
  const contacts = new ContactsService({ devices: directory, connections });
  app.decorate('services', {
    accounts,
    devices,
    connections,
    network,
    networks,
    messages,
    dispatcher,
    groupSync,
    retention,
    mediaUpkeep,
    cluster,
  } satisfies Services);

  // A device's `server.status`: the cluster's view of its node (with one node: this one is up).
  const serverUp = clusterNode === null ? undefined : (name: string) => clusterNode.isUp(name);
  const metrics = createMetricsRegistry();
  installHttpMetrics(app, metrics);
  installClusterMetrics(metrics, cluster, systemClock);
  installMediaMetrics(metrics, store, systemClock);
  installIncomingMetrics(metrics, connections);
  installAuth(app, accounts);
  // Requests that need a device's live connection run on the node holding it (docs/internals.md, Clusters).
  if (clusterNode !== null) {
    installForwarding(app, { node: clusterNode, lookups: holderLookups({ store, directory }), logger: app.log });
  }
  await installOpenApi(app, `Network: ${network.description}. Store: ${store.description.split(' ')[0]}.`);
  // Every route is also served under /api (docs/internals.md, Answers and errors); the alias stays out of the document.
  for (const prefix of ['', '/api']) await app.register(healthRoutes, { store, metrics, prefix });
  await app.register(dashboardRoutes, { dir: options.dashboardDir ?? defaultDashboardDir });

  for (const prefix of ['', '/api']) {
    await app.register(
      async (api) => {
        await api.register(tokenRoutes, { accounts });
        await api.register(gatewayInfoRoutes, {
          network: config.network,
          sandboxControl: network.sandbox !== undefined,
          serverName: config.serverName,
          accounts,
        });
        await api.register(deviceRoutes, { devices, pairing, serverName: config.serverName, serverUp, networks });
        await api.register(messageRoutes, { messages });
        await api.register(webhookRoutes, { webhooks, serverName: config.serverName, serverUp, networks });
        await api.register(groupRoutes, { groups, members });
        await api.register(contactRoutes, { contacts });
        if (network.sandbox !== undefined)
          await api.register(sandboxRoutes, { sandbox: network.sandbox, store, accounts, devices, pairing });
      },
      { prefix },
    );
  }
  app.addHook('onReady', async () => {
    mediaUpkeep.start();
    dispatcher.start();
    incoming.start();
    await connections.start();
    // After the connection manager and dispatcher listen: the devices this node holds are handed to them.
    await cluster.start();
    await deliverer.start();
    retention.start();
  });
  return app;
}
