/**
 * One device's connection to WhatsApp, behind the seam's NetworkConnection.
 *
 * Owns: the life of the device's sockets (a pairing socket, the restart the
 * network asks for right after pairing, a new socket when a pairing attempt's
 * QR codes run out), what a close means (close-codes.ts), the single-writer
 * claim of the session's stored state (re-sealed under the current key
 * before the first socket when a previous key is configured), waiting for the
 * server's acknowledgement of each send, remembering what a list or template
 * sent as text offered and reading replies that pick from it, and turning
 * socket events into seam events (incoming messages in the order received).
 *
 * State: starting → (pairing | connecting) → open → ended. Exactly one final
 * event (`disconnected` or `logged_out`) ends a connection, or `close()` ends
 * it with none; nothing is emitted after that.
 *
 * Must never: emit an event synchronously inside connect() (the gateway has
 * not stored the connection yet), answer a stored session that cannot be read
 * with a fresh QR (it is `logged_out`), swallow a failed state write, or keep
 * message history in memory.
 */
import { randomUUID } from 'node:crypto';
import { proto, type BaileysEventMap, type BinaryNode, type WAMessage, type WAMessageKey } from 'baileys';
import type { Logger } from 'pino';
import {
  NetworkSendError,
  NetworkUnavailableError,
  type ConnectionCapabilities,
  type ConnectOptions,
  type CreatedNetworkGroup,
  type NetworkConnection,
  type NetworkEvent,
  type NetworkEventHandler,
  type NetworkGroup,
  type NetworkGroupId,
  type GroupChanges,
  type OutgoingNetworkMessage,
  type PhoneNumber,
  type QuotedMessage,
} from '../network.js';
import { StaleNetworkStateError, type NetworkStateStore, type NetworkStateWriter } from '../state.js';
import { loadSessionAuth, resealSession, type SessionAuth } from './auth-state.js';
import type { SessionWrites } from './session-writes.js';
import { confirmedIdentity, forgetUnconfirmed } from './browser.js';
import { ackRefusalKind, closeAction } from './close-codes.js';
import { outgoingContent } from './content.js';
import { GROUP_CAPACITY, addOutcome, applyGroupChanges, groupError, toNetworkGroup } from './groups.js';
import { fromNetworkId, toNetworkId } from './ids.js';
import { translateIncoming } from './incoming.js';
import {
  MAX_CHOICE_REPLY,
  NATIVE_FLOW_NODES,
  OFFER_TTL_MS,
  decodeOffer,
  encodeOffer,
  nativeInteractive,
  offerOf,
  pickChoice,
  type InteractiveContent,
} from './interactive.js';
import { matchNumbers, phoneOf, userJid } from './numbers.js';
import { quotedMessage, quotedNetworkId } from './quoted.js';
import { UnreadableStateError, type Sealer } from './seal.js';
import type { SocketFactory, SocketPort } from './socket-port.js';

/** Session handles of this connector; a handle of another network (e.g. the sandbox's) is not ours. */
export const SESSION_PREFIX = 'wa1.';

const STATUS = proto.WebMessageInfo.Status;

export interface ConnectionDeps {
  readonly states: NetworkStateStore;
  readonly sealer: Sealer;
  readonly factory: SocketFactory;
  readonly logger: Logger;
  /** How long a send waits for the server's acknowledgement before it is a transient failure. */
  readonly ackTimeoutMs: number;
  /** Send `list` and `template` in WhatsApp's native interactive form instead of as text (experimental). */
  readonly nativeInteractive: boolean;
  /** Writes of every session under way in this process, shared by the connections of one network. */
  readonly writes: SessionWrites;
}

type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;

interface AckWaiter {
  resolve(): void;
  reject(error: Error): void;
  /** Null until the stanza has left: an upload before it must not eat the window. */
  timer: NodeJS.Timeout | null;
}

