/**
 * Sending for one device's connection: messages, typing, and the server's acknowledgements of what was sent.
 *
 * Owns: sending each message once per id (a send the server took before is not repeated), waiting for the server's
 * acknowledgement from the moment the stanza has left (an upload before it never eats the window), a late
 * acknowledgement still counting (docs/whatsapp.md, Acknowledgements), the records of sent messages that answer the
 * network's resend requests, what a list or template sent as text offered, a poll's secret kept before it leaves
 * (poll-secrets.ts), and the typing timers.
 * Must never: report a send done before the server acknowledged it, send a message the server already took, or
 * keep a wait or timer past the connection's end (endWaits).
 */
import { isJidGroup, proto, type BinaryNode, type GroupMetadata, type WAMessage, type WAMessageKey } from 'baileys';
import {
  NetworkSendError,
  type NetworkGroupId,
  type OutgoingNetworkMessage,
  type PhoneNumber,
  type PresenceState,
  type QuotedMessage,
} from '../network.js';
import type { NetworkStateWriter } from '../state.js';
import { ackRefusalKind } from './close-codes.js';
import { jidOf, type ConnectionContext } from './connection-context.js';
import { outgoingContent } from './content.js';
import { addressMentions } from './group-mentions.js';
import { fromNetworkId, toNetworkId } from './ids.js';
import { NATIVE_FLOW_NODES, encodeOffer, nativeInteractive, offerOf, type InteractiveContent } from './interactive.js';
import { keepPollSecret } from './poll-secrets.js';
import { quotedMessage, quotedNetworkId } from './quoted.js';
import type { SocketPort } from './socket-port.js';

interface AckWaiter {
  resolve(): void;
  reject(error: Error): void;
  /** Null until the stanza has left: an upload before it must not eat the window. */
  timer: NodeJS.Timeout | null;
}

/** Sends given up as unacknowledged, remembered so a late ack still counts; the oldest go first. */
const MAX_OVERDUE = 1024;

export class Sending {
  private readonly acks = new Map<string, AckWaiter>();
  /** Network ids of sends whose ack wait ran out, in the order they did (docs/whatsapp.md, Acknowledgements). */
  private readonly overdue = new Set<string>();
  private readonly typing = new Set<NodeJS.Timeout>();

  constructor(
    private readonly ctx: ConnectionContext,
    /** A group's metadata as the connection keeps it (connection-groups.ts). */
    private readonly groupMetadata: (socket: SocketPort, jid: string) => Promise<GroupMetadata | undefined>,
  ) {}

  async sendMessage(message: OutgoingNetworkMessage): Promise<void> {
    const { deps } = this.ctx;
    const socket = this.ctx.open();
    const writer = this.ctx.writer() as NetworkStateWriter;
    const networkId = toNetworkId(message.id);
    if (networkId === null) throw new NetworkSendError('the message id cannot be carried to WhatsApp', 'permanent');
    // Read receipts are receipts, not a message: no id of ours travels, and the server acknowledges none.
    if (message.content.type === 'read') {
      const keys = message.content.targets.map((target) => quotedMessage(target, undefined).key);
      await socket.readMessages(keys).catch((error: unknown) => {
        throw new NetworkSendError(`marking read failed: ${(error as Error).message}`, 'transient');
      });
      return;
    }
    // Taken by the server before (a retry after a lost answer): sending again would show it twice.
    if ((await writer.readSent(networkId))?.ackedAt != null) return;
    const acked = this.expectAck(networkId);
    // The server may answer (even refuse) before the library's send resolves: the outcome is awaited below.
    acked.catch(() => undefined);
    const { content } = message;
    const interactive = content.type === 'list' || content.type === 'template' ? content : null;
    const quoted = message.quoted === undefined ? undefined : await this.quotedOf(message.quoted);
    let sent: proto.IMessage | null | undefined;
    try {
      if (interactive !== null && deps.nativeInteractive) {
        sent = nativeInteractive(interactive);
        await socket.relayMessage(jidOf(message.to), sent, {
          messageId: networkId,
          additionalNodes: NATIVE_FLOW_NODES,
        });
      } else {
        // A stalled upload must not hold the device's queue: it fails the send as transient (docs/whatsapp.md).
        const options = {
          messageId: networkId,
          mediaUploadTimeoutMs: deps.uploadTimeoutMs,
          ...(quoted === undefined ? {} : { quoted }),
        };
        const addressed = await this.mentionsFor(socket, message);
        // A poll's secret is stored before the poll leaves: its votes cannot be read without it (poll-secrets.ts).
        const secret =
          content.type === 'poll'
            ? await keepPollSecret({ writer, sealer: deps.sealer, session: this.ctx.session }, networkId)
            : undefined;
        const built = outgoingContent(addressed.content, addressed.mentions, secret);
        // A forwarded copy is marked so in its context (the library merges it into the message it builds).
        const outgoing =
          message.forwarded === true ? { ...built, contextInfo: { isForwarded: true, forwardingScore: 1 } } : built;
        sent = (await socket.sendMessage(jidOf(message.to), outgoing, options))?.message;
      }
    } catch (error) {
      this.cancelAck(networkId);
      throw new NetworkSendError(`sending failed: ${(error as Error).message}`, 'transient');
    }
    // The stanza has left (media uploaded first): only now does the wait for the server's answer start.
    this.startAckClock(networkId);
    if (sent !== null && sent !== undefined) {
      const payload = proto.Message.encode(sent).finish();
      const place = { session: this.ctx.session, kind: 'sent', id: networkId };
      await writer.recordSent(networkId, deps.sealer.seal(payload, place), Date.now());
    }
    await acked;
    if (interactive !== null && !deps.nativeInteractive) await this.recordOffer(writer, message.to, interactive);
    await writer.markSentAcked(networkId, Date.now());
  }

