/**
 * Receiving for one device's connection: incoming messages and the status updates of what it sent.
 *
 * Owns: passing incoming messages on one at a time in the order the library handed them over (a sender known by
 * LID alone named by its number when it can be, as are the LIDs it mentions, a reply that picks from what a list or
 * template offered read as the choice), reports that must not overtake the messages before them (a LID's number
 * learnt; a reaction, edit or delete: message-changes.ts; a poll vote: poll-votes.ts), and turning the
 * library's status updates of sent messages into `message_status` events.
 * Must never: drop a message the library handed over (the network receipted it already: it is passed on even after
 * the connection ended), let a failed look-up hold or lose one, or keep message content once passed on.
 */
import { proto, type BaileysEventMap, type WAMessage } from 'baileys';
import type { NetworkEvent } from '../network.js';
import type { ConnectionContext, Incoming } from './connection-context.js';
import type { ConnectionGroups } from './connection-groups.js';
import { resolveGroupSender } from './group-senders.js';
import { HistoryIntake } from './history.js';
import { fromNetworkId } from './ids.js';
import { translateIncoming } from './incoming.js';
import { resolveMentions } from './incoming-context.js';
import { MAX_CHOICE_REPLY, OFFER_TTL_MS, decodeOffer, pickChoice } from './interactive.js';
import { lidResolved, resolveSender } from './lid.js';
import { translateChange, type Changed } from './message-changes.js';
import { keepReceivedPollSecret, readPollSecret } from './poll-secrets.js';
import { isPollVote, readPollVote, type PollVoted } from './poll-votes.js';

const STATUS = proto.WebMessageInfo.Status;