/** Sends given up as unacknowledged, remembered so a late ack still counts; the oldest go first. */
const MAX_OVERDUE = 1024;

type ConnectionState = 'starting' | 'pairing' | 'connecting' | 'open' | 'ended';

type Final = Extract<NetworkEvent, { type: 'disconnected' | 'logged_out' }>;

function isFinal(event: NetworkEvent): event is Final {
  return event.type === 'disconnected' || event.type === 'logged_out';
}

export class WhatsAppConnection implements NetworkConnection {
  private state: ConnectionState = 'starting';
  private readonly pairing: boolean;
  private readonly session: string;
  private paired = false;
  private writer: NetworkStateWriter | null = null;
  private auth: SessionAuth | null = null;
  private socket: SocketPort | null = null;
  private detach: (() => void) | null = null;
  private readonly acks = new Map<string, AckWaiter>();
  /** Network ids of sends whose ack wait ran out, in the order they did (docs/whatsapp.md, Acknowledgements). */
  private readonly overdue = new Set<string>();
  private readonly typing = new Set<NodeJS.Timeout>();
  /** Creds writes in order, one at a time. */
  private credsChain: Promise<void> = Promise.resolve();
  /** Group subjects last seen, so a sync's own `groups.update` echo does not look like a change. */
  private readonly knownGroups = new Map<string, string>();
  /** Listings in flight: the library announces every group it fetched as an update, which is no change. */
  private listing = 0;
  /** Incoming messages pass one at a time (a reply may need a look at what was offered), so their order holds. */
  private inbound: Promise<void> = Promise.resolve();
  /** A logout asked for between the phone's confirmation and the open socket (a wrong phone): sent once open. */
  private pendingLogout: { resolve(): void; reject(error: Error): void } | null = null;
  readonly capabilities: ConnectionCapabilities;

  constructor(
    options: ConnectOptions,
    private readonly onEvent: NetworkEventHandler,
    private readonly deps: ConnectionDeps,
  ) {
    this.pairing = options.session === null;
    this.session = options.session ?? `${SESSION_PREFIX}${randomUUID()}`;
    this.capabilities = { interactive: deps.nativeInteractive ? 'native' : 'text' };
    // Nothing happens inside connect(): the gateway stores the connection first.
    setImmediate(() => void this.start());
  }

  // --- life ---------------------------------------------------------------

  private async start(): Promise<void> {
    if (this.state === 'ended') return;
    if (!this.session.startsWith(SESSION_PREFIX)) {
      return this.finish({ type: 'logged_out', reason: 'the stored session is not a WhatsApp session' });
    }
    try {
      // An earlier connection of this session may still be writing its last credentials: read after them.
      if (!this.pairing) await this.deps.writes.settled(this.session);
      if ((this.state as ConnectionState) === 'ended') return;
      this.writer = await this.deps.states.claim(this.session, { create: this.pairing });
      if (this.writer === null) {
        return this.finish({ type: 'logged_out', reason: 'the stored session no longer exists' });
      }
      // Before any socket writes: a row re-sealed concurrently with the library's own write could undo it.
      if (!this.pairing && this.deps.sealer.hasPrevious) {
        const resealed = await resealSession(this.writer, this.deps.sealer);
        if (resealed > 0) {
          this.deps.logger.info(
            { session: this.session, rows: resealed },
            'WhatsApp session re-sealed under the current key',
          );
        }
      }
      this.auth = await loadSessionAuth(this.writer, this.deps.sealer, {
        fresh: this.pairing,
        track: (write) => this.deps.writes.track(this.session, write),
      });
    } catch (error) {
      if (error instanceof UnreadableStateError) {
        this.deps.logger.error({ session: this.session, err: error }, 'stored WhatsApp session cannot be read');
        return this.finish({ type: 'logged_out', reason: 'the stored session can no longer be read' });
      }
      this.deps.logger.warn({ err: error }, 'loading the WhatsApp session failed');
      return this.finish({ type: 'disconnected', reason: 'the stored session could not be loaded', retry: 'backoff' });
    }
    if (this.state !== 'starting') return;
    this.state = this.pairing ? 'pairing' : 'connecting';
    this.openSocket();
  }