  /** The message's mentions as its chat addresses members: by LID in a LID-addressed group (group-mentions.ts). */
  private async mentionsFor(socket: SocketPort, message: OutgoingNetworkMessage) {
    const mentions = message.mentions ?? [];
    const jid = jidOf(message.to);
    const metadata =
      mentions.length === 0 || isJidGroup(jid) !== true
        ? undefined
        : await this.groupMetadata(socket, jid).catch((error: unknown) => {
            this.ctx.deps.logger.warn({ err: error }, 'group metadata for mentions could not be read');
            return undefined;
          });
    return addressMentions(message.content, mentions, metadata, (pn) =>
      socket.signalRepository.lidMapping.getLIDForPN(pn),
    );
  }

  /** What a list or template sent as text offered in the chat, so a reply picking from it is read back. */
  private async recordOffer(writer: NetworkStateWriter, chat: string, content: InteractiveContent): Promise<void> {
    const offer = offerOf(content);
    if (offer === null) return;
    const place = { session: this.ctx.session, kind: 'offer', id: chat };
    try {
      await writer.recordOffer(chat, this.ctx.deps.sealer.seal(encodeOffer(offer), place), Date.now());
    } catch (error) {
      // The message reached the recipient; only reading a numbered reply back is lost. Sending it again would not help.
      this.ctx.deps.logger.warn({ err: error }, 'recording the choices of a list or template failed');
    }
  }

  /** The quoted message of a reply: ours as sent when the sent records still have it, else what the gateway knows. */
  private async quotedOf(quoted: QuotedMessage): Promise<WAMessage> {
    const sent = quoted.fromMe
      ? await this.sentMessage({ id: quotedNetworkId(quoted) }).catch((error: unknown) => {
          this.ctx.deps.logger.warn({ err: error }, 'the quoted message could not be read from the sent records');
          return undefined;
        })
      : undefined;
    return quotedMessage(quoted, sent);
  }

  /** A wait for the server's ack of a send; its clock starts with startAckClock. */
  private expectAck(networkId: string): Promise<void> {
    this.overdue.delete(networkId);
    return new Promise<void>((resolve, reject) => {
      this.acks.set(networkId, { resolve, reject, timer: null });
    });
  }

  private startAckClock(networkId: string): void {
    const waiter = this.acks.get(networkId);
    if (waiter === undefined || waiter.timer !== null) return;
    waiter.timer = setTimeout(() => {
      this.acks.delete(networkId);
      // A late ack still means the network took it: remembered, so it moves the message to `sent` (onAck).
      this.overdue.add(networkId);
      if (this.overdue.size > MAX_OVERDUE) this.overdue.delete(this.overdue.values().next().value as string);
      waiter.reject(new NetworkSendError('the network did not acknowledge the message in time', 'transient'));
    }, this.ctx.deps.ackTimeoutMs);
  }

