/**
 * The device object as clients see it (spec 2.1, docs/internals.md, Devices and pairing).
 *
 * Owns: turning a stored row into the API shape, and that shape's schema.
 * Must never: expose the network session.
 */
import { WEBHOOK_FORMATS, webhookFormat } from '../events/formats/index.js';
import { Type, type Static } from '@sinclair/typebox';
import { iso } from '../clock.js';
import { Nullable } from '../shapes.js';
import { findPackage, quoteAvailable } from './packages.js';
import type { DeviceRow } from './repository.js';
import { NETWORK_NAMES, type NetworkName } from '../network/network.js';

export const DeviceSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    phone: Nullable(Type.String({ description: 'International format without +; null until paired' })),
    webhook_url: Nullable(Type.String()),
    webhook_secret: Type.String({ description: 'Standard Webhooks secret (whsec_...) to verify deliveries' }),
    webhook_format: Type.Union(
      WEBHOOK_FORMATS.map((format) => Type.Literal(format)),
      { description: 'How deliveries are written: standard, whatspie_v1 or whatspie_v2' },
    ),
    webhook_reply: Type.Boolean({
      description: 'Reply by response with the standard format (the Whatspie formats always reply by response)',
    }),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED')]),
    version: Type.Literal('multidevice'),
    paired_status: Type.Union([Type.Literal('UNPAIRED'), Type.Literal('PAIRED'), Type.Literal('EXPIRED')]),
    connected: Type.Boolean({ description: 'Whether the live connection to the network is open now' }),
    network: Type.Union(
      NETWORK_NAMES.map((name) => Type.Literal(name)),
      {
        description:
          'The network the device is on: a paired device stays on the one it paired on whatever the gateway’s ' +
          'configured network is now (docs/networks-per-device.md); otherwise where its next pairing goes',
      },
    ),
    send_interval_ms: Nullable(Type.Integer({ description: 'This device’s gap between sends; null: the default' })),
    reject_calls: Type.Boolean({ description: 'Whether incoming calls are rejected on the network' }),
    reject_calls_message: Nullable(Type.String({ description: 'Sent to a caller after a rejection; null: none' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    server: Type.Object({
      name: Type.String(),
      status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DOWN')]),
    }),
    package: Type.Object({ code: Type.String(), name: Type.String() }),
    subscription: Type.Object({
      quote_available: Type.String({ description: 'Messages left; "-1" when unlimited' }),
      quote_used: Type.String(),
    }),
  },
  { title: 'Device' },
);

export type DeviceJson = Static<typeof DeviceSchema>;

/**
 * `network` is the device's network (src/devices/networks.ts decides it). `server` is the node that holds (or
 * last held) the device's connection; `isUp` says whether that node is alive (the cluster's view; with one node,
 * only this one is).
 */
export function presentDevice(
  row: DeviceRow,
  network: NetworkName,
  serverName: string,
  isUp: (name: string) => boolean = (name) => name === serverName,
): DeviceJson {
  const plan = findPackage(row.package_code);
  const server = row.server_name ?? serverName;
  return {
    id: row.id,
    name: row.name,
    phone: row.phone,
    webhook_url: row.webhook_url,
    webhook_secret: row.webhook_secret,
    webhook_format: webhookFormat(row.webhook_format),
    webhook_reply: row.webhook_reply === 1,
    status: row.status as DeviceJson['status'],
    version: 'multidevice',
    paired_status: row.paired_status as DeviceJson['paired_status'],
    connected: row.connected === 1,
    network,
    send_interval_ms: row.send_interval_ms,
    reject_calls: row.reject_calls === 1,
    reject_calls_message: row.reject_calls_message ?? null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    server: { name: server, status: isUp(server) ? 'ACTIVE' : 'DOWN' },
    package: { code: row.package_code, name: plan?.name ?? row.package_code },
    subscription: {
      quote_available: quoteAvailable(row.quota_limit, row.quote_used),
      quote_used: String(row.quote_used),
    },
  };
}
