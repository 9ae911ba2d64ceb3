/**
 * Incoming messages (docs/internals.md, Webhooks): what phones send to our devices.
 *
 * Owns: turning the network's `incoming_message` into a stored message
 * (`direction: incoming`, status `delivered`: it has reached us) and its
 * `message.incoming` event, in one transaction; and storing a message the
 * network repeats (same network id, same device) only once.
 * Row shape: `device` and `receiver` are our device's number, `sender` is
 * theirs; `type`, text and params come from the content (incoming-fields.ts); `timestamp` is when we received it,
 * `sent_at` when the network says it was sent; a group message has the
 * network's `group_id` among its params, and one whose sender the network
 * named by LID its `from_lid` (lid-reports.ts notes or reports that LID in the
 * same transaction; a `lid_resolved` from the network passes through the same
 * inbox, so it never overtakes the message it concerns; so does a `message_changed`, a reaction, edit or delete
 * recorded by message-changes.ts, and a `poll_vote` recorded by messages/poll-votes-record.ts).
 * A message the network handed over is never dropped: while the store cannot
 * take it, it waits in memory, in order, and its write is retried until it
 * commits (only a shutdown during an outage ends that, logged with the ids).
 * Must never: count incoming messages against the device's quota, or announce
 * a message that was not stored.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { ConnectionManager } from '../devices/connections.js';
import { devicesRepository } from '../devices/repository.js';
import { newUlid } from '../ids.js';
import { presentMessage } from '../messages/present.js';
import { recordPollVote, type PollVoteEvent } from '../messages/poll-votes-record.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import { touchChats } from '../chats/maintain.js';
import type { NetworkEvent } from '../network/network.js';
import type { Transaction } from 'kysely';
import type { WriteBatcher } from '../store/batcher.js';
import type { Database } from '../store/schema.js';
import { untilStored } from '../store/until-stored.js';
import { incomingMediaRepository, pendingMediaRow, shownMedia, type MediaLinks } from '../media/index.js';
import { incomingFields, replyParams } from './incoming-fields.js';
import { noteSender, reportResolved } from './lid-reports.js';
import { recordEvent } from './record.js';
import { recordMessageChange, type MessageChangedEvent } from './message-changes.js';
import { eventsRepository } from './repository.js';

type IncomingEvent = Extract<NetworkEvent, { type: 'incoming_message' }>;
/** Passed through the same inbox as the messages, so a report never overtakes the message it concerns. */
type LidResolvedEvent = Extract<NetworkEvent, { type: 'lid_resolved' }>;
/** What passes a device's inbox, in the order the network handed it over. */
type InboxEvent = IncomingEvent | LidResolvedEvent | MessageChangedEvent | PollVoteEvent;

export interface IncomingOptions {
  readonly batcher: WriteBatcher;
  readonly clock: Clock;
  readonly connections: ConnectionManager;
  readonly logger: FastifyBaseLogger;
  /** Signs the URL of incoming media in the message object (src/media/links.ts). */
  readonly mediaLinks: MediaLinks;
  /** Told after a commit that recorded media to download (the downloader looks at once). */
  readonly onMediaPending: () => void;
}

/** How long a shutdown keeps retrying what it still holds while the store is out of service. */
const CLOSE_GRACE_MS = 10_000;
/** Incoming messages of one device written in one transaction at most. */
const BATCH = 100;

interface Heard {
  readonly event: InboxEvent;
  /** When the gateway heard it: its `timestamp`, however late it gets stored. */
  readonly receivedAt: number;
}

/** One device's messages heard and not yet stored, in the order the network handed them over. */
interface Inbox {
  readonly queue: Heard[];
  writing: boolean;
}

export class IncomingMessages {
  private readonly inboxes = new Map<number, Inbox>();
  private readonly writes = new Set<Promise<void>>();
  private unsubscribe: (() => void) | null = null;
  private closingSince: number | null = null;

  constructor(private readonly options: IncomingOptions) {}

  start(): void {
    this.unsubscribe = this.options.connections.onEvent((deviceId, event) => {
      if (
        event.type === 'incoming_message' ||
        event.type === 'lid_resolved' ||
        event.type === 'message_changed' ||
        event.type === 'poll_vote'
      ) {
        this.hear(deviceId, event);
      }
    });
  }

