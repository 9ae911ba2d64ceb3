/**
 * The status changes of a group commit that become events (status-writes.ts), written together at the end of the
 * batch: one statement per kind for the batch's `sent` (without media), `delivered` and `read` changes, each
 * answering the rows it changed, and the events built from those rows, inserted together. One statement per message
 * and one more per receipt (whether it overtook its `sent`) made the status writes most of a batch's round trips
 * on PostgreSQL.
 *
 * The outcome is the one the writes would have one at a time in the order they were handed in: the batch is cut
 * into runs in which no message appears twice (a message's second change starts the next run), and within a run
 * each statement touches other messages than the others; the events of a run are recorded in that order.
 *
 * Owns: running a batch's announced changes and building their events.
 * Must never: record an event for a change that did not move its message, or for a deleted device.
 */
import type { BatchCollector } from '../cluster/fenced-writes.js';
import { eventRows, insertEvents, type EventType, type NewEvent } from '../events/record.js';
import type { MessageRow } from '../messages/repository.js';
import {
  messageStatusRepository,
  type BatchedChanges,
  type ReceiptChange,
  type SentChange,
} from '../messages/status-repository.js';
import { presentMessage } from '../messages/present.js';
import type { Db } from '../store/schema.js';
import type { DeviceCache } from './device-cache.js';

/** A change that becomes an event; `sent` with media, a late ack and a refusal are written one at a time. */
export type AnnouncedChange =
  | (SentChange & { readonly kind: 'sent' })
  | (ReceiptChange & { readonly kind: 'delivered' | 'read' })
  | {
      readonly kind: 'sentMedia';
      readonly id: string;
      readonly deviceId: number;
      readonly at: number;
      readonly renderedAs: string | null;
    }
  | { readonly kind: 'acked'; readonly id: string; readonly deviceId: number; readonly at: number }
  | {
      readonly kind: 'refused';
      readonly id: string;
      readonly deviceId: number;
      readonly at: number;
      readonly reason: string;
    };

const TYPE: Record<AnnouncedChange['kind'], EventType> = {
  sent: 'message.sent',
  sentMedia: 'message.sent',
  acked: 'message.sent',
  delivered: 'message.delivered',
  read: 'message.read',
  refused: 'message.failed',
};

/** The collector of a batch's announced changes, reading devices through `devices`. */
export function announcedChanges(devices: DeviceCache): BatchCollector<AnnouncedChange> {
  return {
    flush: async (trx, changes) => {
      let run: AnnouncedChange[] = [];
      const ids = new Set<string>();
      const events: NewEvent[] = [];
      for (const change of changes) {
        if (ids.has(change.id)) {
          await writeRun(trx, devices, run, events);
          run = [];
          ids.clear();
        }
        run.push(change);
        ids.add(change.id);
      }
      await writeRun(trx, devices, run, events);
      // Every run's events in one insert, in the order they were made.
      await insertEvents(trx, events);
    },
  };
}

/** Changes of distinct messages: their statements, then their events (onto `events`) in the order the changes came. */
async function writeRun(
  trx: Db,
  devices: DeviceCache,
  run: readonly AnnouncedChange[],
  events: NewEvent[],
): Promise<void> {
  if (run.length === 0) return;
  const batched: { [K in keyof BatchedChanges]: BatchedChanges[K][] } = { sent: [], delivered: [], read: [] };
  for (const change of run) {
    if (change.kind === 'sent') batched.sent.push(change);
    else if (change.kind === 'delivered' || change.kind === 'read') batched[change.kind].push(change);
  }
  // A receipt may overtake the send's own `sent` write: `message.sent` is recorded first, once, showing the
  // message as it was at that moment (the send's write then finds it moved on and records nothing).
  const unsent = await messageStatusRepository.neverSentMany(trx, [...batched.delivered, ...batched.read]);
  const rows = new Map<string, MessageRow>();
  for (const kind of ['sent', 'delivered', 'read'] as const) {
    for (const row of await messageStatusRepository.changeManyReadBack(trx, kind, batched[kind])) rows.set(row.id, row);
  }
  for (const change of run) {
    const row = await single(trx, change);
    if (row !== undefined) rows.set(change.id, row);
  }
  for (const change of run) {
    const row = rows.get(change.id);
    if (row === undefined) continue;
    if (unsent.has(change.id)) await event(trx, devices, events, asSent(row), 'message.sent', change.at);
    await event(trx, devices, events, row, TYPE[change.kind], change.at);
  }
}

/** The changes written one at a time (rare: media, a late ack, a refusal); undefined for the batched ones. */
async function single(trx: Db, change: AnnouncedChange): Promise<MessageRow | undefined> {
  switch (change.kind) {
    case 'sentMedia':
      return messageStatusRepository.markSent(trx, change.id, change.at, true, true, change.renderedAs);
    case 'acked':
      return messageStatusRepository.markAckedLate(trx, change.deviceId, change.id, change.at, true);
    case 'refused':
      return messageStatusRepository.markRefused(trx, change.deviceId, change.id, change.at, change.reason);
    default:
      return undefined;
  }
}

async function event(
  trx: Db,
  devices: DeviceCache,
  events: NewEvent[],
  row: MessageRow,
  type: EventType,
  at: number,
): Promise<void> {
  const device = await devices.get(trx, row.device_id);
  // A deleted device's deliveries were stopped with it; a receipt arriving later announces nothing.
  if (device === undefined || device.deleted_at !== null) return;
  events.push(await eventRows(trx, device, type, presentMessage(row), at));
}

/** A message a receipt moved past `sent` before the send's write, as it was when the network took it. */
export function asSent(row: MessageRow): MessageRow {
  return { ...row, status: 'sent', delivered_at: null, read_at: null };
}