export class Receiving {
  /** The history sync at pairing, handed over in batches (history.ts). */
  readonly history: HistoryIntake;
  /** Incoming messages pass one at a time (a reply may need a look at what was offered), so their order holds. */
  private inbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ConnectionContext,
    private readonly groups: ConnectionGroups,
  ) {
    this.history = new HistoryIntake(ctx.deps.historyDays, (event) => ctx.emit(event));
  }

  /** Resolves once every incoming message handed over so far has been passed on. */
  settled(): Promise<void> {
    return this.inbound;
  }

  /** Tells `event` after the incoming messages handed over before it: a report never overtakes its message. */
  afterInbound(event: NetworkEvent): void {
    this.inbound = this.inbound.then(() => this.ctx.emit(event));
  }

  /** A LID's number learnt: reported behind the incoming messages already handed over. */
  onLidMapping(update: BaileysEventMap['lid-mapping.update']): void {
    const resolved = lidResolved(update);
    if (resolved !== null) this.afterInbound(resolved);
  }

  onUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // Messages that arrived while the device was offline come as `append`: they count the same.
    if (type !== 'notify' && type !== 'append') return;
    for (const message of messages) {
      if (isPollVote(message)) {
        this.inbound = this.inbound.then(() => this.deliverVote(message));
        continue;
      }
      const change = translateChange(message, this.ownJids());
      if (change !== null) {
        if (typeof change !== 'string') this.inbound = this.inbound.then(() => this.deliverChange(change));
        else this.ctx.deps.logger.debug({ id: message.key?.id, why: change }, 'message change left out');
        continue;
      }
      const event = translateIncoming(message);
      if (typeof event !== 'string' && event.content.type === 'poll') {
        // Its secret first: a vote on it, handed over next, is read with it.
        this.inbound = this.inbound.then(() => this.keepSecretOf(message)).then(() => this.deliver(event));
      } else if (typeof event !== 'string') this.inbound = this.inbound.then(() => this.deliver(event));
      else if (event === 'unresolved sender') {
        this.ctx.deps.logger.warn({ id: message.key?.id }, 'incoming message skipped: sender has no phone number');
      }
    }
  }

  /** This device's own JIDs, as the open socket knows them (a change names our messages by them). */
  private ownJids(): string[] {
    const user = this.ctx.socket()?.user;
    return [user?.id, user?.lid].filter((jid): jid is string => typeof jid === 'string');
  }

  /** Keeps the secret an incoming poll carries (poll-secrets.ts); a failure is logged, never holds the poll. */
  private async keepSecretOf(message: WAMessage): Promise<void> {
    const secret = message.message?.messageContextInfo?.messageSecret;
    const writer = this.ctx.writer();
    const id = message.key?.id;
    if (!secret || secret.length === 0 || writer === null || typeof id !== 'string') return;
    const place = { writer, sealer: this.ctx.deps.sealer, session: this.ctx.session };
    await keepReceivedPollSecret(place, id, new Uint8Array(secret)).catch((error: unknown) => {
      this.ctx.deps.logger.warn({ err: error, id }, 'keeping a received poll’s secret failed');
    });
  }

  /** Decrypts a vote (poll-votes.ts) and passes it on like a change; one that cannot be read is left out. */
  private async deliverVote(message: WAMessage): Promise<void> {
    const writer = this.ctx.writer();
    const { sealer } = this.ctx.deps;
    const read = await readPollVote(message, this.ownJids(), (id) =>
      writer === null ? Promise.resolve(null) : readPollSecret({ writer, sealer, session: this.ctx.session }, id),
    ).catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    if (typeof read === 'string') {
      this.ctx.deps.logger.debug({ id: message.key?.id, why: read }, 'poll vote left out');
      return;
    }
    await this.deliverChange(read);
  }

  /** Passes a change on, its maker named by number when it can be, as an incoming message's sender is. */
  private async deliverChange(heard: Changed | PollVoted): Promise<void> {
    const { logger } = this.ctx.deps;
    const socket = this.ctx.socket();
    const named = await resolveSender(heard, socket?.signalRepository.lidMapping ?? null, logger);
    const event =
      socket === null
        ? named
        : await resolveGroupSender(named, (group) => this.groups.membersOf(socket, group), logger);
    this.ctx.emit(event);
  }

  /** Passes an incoming message on; a text that picks from what was offered in its chat as the choice. */
  private async deliver(heard: Incoming): Promise<void> {
    const { logger } = this.ctx.deps;
    // A sender known by LID alone: its number, when the library has learnt it since (lid.ts).
    const socket = this.ctx.socket();
    const named = await resolveSender(heard, socket?.signalRepository.lidMapping ?? null, logger);
    // Posted in a group before its metadata was read: the member's number from it (group-senders.ts).
    const sent =
      socket === null
        ? named
        : await resolveGroupSender(named, (group) => this.groups.membersOf(socket, group), logger);
    const event = await this.withMentionsNamed(sent);
    const { content } = event;
    // Passed on even after the connection ended: the network receipted it when it handed it over.
    if (this.ctx.ended() || content.type !== 'chat' || content.text.length > MAX_CHOICE_REPLY) {
      return this.ctx.emit(event);
    }
    const picked = await this.choiceIn(event.group ?? event.from, content.text).catch((error: unknown) => {
      // Never lose the message over it: it goes on as the text it is.
      logger.warn({ err: error }, 'reading what was offered in a chat failed');
      return null;
    });
    this.ctx.emit(picked === null ? event : { ...event, content: picked });
  }

  /** Mentioned LIDs by number where the library or the group's members know them (incoming-context.ts). */
  private async withMentionsNamed(event: Incoming): Promise<Incoming> {
    const socket = this.ctx.socket();
    const { mentions, group } = event;
    if (mentions === undefined || socket === null || !mentions.some((m) => m.endsWith('@lid'))) return event;
    const metadataOf = group === undefined ? null : () => this.groups.membersOf(socket, group);
    const named = await resolveMentions(mentions, socket.signalRepository.lidMapping, metadataOf, this.ctx.deps.logger);
    return { ...event, mentions: named };
  }

  private async choiceIn(chat: string, text: string) {
    const writer = this.ctx.writer();
    if (writer === null) return null;
    const stored = await writer.readOffer(chat, Date.now() - OFFER_TTL_MS);
    if (stored === null) return null;
    const offer = decodeOffer(
      this.ctx.deps.sealer.open(stored.payload, { session: this.ctx.session, kind: 'offer', id: chat }).plain,
    );
    return offer === null ? null : pickChoice(offer, text);
  }

  onMessageUpdates(updates: BaileysEventMap['messages.update']): void {
    for (const { key, update } of updates) {
      if (key.fromMe !== true || update.status === undefined || update.status === null) continue;
      const id = fromNetworkId(key.id);
      if (id === null) continue;
      const t = update.messageTimestamp;
      const seconds = typeof t === 'number' ? t : t === null || t === undefined ? 0 : Number(t.toString());
      const at = seconds > 0 ? new Date(seconds * 1000) : new Date();
      if (update.status === STATUS.ERROR) {
        this.ctx.emit({ type: 'message_status', id, status: 'failed', reason: 'refused by the network', at });
      } else if (update.status === STATUS.DELIVERY_ACK) {
        this.ctx.emit({ type: 'message_status', id, status: 'delivered', at });
      } else if (update.status === STATUS.READ || update.status === STATUS.PLAYED) {
        // A delivery and a read may arrive collapsed into one update: both are recorded.
        this.ctx.emit({ type: 'message_status', id, status: 'delivered', at });
        this.ctx.emit({ type: 'message_status', id, status: 'read', at });
      }
    }
  }
}