  private openSocket(): void {
    const auth = this.auth;
    if (auth === null || this.state === 'ended') return;
    const socket = this.deps.factory({
      auth: auth.state,
      logger: this.deps.logger,
      getMessage: (key) => this.sentMessage(key),
    });
    this.socket = socket;
    const on = {
      'connection.update': (update: BaileysEventMap['connection.update']) => this.onConnectionUpdate(socket, update),
      'creds.update': () => this.saveCreds(),
      'messages.upsert': (upsert: BaileysEventMap['messages.upsert']) => this.onUpsert(upsert),
      'messages.update': (updates: BaileysEventMap['messages.update']) => this.onMessageUpdates(updates),
      'groups.upsert': (groups: BaileysEventMap['groups.upsert']) =>
        this.groupsChanged(groups.filter((g) => !this.knownGroups.has(g.id)).map((g) => g.id)),
      'groups.update': (groups: BaileysEventMap['groups.update']) =>
        this.listing === 0 &&
        this.groupsChanged(
          groups
            .filter((g) => g.id !== undefined && (g.subject === undefined || this.knownGroups.get(g.id) !== g.subject))
            .map((g) => g.id as string),
        ),
      'group-participants.update': (update: BaileysEventMap['group-participants.update']) =>
        this.groupsChanged([update.id]),
    };
    const onAck = (node: BinaryNode) => this.onAck(node);
    socket.ev.on('connection.update', on['connection.update']);
    socket.ev.on('creds.update', on['creds.update']);
    socket.ev.on('messages.upsert', on['messages.upsert']);
    socket.ev.on('messages.update', on['messages.update']);
    socket.ev.on('groups.upsert', on['groups.upsert']);
    socket.ev.on('groups.update', on['groups.update']);
    socket.ev.on('group-participants.update', on['group-participants.update']);
    socket.ws.on('CB:ack,class:message', onAck);
    this.detach = () => {
      socket.ev.off('connection.update', on['connection.update']);
      socket.ev.off('creds.update', on['creds.update']);
      socket.ev.off('messages.upsert', on['messages.upsert']);
      socket.ev.off('messages.update', on['messages.update']);
      socket.ev.off('groups.upsert', on['groups.upsert']);
      socket.ev.off('groups.update', on['groups.update']);
      socket.ev.off('group-participants.update', on['group-participants.update']);
      socket.ws.off('CB:ack,class:message', onAck);
    };
  }

  /** Ends the current socket without a trace: its own close event must not reach the gateway. */
  private dropSocket(): void {
    // Messages the library still holds in its event buffer were receipted already: they are handed over first.
    try {
      this.socket?.ev.flush();
    } catch (error) {
      this.deps.logger.error({ err: error }, "flushing the library's event buffer failed");
    }
    this.detach?.();
    this.detach = null;
    const socket = this.socket;
    this.socket = null;
    socket?.end(undefined).catch(() => undefined);
  }