  private cancelAck(networkId: string): void {
    const waiter = this.acks.get(networkId);
    if (waiter === undefined) return;
    if (waiter.timer !== null) clearTimeout(waiter.timer);
    this.acks.delete(networkId);
    waiter.resolve();
  }

  /** The server's acknowledgement (or refusal) of a message the socket sent. */
  onAck(node: BinaryNode): void {
    const id = node.attrs.id;
    if (id === undefined) return;
    const error = node.attrs.error;
    const waiter = this.acks.get(id);
    if (waiter !== undefined) {
      if (waiter.timer !== null) clearTimeout(waiter.timer);
      this.acks.delete(id);
      if (error === undefined) waiter.resolve();
      else waiter.reject(new NetworkSendError(`refused by the network (${error})`, ackRefusalKind(error)));
      return;
    }
    const ours = fromNetworkId(id);
    if (this.overdue.delete(id) && error === undefined && ours !== null) {
      void this.lateAck(id, ours);
      return;
    }
    if (error !== undefined && ours !== null) {
      this.ctx.emit({
        type: 'message_status',
        id: ours,
        status: 'failed',
        reason: `refused by the network (${error})`,
        at: new Date(),
      });
    }
  }

  /**
   * The server took a send after its wait had run out: recorded as acknowledged (a retry already queued then
   * sends nothing twice) before the gateway hears `sent`.
   */
  private async lateAck(networkId: string, ours: string): Promise<void> {
    const writer = this.ctx.writer();
    try {
      if (writer !== null) await writer.markSentAcked(networkId, Date.now());
    } catch (error) {
      this.ctx.deps.logger.warn({ err: error }, 'recording a late acknowledgement failed');
    }
    this.ctx.emit({ type: 'message_status', id: ours, status: 'sent', at: new Date() });
  }

  /** Answers the network's resend requests from the sent records; undefined when not ours or pruned. */
  async sentMessage(key: WAMessageKey): Promise<proto.IMessage | undefined> {
    const writer = this.ctx.writer();
    if (typeof key.id !== 'string' || writer === null) return undefined;
    const record = await writer.readSent(key.id);
    if (record === null) return undefined;
    const place = { session: this.ctx.session, kind: 'sent', id: key.id };
    return proto.Message.decode(this.ctx.deps.sealer.open(record.payload, place).plain);
  }

  async sendTyping(to: PhoneNumber | NetworkGroupId, durationMs: number): Promise<void> {
    const socket = this.ctx.open();
    const jid = jidOf(to);
    // WhatsApp shows typing only from a device that is `available`; the socket connects unavailable (so the
    // phone keeps its notifications) and goes back to it when the typing ends.
    await socket.sendPresenceUpdate('available');
    await socket.sendPresenceUpdate('composing', jid);
    const timer = setTimeout(() => {
      this.typing.delete(timer);
      if (this.ctx.socket() !== socket) return;
      socket
        .sendPresenceUpdate('paused', jid)
        .then(() => socket.sendPresenceUpdate('unavailable'))
        .catch(() => undefined);
    }, durationMs);
    timer.unref();
    this.typing.add(timer);
  }

  /**
   * The device's presence, or its chat state in one chat. A chat state is shown only while the device is
   * `available` (as for sendTyping), so one is told first; what the caller asked for is sent as asked, and stays.
   */
  async sendPresence(state: PresenceState, to?: PhoneNumber | NetworkGroupId): Promise<void> {
    const socket = this.ctx.open();
    if (to === undefined) return socket.sendPresenceUpdate(state);
    if (state !== 'paused') await socket.sendPresenceUpdate('available');
    await socket.sendPresenceUpdate(state, jidOf(to));
  }

  /** The connection ended: every wait fails with `error`, every typing timer stops. */
  endWaits(error: Error): void {
    for (const waiter of this.acks.values()) {
      if (waiter.timer !== null) clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.acks.clear();
    for (const timer of this.typing) clearTimeout(timer);
    this.typing.clear();
  }
}
