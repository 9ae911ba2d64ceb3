/**
 * Builds the gateway as a Fastify application: store, services, routes and
 * the HTTP conventions. Tests build it and call `inject`; `main.ts` builds it
 * and listens.
 *
 * Owns: the HTTP conventions and registering the routes. What is built with what, and the start and stop
 * order, is the composition root's (src/composition/root.ts); what each piece does lives in its feature folder.
 * Must never: listen on a port or handle signals (that is main.ts), or keep a start or stop order by hand.
 */
import type { AddressInfo } from 'node:net';
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
import { AccountsService } from './accounts/service.js';
import { tokenRoutes } from './accounts/routes.js';
import { deviceRoutes } from './devices/routes.js';
import { DevicePresence } from './devices/presence.js';
import { loadWhatsApp, sandboxScope } from './network/create.js';
import { sandboxRoutes } from './sandbox-control/routes.js';
import { messageRoutes } from './messages/routes.js';
import { compileMessageSchemasInTurns } from './messages/validate.js';
import { groupAdminRoutes } from './groups/admin-routes.js';
import { groupRoutes } from './groups/routes.js';
import { contactRoutes } from './contacts/routes.js';
import { chatRoutes } from './chats/routes.js';
import { installIncomingMetrics } from './events/incoming-metrics.js';
import { installLogStreamMetrics } from './events/log-metrics.js';
import { webhookRoutes } from './events/routes.js';
import { accountWebhookRoutes } from './webhooks/routes.js';
import { installWebhookMetrics } from './webhooks/metrics.js';
import { deviceWebhookStatuses, webhookStatuses } from './webhooks/states.js';
import websocket from '@fastify/websocket';
import { eventLogRoutes } from './events/log-routes.js';
import { WS_MAX_PAYLOAD, eventWsRoutes, selectBearerProtocol } from './events/log-ws-routes.js';
import { mediaRoutes } from './media/routes.js';
import { installAuth } from './http/auth.js';
import { installErrorHandling, sendError } from './http/error-handler.js';
import { installTwinStatus } from './http/envelope.js';
import { ApiError } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './http/json-depth.js';
import { installFormBodies } from './http/forms.js';
import { installValidation, isOptionalBody } from './http/validation.js';
import { deferredSerializers, serializersOf } from './http/serialization.js';
import { capConnections, serverTimeoutOptions } from './http/server-limits.js';
import { installOpenApi, isHiddenAlias } from './http/openapi.js';
import { healthRoutes } from './http/health.js';
import { gatewayInfoRoutes } from './http/gateway-info.js';
import { dashboardRoutes, defaultDashboardDir, isDashboardPath } from './http/dashboard.js';
import { requestUrlForLog, urlForLog } from './http/log-redaction.js';
import { createMetricsRegistry, installHttpMetrics } from './http/metrics.js';
import { buildRoot, type RootOptions, type Services } from './composition/root.js';
import { installForwarding } from './cluster/forward.js';
import { holderLookups } from './cluster/holder-routes.js';
import { installClusterMetrics } from './cluster/metrics.js';
import { installBrokerMetrics } from './destinations/metrics.js';
import { installMediaMetrics } from './media/index.js';

export interface BuildOptions extends RootOptions {
  readonly config: Config;
  readonly clock?: Clock;
  /**
   * Fastify logger options; `false` silences (tests). Defaults to JSON lines at
   * config.logLevel on standard output, written in blocks (see `gatewayLogger`).
   */
  readonly logger?: FastifyServerOptions['logger'];
  /** SQLite file name under the data dir (tests use their own). */
  readonly sqliteFile?: string;
  /** Where the built dashboard is (default dist/dashboard beside the server code). */
  readonly dashboardDir?: string;
}

export type { Services } from './composition/root.js';

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