  private onConnectionUpdate(socket: SocketPort, update: BaileysEventMap['connection.update']): void {
    if (socket !== this.socket || this.state === 'ended') return;
    if (typeof update.qr === 'string' && this.pairing && !this.paired) this.emit({ type: 'qr', qr: update.qr });
    if (update.isNewLogin === true && this.pairing && !this.paired) {
      // The phone confirmed the pairing: from here on the session is the device's, even if the restart
      // the network asks for next fails and the device has to reconnect later.
      const phone = phoneOf(this.auth?.state.creds.me?.id);
      if (phone !== null) {
        this.paired = true;
        this.emit({ type: 'paired', phone, session: this.session });
      }
    }
    if (update.connection === 'open') {
      const phone = phoneOf(this.auth?.state.creds.me?.id);
      if (phone === null) {
        this.finish({ type: 'logged_out', reason: 'the network named no phone number for this session' });
        return;
      }
      if (this.pairing && !this.paired) {
        this.paired = true;
        this.emit({ type: 'paired', phone, session: this.session });
      }
      this.state = 'open';
      const unlink = this.pendingLogout;
      this.pendingLogout = null;
      // The network answers the unlink by closing with "logged out": the state goes, nothing opens.
      if (unlink !== null) return void socket.logout().then(unlink.resolve, unlink.reject);
      this.emit({ type: 'connected', phone });
      return;
    }
    if (update.connection !== 'close') return;
    // A pairing attempt is "paired" once the phone confirmed it (isNewLogin), before the restart.
    const action = closeAction(update.lastDisconnect?.error, this.pairing && !this.paired && !this.hasIdentity());
    switch (action.kind) {
      case 'restart':
      case 'new-qr-socket':
        this.dropSocket();
        this.state = this.pairing && !this.paired ? 'pairing' : 'connecting';
        if (this.state === 'pairing') forgetUnconfirmed(this.auth?.state.creds);
        this.openSocket();
        return;
      case 'logged_out':
        this.finish({ type: 'logged_out', reason: action.reason });
        return;
      case 'disconnected':
        this.finish({ type: 'disconnected', reason: action.reason, retry: action.retry });
        return;
    }
  }

  /** The phone confirmed the pairing: the credentials name our account (not just a pairing code's number). */
  private hasIdentity(): boolean {
    return confirmedIdentity(this.auth?.state.creds);
  }

