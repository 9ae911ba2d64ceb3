/**
 * Incoming messages (DECISIONS 6): what phones send to our devices.
 *
 * Owns: turning the network's `incoming_message` into a stored message
 * (`direction: incoming`, status `delivered`: it has reached us) and its
 * `message.incoming` event, in one transaction; and storing a message the
 * network repeats (same network id, same device) only once.
 * Row shape: `device` and `receiver` are our device's number, `sender` is
 * theirs; `type` comes from the content; `timestamp` is when we received it,
 * `sent_at` when the network says it was sent; a group message has the
 * network's `group_id` among its params.
 * Must never: count incoming messages against the device's quota, or announce
 * a message that was not stored.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { ConnectionManager } from '../devices/connections.js';
import { devicesRepository } from '../devices/repository.js';
import { newUlid } from '../ids.js';
import { presentMessage } from '../messages/present.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import type { IncomingContent, NetworkEvent } from '../network/network.js';
import type { WriteBatcher } from '../store/batcher.js';
import { recordEvent } from './record.js';
import { eventsRepository } from './repository.js';
import type { EventSignal } from './signal.js';

type IncomingEvent = Extract<NetworkEvent, { type: 'incoming_message' }>;

export interface IncomingOptions {
  readonly batcher: WriteBatcher;
  readonly clock: Clock;
  readonly connections: ConnectionManager;
  readonly logger: FastifyBaseLogger;
  readonly signal: EventSignal;
}

/** The stored form of incoming content: the message's type, its text (or caption) and params. */
export function incomingFields(content: IncomingContent): Pick<MessageRow, 'type' | 'message' | 'params'> {
  switch (content.type) {
    case 'chat':
      return { type: 'chat', message: content.text, params: JSON.stringify({ text: content.text }) };
    case 'image':
    case 'video':
    case 'audio':
    case 'file': {
      const params = {
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
      };
      return { type: content.type, message: content.caption ?? null, params: JSON.stringify(params) };
    }
    case 'location':
      // The same shape as an outgoing location's params.
      return {
        type: 'location',
        message: null,
        params: JSON.stringify({
          location: { degreesLatitude: content.latitude, degreesLongitude: content.longitude },
        }),
      };
    case 'list_reply':
      return {
        type: 'list_reply',
        message: content.title,
        params: JSON.stringify({ rowId: content.rowId, title: content.title }),
      };
    case 'button_reply':
      return {
        type: 'button_reply',
        message: content.displayText,
        params: JSON.stringify({ id: content.id, displayText: content.displayText }),
      };
  }
}

export class IncomingMessages {
  private readonly writes = new Set<Promise<void>>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: IncomingOptions) {}

  start(): void {
    this.unsubscribe = this.options.connections.onEvent((deviceId, event) => {
      if (event.type === 'incoming_message') this.track(this.receive(deviceId, event));
    });
  }

  /** Stops listening and waits until what was heard is stored. */
  async close(): Promise<void> {
    this.unsubscribe?.();
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  private track(write: Promise<void>): void {
    this.writes.add(write);
    void write
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'storing an incoming message failed'))
      .finally(() => this.writes.delete(write));
  }

  private async receive(deviceId: number, event: IncomingEvent): Promise<void> {
    const now = this.options.clock.now();
    // Group-committed with the dispatcher's writes; submission order is commit order, so a device's messages keep theirs.
    const recorded = await this.options.batcher.run(async (trx) => {
      const device = await devicesRepository.findById(trx, deviceId);
      if (device === undefined || device.deleted_at !== null || device.phone === null) return false;
      const id = newUlid(now);
      const fresh = await eventsRepository.claimIncomingId(trx, deviceId, event.id, id, now);
      if (!fresh) return false;
      const fields = incomingFields(event.content);
      // A message posted in a group names the group among its params.
      const params =
        event.group === undefined
          ? fields.params
          : JSON.stringify({ ...JSON.parse(fields.params), group_id: event.group });
      const row = await messagesRepository.insert(trx, {
        id,
        account_id: device.account_id,
        device_id: device.id,
        direction: 'incoming',
        ...fields,
        params,
        device_phone: device.phone,
        receiver: device.phone,
        sender: event.from,
        file_url: null,
        simulate_typing: 0,
        status: 'delivered',
        failed_reason: null,
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        sent_at: event.at.getTime(),
        delivered_at: now,
        read_at: null,
        failed_at: null,
      });
      return (await recordEvent(trx, device, 'message.incoming', presentMessage(row), now)) !== null;
    });
    if (recorded) this.options.signal.ring();
  }
}
