/**
 * `GET /gateway`: what a signed-in client needs to know about the gateway it
 * talks to (docs/internals.md, The dashboard: the dashboard's banner names the network and node).
 * A gateway running WhatsApp keeps the devices of sandbox accounts on the
 * sandbox (docs/internals.md, WhatsApp and sandbox accounts), so the network named is the caller's: where its
 * account's devices connect. Its event destinations (DECISIONS 17) are the caller's too: its webhooks' backlogs and
 * states, its stream consumers open on this node, and each broker's state with the backlog of its own events; the
 * gateway-wide figures are on /metrics, for the operator.
 *
 * Owns: the shape of that answer.
 * Must never: reveal configuration beyond it (no store URL, no paths, no keys),
 * or anything of another account.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccountsService } from '../accounts/service.js';
import type { BrokerStatus } from '../destinations/index.js';
import type { StreamCounts } from '../events/log-streams.js';
import type { DeviceWebhookStatus, WebhookStatus } from '../webhooks/states.js';
import { packageRoot } from '../package-root.js';
import { accountOf } from './auth.js';
import { CodeEnvelope, errorResponses } from './schemas.js';

export interface GatewayInfoOptions {
  /** `sandbox`, `sandbox+ws://...` or `whatsapp` (config.network). */
  readonly network: string;
  /** Whether the sandbox control API is served on this gateway (for sandbox accounts' devices). */
  readonly sandboxControl: boolean;
  readonly serverName: string;
  readonly accounts: AccountsService;
  /** Each configured broker's state and the account's backlog (docs/brokers.md); empty when none is configured. */
  readonly brokers: (accountId: number) => Promise<readonly BrokerStatus[]>;
  /** The account's webhooks with their backlogs and states (docs/webhooks.md, Backlog and state). */
  readonly webhooks: (accountId: number) => Promise<readonly WebhookStatus[]>;
  /** The account's devices' own `webhook_url`s with their backlogs and states (docs/webhooks.md, Backlog and state). */
  readonly deviceWebhooks: (accountId: number) => Promise<readonly DeviceWebhookStatus[]>;
  /** The account's stream consumers open on this node (docs/events.md). */
  readonly streams: (accountId: number) => StreamCounts;
}

/** What an account webhook and a device's own URL show alike. */
const DestinationHost = Type.String({ description: 'The host of its URL (never its path or query)' });
const DestinationBacklog = Type.Integer({
  description: 'Deliveries not yet made: due now or waiting for a retry (counted up to 100,000)',
});

const WebhookInfo = Type.Object(
  {
    id: Type.String({ description: 'The webhook (`GET /webhooks/{id}`)' }),
    host: DestinationHost,
    state: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('disabled')], {
      description:
        'disabled: turned off (`enabled: false`); failing: a delivery waiting for its retry failed its last attempt; ok otherwise',
    }),
    backlog: DestinationBacklog,
  },
  { title: 'WebhookStatus' },
);

const DeviceWebhookInfo = Type.Object(
  {
    device: Type.Integer({ description: 'The device whose own `webhook_url` this is (`GET /devices/{id}`)' }),
    host: DestinationHost,
    state: Type.Union([Type.Literal('ok'), Type.Literal('failing')], {
      description: 'failing: a delivery waiting for its retry failed its last attempt; ok otherwise',
    }),
    backlog: DestinationBacklog,
  },
  { title: 'DeviceWebhookStatus' },
);

const StreamsInfo = Type.Object(
  {
    sse: Type.Integer({ description: 'Open `GET /events/stream` consumers' }),
    websocket: Type.Integer({ description: 'Open `GET /events/ws` consumers' }),
  },
  { title: 'StreamConsumers', description: 'This account’s event stream consumers open on this node' },
);

const BrokerInfo = Type.Object(
  {
    broker: Type.Union([Type.Literal('amqp'), Type.Literal('nats')], {
      description: 'RabbitMQ (amqp) or NATS JetStream',
    }),
    state: Type.Union(
      [
        Type.Literal('starting'),
        Type.Literal('up'),
        Type.Literal('down'),
        Type.Literal('standby'),
        Type.Literal('stopped'),
      ],
      {
        description:
          'up: this node publishes; down: unreachable, retried with backoff; standby: another node publishes',
      },
    ),
    backlog: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'This account’s events logged and not yet confirmed by the broker (counted up to 100,000); null if the store did not answer',
    }),
    published: Type.Integer({ description: 'Events this node published (confirmed) since it started' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why it is not up; null when up' }),
  },
  { title: 'BrokerStatus' },
);

const GatewayInfo = Type.Object(
  {
    network: Type.Union([Type.Literal('sandbox'), Type.Literal('whatsapp')], {
      description: 'The messaging network this account’s devices connect to (a sandbox account’s: the sandbox)',
    }),
    sandbox_control: Type.Boolean({
      description: 'Whether the sandbox control API (/sandbox/...) serves this account’s devices',
    }),
    account: Type.Object({
      name: Type.String(),
      sandbox: Type.Boolean({ description: 'A sandbox account: its devices live on the sandbox network' }),
    }),
    server: Type.Object({ name: Type.String({ description: 'This node (GATEWAY_SERVER_NAME)' }) }),
    version: Type.String({ description: 'The gateway’s version' }),
    brokers: Type.Array(BrokerInfo, {
      description: 'Each broker events are published to (GATEWAY_AMQP_URL, GATEWAY_NATS_URL; docs/brokers.md)',
    }),
    webhooks: Type.Array(WebhookInfo, { description: 'This account’s webhooks (`GET /webhooks`), oldest first' }),
    device_webhooks: Type.Array(DeviceWebhookInfo, {
      description: 'Each of this account’s devices that has its own `webhook_url`, in the order they were made',
    }),
    streams: StreamsInfo,
  },
  { title: 'Gateway' },
);

/** The version in the gateway's package.json, read once. */
function packageVersion(): string {
  try {
    const text = readFileSync(join(packageRoot, 'package.json'), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const gatewayInfoRoutes: FastifyPluginAsyncTypebox<GatewayInfoOptions> = async (app, options) => {
  const configured = options.network === 'whatsapp' ? ('whatsapp' as const) : ('sandbox' as const);
  const server = { name: options.serverName };
  const version = packageVersion();
  app.get(
    '/gateway',
    {
      schema: {
        tags: ['Operations'],
        summary: 'The network and node this gateway runs, and the state of this account’s event destinations',
        response: { 200: CodeEnvelope(GatewayInfo), ...errorResponses(401) },
      },
    },
    async (request) => {
      const accountId = accountOf(request);
      const account = await options.accounts.account(accountId);
      const [brokers, webhooks, deviceWebhooks] = await Promise.all([
        options.brokers(accountId),
        options.webhooks(accountId),
        options.deviceWebhooks(accountId),
      ]);
      const data = {
        network: account.sandbox ? ('sandbox' as const) : configured,
        sandbox_control: options.sandboxControl && account.sandbox,
        account: { name: account.name, sandbox: account.sandbox },
        server,
        version,
        brokers: brokers.map((b) => ({
          broker: b.broker,
          state: b.state,
          backlog: b.backlog,
          published: b.published,
          last_error: b.lastError,
        })),
        webhooks: webhooks.map((w) => ({ id: w.id, host: w.host, state: w.state, backlog: w.backlog })),
        device_webhooks: deviceWebhooks.map((w) => ({
          device: w.device,
          host: w.host,
          state: w.state,
          backlog: w.backlog,
        })),
        streams: options.streams(accountId),
      };
      return { code: 200, status: 200, message: 'OK', data };
    },
  );
};