/** http://HOST:PORT as this machine reaches the gateway: a wildcard host is reached through loopback. */
export function listeningUrl(address: string | AddressInfo | null, host: string): string {
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const serializers = deferredSerializers();
  const app = Fastify({
    ...(options.logger === undefined ? { loggerInstance: gatewayLogger(config) } : { logger: options.logger }),
    bodyLimit: 1024 * 1024,
    // Response serializers compiled on first use, once per schema (src/http/serialization.ts): not all at start.
    schemaController: serializers.option,
    // The serializers' own validators (for `anyOf` branches) compiled without an optimising pass, as the others.
    serializerOpts: { ajv: { code: { optimize: false } } },
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

  serializersOf(app, serializers);
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
  // The WhatsApp library is loaded only when the gateway runs WhatsApp and no test replaces the network.
  const whatsapp = options.network === undefined ? await loadWhatsApp(config) : null;
  const publicUrl = () => config.publicUrl ?? listeningUrl(app.server.address(), config.host);
  const root = buildRoot({ config, clock, logger: app.log, store, accounts, options, whatsapp, publicUrl });
  const { services, clusterNode, directory } = root;
  const { devices, connections, network, networks, messages, actions, cluster } = services;
  app.addHook('onClose', () => root.lifecycle.stop());
  const devicePresence = new DevicePresence({ store, devices, connections });
  app.decorate('services', services);

  // A device's `server.status`: the cluster's view of its node (with one node: this one is up).
  const serverUp = clusterNode === null ? undefined : (name: string) => clusterNode.isUp(name);
  const metrics = createMetricsRegistry();
  installHttpMetrics(app, metrics);
  installClusterMetrics(metrics, cluster, systemClock);
  installMediaMetrics(metrics, store, systemClock);
  installIncomingMetrics(metrics, connections);
  installBrokerMetrics(metrics, services.brokers);
  installLogStreamMetrics(metrics, services.eventLog.streams);
  installWebhookMetrics(metrics, store.db);
  installAuth(app, accounts);
  // Requests that need a device's live connection run on the node holding it (docs/internals.md, Clusters).
  if (clusterNode !== null) {
    installForwarding(app, { node: clusterNode, lookups: holderLookups({ store, directory }), logger: app.log });
  }
  await installOpenApi(app, `Network: ${network.description}. Store: ${store.description.split(' ')[0]}.`);
  // Every route is also served under /api (docs/internals.md, Answers and errors); the alias stays out of the document.
  for (const prefix of ['', '/api']) await app.register(named(healthRoutes), { store, metrics, prefix });
  await app.register(named(dashboardRoutes), { dir: options.dashboardDir ?? defaultDashboardDir });
  // The event log's WebSocket (events/log-ws.ts); its streams end before the server stops listening.
  await app.register(websocket, { options: { maxPayload: WS_MAX_PAYLOAD, handleProtocols: selectBearerProtocol } });
  const eventStreams = services.eventLog.streams;
  app.addHook('preClose', () => eventStreams.closeAll());

  for (const prefix of ['', '/api']) {
    await app.register(
      named(async function apiRoutes(api) {
        await api.register(named(tokenRoutes), { accounts });
        await api.register(named(gatewayInfoRoutes), {
          network: config.network,
          sandboxControl: network.sandbox !== undefined,
          serverName: config.serverName,
          accounts,
          brokers: (accountId) => services.brokers.statuses(accountId),
          webhooks: (accountId) => webhookStatuses(store.db, accountId),
          deviceWebhooks: (accountId) => deviceWebhookStatuses(store.db, accountId),
          streams: (accountId) => services.eventLog.streams.consumersOf(accountId),
        });
        await api.register(named(deviceRoutes), {
          devices,
          pairing: root.pairing,
          serverName: config.serverName,
          serverUp,
          networks,
          presence: devicePresence,
        });
        await api.register(named(messageRoutes), { messages, actions });
        await api.register(named(webhookRoutes), {
          webhooks: root.webhooks,
          serverName: config.serverName,
          serverUp,
          networks,
        });
        await api.register(named(accountWebhookRoutes), { webhooks: root.accountWebhooks });
        await api.register(named(eventLogRoutes), { db: store.db, streams: eventStreams });
        await api.register(named(eventWsRoutes), { db: store.db, streams: eventStreams });
        await api.register(named(groupRoutes), { groups: root.groups, members: root.members });
        await api.register(named(groupAdminRoutes), { groups: root.groups, admin: root.groupAdmin });
        await api.register(named(contactRoutes), {
          contacts: root.contacts,
          book: root.contactBook,
          profile: root.profile,
        });
        await api.register(named(chatRoutes), { chats: root.chats });
        await api.register(named(mediaRoutes), { serving: services.incomingMedia.serving, accounts });
        if (network.sandbox !== undefined)
          await api.register(named(sandboxRoutes), {
            sandbox: network.sandbox,
            store,
            accounts,
            devices,
            pairing: root.pairing,
          });
      }),
      { prefix },
    );
  }
  app.addHook('onReady', () => root.lifecycle.start());
  // The message schemas compile once the server listens, not before its first send (src/messages/validate.ts).
  let stopCompiling = () => {};
  app.addHook('onListen', async () => {
    stopCompiling = compileMessageSchemasInTurns();
  });
  app.addHook('onClose', async () => stopCompiling());
  return app;
}

const DISPLAY_NAME = Symbol.for('fastify.display-name');

/**
 * A route plugin with its display name set: for a plugin without one, Fastify looks for it among every loaded
 * CommonJS module (`getPluginName`), on each registration. Tests build hundreds of gateways in one process: about
 * 2 s of CPU a test project.
 */
function named<Plugin extends (...args: never[]) => unknown>(plugin: Plugin): Plugin {
  const withName = plugin as Plugin & { [DISPLAY_NAME]?: string };
  withName[DISPLAY_NAME] ??= plugin.name;
  return plugin;
}
