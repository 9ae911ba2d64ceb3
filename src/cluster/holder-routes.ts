/**
 * The routes whose work needs the device's live connection, and how each
 * finds its device (docs/internals.md, Clusters: QR, pairing code, logout, restart,
 * deletion, group and contact operations). Durable work (sending a message,
 * a group send) is accepted by any node and never forwarded.
 *
 * Owns: that list. A lookup that finds nothing (unknown device, malformed
 * input) lets the request run where it arrived, which answers it as usual.
 * Must never: decide an answer itself.
 */
import type { FastifyRequest } from 'fastify';
import { accountOf } from '../http/auth.js';
import type { DeviceDirectory } from '../devices/directory.js';
import { findGroup } from '../groups/lookup.js';
import type { Store } from '../store/store.js';
import type { HolderLookup, HolderRoute } from './forward.js';

function numeric(value: unknown): number | undefined {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function field(source: unknown, name: string): unknown {
  return typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[name] : undefined;
}

export function holderLookups(deps: { store: Store; directory: DeviceDirectory }): Map<string, HolderRoute> {
  const byDeviceParam: HolderLookup = async (request) => numeric(field(request.params, 'id'));
  const byDeviceNumber: HolderLookup = async (request: FastifyRequest) => {
    const phone = field(request.body, 'device');
    if (typeof phone !== 'string') return undefined;
    return (await deps.directory.findByPhone(accountOf(request), phone))?.id;
  };
  // `device` as the chat routes take it: the device's number or its id.
  const byDeviceRef: HolderLookup = async (request: FastifyRequest) => {
    const ref = field(request.body, 'device');
    const byPhone = typeof ref === 'string' ? await deps.directory.findByPhone(accountOf(request), ref) : undefined;
    return byPhone?.id ?? numeric(ref);
  };
  // A group named by its id or its JID (docs/internals.md, Whatspie compatibility); one that cannot be resolved is answered where it arrived.
  const byGroup =
    (param: string): HolderLookup =>
    async (request) => {
      const ref = field(request.params, param);
      if (typeof ref !== 'string' && typeof ref !== 'number') return undefined;
      const device = field(request.body, 'device');
      try {
        const group = await findGroup(
          deps.store.db,
          accountOf(request),
          String(ref),
          typeof device === 'string' ? device : undefined,
        );
        return group.device_id;
      } catch {
        return undefined;
      }
    };
  return new Map<string, HolderRoute>([
    ['GET /devices/:id/qr', { find: byDeviceParam }],
    ['GET /sandbox/devices/:id/qr', { find: byDeviceParam }],
    ['POST /devices/:id/pairing-code', { find: byDeviceParam }],
    ['POST /devices/:id/logout', { find: byDeviceParam }],
    ['POST /devices/:id/restart', { find: byDeviceParam }],
    ['POST /devices/:id/presence', { find: byDeviceParam }],
    ['POST /devices/:id/typing', { find: byDeviceParam }],
    // The holder logs the device out of the network; with none, it is deleted here all the same (as an offline one).
    ['DELETE /devices/:id', { find: byDeviceParam, anywhere: true }],
    ['POST /contacts/check', { find: byDeviceNumber }],
    ['PATCH /chats/:chat', { find: byDeviceRef }],
    ['POST /groups', { find: byDeviceNumber }],
    ['PUT /groups/:id', { find: byGroup('id') }],
    ['POST /groups/:group_id/members/add', { find: byGroup('group_id') }],
  ]);
}