  private finish(event: Final): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.dropSocket();
    this.endWaits(new NetworkSendError(`connection ended: ${event.reason}`, 'transient'));
    // A session that never became a device's, or that the network ended, leaves nothing behind; the
    // event follows the deletion, so a reconnect it prompts finds no session left.
    // Incoming messages still on their way (receipted by the network already) reach the gateway first, while the
    // connection is still its own.
    const inbound = this.inbound;
    if (event.type === 'logged_out' || (this.pairing && !this.paired)) {
      void inbound.then(() => this.discardState()).then(() => this.emit(event));
      return;
    }
    void inbound.then(() => this.emit(event));
  }

  private endWaits(error: Error): void {
    this.pendingLogout?.reject(error);
    this.pendingLogout = null;
    for (const waiter of this.acks.values()) {
      if (waiter.timer !== null) clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.acks.clear();
    for (const timer of this.typing) clearTimeout(timer);
    this.typing.clear();
  }

  private discardState(): Promise<void> {
    return this.deps.states
      .discard(this.session)
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'discarding a WhatsApp session failed'));
  }

  private emit(event: NetworkEvent): void {
    // After the end only the final event, and incoming messages handed over before it (never lost: deliver()).
    if (this.state === 'ended' && !isFinal(event) && event.type !== 'incoming_message') return;
    try {
      this.onEvent(event);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'network event handler failed');
    }
  }

  private saveCreds(): void {
    const auth = this.auth;
    if (auth === null || this.state === 'ended') return;
    // Queued saves count as under way too: the next connection of the session reads after the last of them.
    this.credsChain = this.deps.writes.track(
      this.session,
      this.credsChain
        .then(() => auth.saveCreds())
        .catch((error: unknown) => {
          // Credentials that did not reach the store would be lost on the next restart: end the connection loudly.
          this.deps.logger.error({ err: error }, 'saving WhatsApp credentials failed');
          if (error instanceof StaleNetworkStateError) {
            this.finish({ type: 'disconnected', reason: 'another connection holds this session', retry: 'replaced' });
          } else {
            this.finish({ type: 'disconnected', reason: 'the session could not be stored', retry: 'backoff' });
          }
        }),
    );
  }

  // --- sending ---------------------------------------------------------------

  private open(): SocketPort {
    if (this.state !== 'open' || this.socket === null) throw new NetworkUnavailableError();
    return this.socket;
  }

  private jidOf(to: PhoneNumber | NetworkGroupId): string {
    return to.includes('@') ? to : userJid(to);
  }

  async sendMessage(message: OutgoingNetworkMessage): Promise<void> {
    const socket = this.open();
    const writer = this.writer as NetworkStateWriter;
    const networkId = toNetworkId(message.id);
    if (networkId === null) throw new NetworkSendError('the message id cannot be carried to WhatsApp', 'permanent');
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
      if (interactive !== null && this.deps.nativeInteractive) {
        sent = nativeInteractive(interactive);
        await socket.relayMessage(this.jidOf(message.to), sent, {
          messageId: networkId,
          additionalNodes: NATIVE_FLOW_NODES,
        });
      } else {
        const options = { messageId: networkId, ...(quoted === undefined ? {} : { quoted }) };
        sent = (await socket.sendMessage(this.jidOf(message.to), outgoingContent(content, message.mentions), options))
          ?.message;
      }
    } catch (error) {
      this.cancelAck(networkId);
      throw new NetworkSendError(`sending failed: ${(error as Error).message}`, 'transient');
    }
    // The stanza has left (media uploaded first): only now does the wait for the server's answer start.
    this.startAckClock(networkId);
    if (sent !== null && sent !== undefined) {
      const payload = proto.Message.encode(sent).finish();
      const place = { session: this.session, kind: 'sent', id: networkId };
      await writer.recordSent(networkId, this.deps.sealer.seal(payload, place), Date.now());
    }
    await acked;
    if (interactive !== null && !this.deps.nativeInteractive) await this.recordOffer(writer, message.to, interactive);
    await writer.markSentAcked(networkId, Date.now());
  }

  /** What a list or template sent as text offered in the chat, so a reply picking from it is read back. */
  private async recordOffer(writer: NetworkStateWriter, chat: string, content: InteractiveContent): Promise<void> {
    const offer = offerOf(content);
    if (offer === null) return;
    const place = { session: this.session, kind: 'offer', id: chat };
    try {
      await writer.recordOffer(chat, this.deps.sealer.seal(encodeOffer(offer), place), Date.now());
    } catch (error) {
      // The message reached the recipient; only reading a numbered reply back is lost. Sending it again would not help.
      this.deps.logger.warn({ err: error }, 'recording the choices of a list or template failed');
    }
  }

  /** The quoted message of a reply: ours as sent when the sent records still have it, else what the gateway knows. */
  private async quotedOf(quoted: QuotedMessage): Promise<WAMessage> {
    const sent = quoted.fromMe
      ? await this.sentMessage({ id: quotedNetworkId(quoted) }).catch((error: unknown) => {
          this.deps.logger.warn({ err: error }, 'the quoted message could not be read from the sent records');
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
    }, this.deps.ackTimeoutMs);
  }

  private cancelAck(networkId: string): void {
    const waiter = this.acks.get(networkId);
    if (waiter === undefined) return;
    if (waiter.timer !== null) clearTimeout(waiter.timer);
    this.acks.delete(networkId);
    waiter.resolve();
  }

  private onAck(node: BinaryNode): void {
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
      this.emit({
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
    const writer = this.writer;
    try {
      if (writer !== null) await writer.markSentAcked(networkId, Date.now());
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'recording a late acknowledgement failed');
    }
    this.emit({ type: 'message_status', id: ours, status: 'sent', at: new Date() });
  }

  /** Answers the network's resend requests from the sent records; undefined when not ours or pruned. */
  private async sentMessage(key: WAMessageKey): Promise<proto.IMessage | undefined> {
    if (typeof key.id !== 'string' || this.writer === null) return undefined;
    const record = await this.writer.readSent(key.id);
    if (record === null) return undefined;
    const place = { session: this.session, kind: 'sent', id: key.id };
    return proto.Message.decode(this.deps.sealer.open(record.payload, place).plain);
  }

  async sendTyping(to: PhoneNumber | NetworkGroupId, durationMs: number): Promise<void> {
    const socket = this.open();
    const jid = this.jidOf(to);
    // WhatsApp shows typing only from a device that is `available`; the socket connects unavailable (so the
    // phone keeps its notifications) and goes back to it when the typing ends.
    await socket.sendPresenceUpdate('available');
    await socket.sendPresenceUpdate('composing', jid);
    const timer = setTimeout(() => {
      this.typing.delete(timer);
      if (this.socket !== socket) return;
      socket
        .sendPresenceUpdate('paused', jid)
        .then(() => socket.sendPresenceUpdate('unavailable'))
        .catch(() => undefined);
    }, durationMs);
    timer.unref();
    this.typing.add(timer);
  }

  // --- receiving -------------------------------------------------------------

  private onUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // Messages that arrived while the device was offline come as `append`: they count the same.
    if (type !== 'notify' && type !== 'append') return;
    for (const message of messages) {
      const event = translateIncoming(message);
      if (typeof event !== 'string') this.inbound = this.inbound.then(() => this.deliver(event));
      else if (event === 'unresolved sender') {
        this.deps.logger.warn({ id: message.key?.id }, 'incoming message skipped: sender has no phone number');
      }
    }
  }

  /** Passes an incoming message on; a text that picks from what was offered in its chat as the choice. */
  private async deliver(event: Incoming): Promise<void> {
    const { content } = event;
    // Passed on even after the connection ended: the network receipted it when it handed it over.
    if (this.state === 'ended' || content.type !== 'chat' || content.text.length > MAX_CHOICE_REPLY) {
      return this.emit(event);
    }
    const picked = await this.choiceIn(event.group ?? event.from, content.text).catch((error: unknown) => {
      // Never lose the message over it: it goes on as the text it is.
      this.deps.logger.warn({ err: error }, 'reading what was offered in a chat failed');
      return null;
    });
    this.emit(picked === null ? event : { ...event, content: picked });
  }

  private async choiceIn(chat: string, text: string) {
    const writer = this.writer;
    if (writer === null) return null;
    const stored = await writer.readOffer(chat, Date.now() - OFFER_TTL_MS);
    if (stored === null) return null;
    const offer = decodeOffer(
      this.deps.sealer.open(stored.payload, { session: this.session, kind: 'offer', id: chat }).plain,
    );
    return offer === null ? null : pickChoice(offer, text);
  }

  private onMessageUpdates(updates: BaileysEventMap['messages.update']): void {
    for (const { key, update } of updates) {
      if (key.fromMe !== true || update.status === undefined || update.status === null) continue;
      const id = fromNetworkId(key.id);
      if (id === null) continue;
      const t = update.messageTimestamp;
      const seconds = typeof t === 'number' ? t : t === null || t === undefined ? 0 : Number(t.toString());
      const at = seconds > 0 ? new Date(seconds * 1000) : new Date();
      if (update.status === STATUS.ERROR) {
        this.emit({ type: 'message_status', id, status: 'failed', reason: 'refused by the network', at });
      } else if (update.status === STATUS.DELIVERY_ACK) {
        this.emit({ type: 'message_status', id, status: 'delivered', at });
      } else if (update.status === STATUS.READ || update.status === STATUS.PLAYED) {
        // A delivery and a read may arrive collapsed into one update: both are recorded.
        this.emit({ type: 'message_status', id, status: 'delivered', at });
        this.emit({ type: 'message_status', id, status: 'read', at });
      }
    }
  }

  private groupsChanged(ids: string[]): void {
    if (ids.length > 0) this.emit({ type: 'groups_changed', groupIds: ids });
  }

  // --- groups and numbers ----------------------------------------------------

  private remember(group: NetworkGroup): NetworkGroup {
    this.knownGroups.set(group.id, group.subject);
    return group;
  }

  async listGroups(): Promise<NetworkGroup[]> {
    const socket = this.open();
    this.listing += 1;
    try {
      const all = await socket.groupFetchAllParticipating();
      return Object.values(all).map((metadata) => this.remember(toNetworkGroup(metadata)));
    } finally {
      this.listing -= 1;
    }
  }

  async getGroup(groupId: NetworkGroupId): Promise<NetworkGroup> {
    try {
      return this.remember(toNetworkGroup(await this.open().groupMetadata(groupId)));
    } catch (error) {
      throw groupError(error);
    }
  }

  async createGroup(subject: string, participants: ReadonlyArray<PhoneNumber>): Promise<CreatedNetworkGroup> {
    try {
      const created = await this.open().groupCreate(subject, participants.map(userJid));
      // The creation answer may list participants that failed: the group as the network now has it.
      const group = await this.getGroup(created.id);
      const members = new Set(group.participants.map((p) => p.phone));
      // WhatsApp gives no reason per refused participant here; "not found" until verified on real phones.
      const notAdded = participants
        .filter((phone) => !members.has(phone))
        .map((phone) => ({ phone, code: 'USER_NOT_FOUND' as const }));
      return { ...group, notAdded };
    } catch (error) {
      throw groupError(error);
    }
  }

  async addParticipants(groupId: NetworkGroupId, phones: ReadonlyArray<PhoneNumber>) {
    const socket = this.open();
    try {
      const before = await socket.groupMetadata(groupId);
      const results = await socket.groupParticipantsUpdate(groupId, phones.map(userJid), 'add');
      const byPhone = new Map(results.map((r) => [phoneOf(r.jid), r.status] as const));
      return phones.map((phone, i) =>
        addOutcome(
          phone,
          byPhone.get(phone) ?? results[i]?.status ?? '500',
          before.participants.length >= GROUP_CAPACITY,
        ),
      );
    } catch (error) {
      throw groupError(error);
    }
  }

  async updateGroup(groupId: NetworkGroupId, changes: GroupChanges) {
    await applyGroupChanges(this.open(), groupId, changes);
    return this.getGroup(groupId);
  }

  async checkNumbers(phones: ReadonlyArray<PhoneNumber>) {
    const answers = (await this.open().onWhatsApp(...phones)) ?? [];
    return matchNumbers(phones, answers);
  }

  // --- pairing, logout, close ----------------------------------------------------

  async requestPairingCode(phone: PhoneNumber): Promise<string> {
    if (this.state !== 'pairing' || this.socket === null || this.paired) {
      throw new NetworkUnavailableError('no pairing attempt is running on this connection');
    }
    const code = await this.socket.requestPairingCode(phone);
    // WhatsApp shows the code as two groups of four.
    return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
  }

  async logout(): Promise<void> {
    // Confirmed by the phone but not yet open (the restart after pairing is under way): WhatsApp can only
    // unlink over an open connection, so the unlink waits for it (docs/whatsapp.md, Pairing).
    if (this.paired && (this.state === 'pairing' || this.state === 'connecting')) {
      this.pendingLogout?.reject(new NetworkUnavailableError('a newer logout replaced this one'));
      return new Promise<void>((resolve, reject) => (this.pendingLogout = { resolve, reject }));
    }
    // The network answers by closing with "logged out", which ends this connection with `logged_out`.
    await this.open().logout();
  }

  /** Every write of this session under way (queued credentials, the keys the library stored), and incoming messages. */
  async settled(): Promise<void> {
    // Incoming messages handed over before a close are passed on first (docs/whatsapp.md, Nothing received is lost).
    await this.inbound;
    await this.deps.writes.settled(this.session);
  }

  close(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.dropSocket();
    this.endWaits(new NetworkUnavailableError('the connection was closed'));
    if (this.pairing && !this.paired) void this.discardState();
  }
}