  /** Stops listening and waits until what was heard is stored (retrying at most CLOSE_GRACE_MS more). */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.closingSince = Date.now();
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /**
   * The network has handed the message over: from here the gateway holds the
   * only copy until it is stored. It waits in its device's inbox, and is
   * written (retried through a store outage) in order, behind the ones before it.
   */
  private hear(deviceId: number, event: InboxEvent): void {
    let inbox = this.inboxes.get(deviceId);
    if (inbox === undefined) {
      inbox = { queue: [], writing: false };
      this.inboxes.set(deviceId, inbox);
    }
    inbox.queue.push({ event, receivedAt: this.options.clock.now() });
    if (inbox.writing) return;
    inbox.writing = true;
    const write = this.drain(deviceId, inbox);
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  private async drain(deviceId: number, inbox: Inbox): Promise<void> {
    try {
      while (inbox.queue.length > 0) {
        const batch = inbox.queue.slice(0, BATCH);
        // The store tells the event log's followers once the batch's commit recorded events.
        await untilStored(
          () =>
            // Group-committed with the dispatcher's writes, in one transaction per device and batch.
            this.options.batcher.run(async (trx) => {
              const stored: MessageRow[] = [];
              for (const heard of batch) await this.store(trx, deviceId, heard, stored);
              // The chat list, in the same transaction: one upsert for the batch (src/chats/maintain.ts).
              await touchChats(trx, stored, this.options.clock.now());
            }),
          {
            logger: this.options.logger,
            what: 'incoming messages',
            context: { deviceId, count: batch.length },
            giveUp: () => this.closingSince !== null && Date.now() - this.closingSince > CLOSE_GRACE_MS,
          },
        );
        inbox.queue.splice(0, batch.length);
        if (batch.some(({ event }) => event.type === 'incoming_message' && 'mimetype' in event.content)) {
          this.options.onMediaPending();
        }
      }
    } catch (error) {
      // Only at shutdown, with the store still out of service: say exactly what could not be kept.
      this.options.logger.error(
        {
          err: error,
          deviceId,
          networkIds: inbox.queue.map(({ event }) =>
            event.type === 'lid_resolved' ? event.lid : 'target' in event ? event.target.id : event.id,
          ),
        },
        'incoming messages could not be stored before shutdown',
      );
      inbox.queue.length = 0;
    } finally {
      inbox.writing = false;
      this.inboxes.delete(deviceId);
    }
  }

  /** Stores one message and its event; false when it is not to be stored (repeated, or the device is gone). */
  private async store(
    trx: Transaction<Database>,
    deviceId: number,
    { event, receivedAt: now }: Heard,
    stored: MessageRow[],
  ) {
    const device = await devicesRepository.findById(trx, deviceId);
    if (device === undefined || device.deleted_at !== null || device.phone === null) return false;
    if (event.type === 'lid_resolved') return reportResolved(trx, device, event.lid, event.phone, now);
    if (event.type === 'message_changed') return recordMessageChange(trx, device, event, now, this.options.logger);
    if (event.type === 'poll_vote') return recordPollVote(trx, device, event, now, this.options.logger);
    const id = newUlid(now);
    const fresh = await eventsRepository.claimIncomingId(trx, deviceId, event.id, id, now);
    if (!fresh) return false;
    const fields = incomingFields(event.content);
    await noteSender(trx, device, event, now);
    // A message posted in a group names the group among its params; one from a sender with a LID names the LID;
    // a reply names the message it quotes, and mentions are listed (incoming-fields.ts).
    const reply = await replyParams(trx, device, event);
    const params =
      event.group === undefined && event.fromLid === undefined && Object.keys(reply).length === 0
        ? fields.params
        : JSON.stringify({
            ...JSON.parse(fields.params),
            ...(event.group === undefined ? {} : { group_id: event.group }),
            ...(event.fromLid === undefined ? {} : { from_lid: event.fromLid }),
            ...reply,
          });
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
      rendered_as: null,
    });
    stored.push(row);
    // Media is downloaded after the message is stored and announced: the row says what is to be fetched.
    const media = pendingMediaRow(event.content, row, now);
    if (media !== null) await incomingMediaRepository.insert(trx, media);
    const shown = media === null ? undefined : shownMedia(media, this.options.mediaLinks);
    const data = presentMessage(row, undefined, undefined, undefined, undefined, shown);
    return (await recordEvent(trx, device, 'message.incoming', data, now)) !== null;
  }
}
