/**
 * One device's connection to WhatsApp, behind the seam's NetworkConnection: its life.
 *
 * Owns: the life of the device's sockets (a pairing socket, the restart the
 * network asks for right after pairing, capped by restart-cap.ts, a new socket
 * when a pairing attempt's QR codes run out), what a close means (close-codes.ts), the single-writer
 * claim of the session's stored state (re-sealed under the current key
 * before the first socket when a previous key is configured), the credentials'
 * writes, and wiring each socket's events to the parts that send (sending.ts),
 * receive (receiving.ts), manage groups (connection-groups.ts) and download incoming media (connection-media.ts).
 *
 * State: starting → (pairing | connecting) → open → ended. Exactly one final
 * event (`disconnected` or `logged_out`) ends a connection, or `close()` ends
 * it with none; nothing is emitted after that.
 *
 * Must never: emit an event synchronously inside connect() (the gateway has
 * not stored the connection yet), answer a stored session that cannot be read
 * with a fresh QR (it is `logged_out`), swallow a failed state write, open a
 * socket before the previous socket's key writes have settled, or keep the history sync whole (history.ts).
 */
import { randomUUID } from 'node:crypto';
import type { BaileysEventMap } from 'baileys';
import {
  NetworkUnavailableError,
  NetworkSendError,
  type ConnectionCapabilities,
  type ConnectOptions,
  type NetworkConnection,
  type NetworkEvent,
  type NetworkEventHandler,
  type OutgoingNetworkMessage,
  type PhoneNumber,
} from '../network.js';
import { StaleNetworkStateError, type NetworkStateWriter } from '../state.js';
import { loadSessionAuth, resealSession, type SessionAuth } from './auth-state.js';
import { confirmedIdentity, forgetUnconfirmed, pairingCodeOn } from './browser.js';
import { announceCalls, rejectCall } from './calls.js';
import { chatUpdateHandlers, modifyChat } from './chats.js';
import { closeAction, isFinal, type Final } from './close-codes.js';
import type { ConnectionContext, ConnectionDeps } from './connection-context.js';
import { ConnectionGroups } from './connection-groups.js';
import { ConnectionContacts } from './contacts.js';
import { ConnectionMedia } from './connection-media.js';
import { phoneOf } from './numbers.js';
import { prepareInitialPreKeys } from './pre-keys.js';
import { Receiving } from './receiving.js';
import { RestartBudget } from './restart-cap.js';
import { UnreadableStateError } from './seal.js';
import { Sending } from './sending.js';
import { SessionWrites } from './session-writes.js';
import { attachSocket, type SocketHandlers } from './socket-events.js';
import type { SocketPort } from './socket-port.js';

export type { ConnectionDeps } from './connection-context.js';

/** Session handles of this connector; a handle of another network (e.g. the sandbox's) is not ours. */
export const SESSION_PREFIX = 'wa1.';

type ConnectionState = 'starting' | 'pairing' | 'connecting' | 'open' | 'ended';

export class WhatsAppConnection implements NetworkConnection {
  private state: ConnectionState = 'starting';
  private readonly pairing: boolean;
  private readonly session: string;
  private paired = false;
  private writer: NetworkStateWriter | null = null;
  private auth: SessionAuth | null = null;
  private socket: SocketPort | null = null;
  private detach: (() => void) | null = null;
  /** The current (or last) socket's key writes under way: the next socket reads after them. */
  private keyWrites = new SessionWrites();
  /** Creds writes in order, one at a time. */
  private credsChain: Promise<void> = Promise.resolve();
  private readonly sending: Sending;
  private readonly receiving: Receiving;
  private readonly groups: ConnectionGroups;
  private readonly contacts: ConnectionContacts;
  private readonly media: ConnectionMedia;
  /** Whether `paired` was told, once the credentials were stored (reportPaired); false until then. */
  private pairedReported: Promise<boolean> = Promise.resolve(false);
  /** A credentials write failed: the stored session is not the one the network knows. */
  private credsLost = false;
  /** close() was called: the gateway let the connection go and hears nothing more of it. */
  private closedByGateway = false;
  /** Restarts the network asked for (515), capped (restart-cap.ts). */
  private readonly restarts = new RestartBudget();
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
    const ctx: ConnectionContext = {
      session: this.session,
      deps,
      writer: () => this.writer,
      socket: () => this.socket,
      open: () => this.open(),
      ended: () => this.state === 'ended',
      emit: (event) => this.emit(event),
    };
    this.groups = new ConnectionGroups(ctx);
    this.contacts = new ConnectionContacts(
      () => this.open(),
      (event) => this.emit(event),
      (jid) => this.groups.onPicture(jid),
    );
    this.sending = new Sending(ctx, (socket, jid) => this.groups.cached(socket, jid));
    this.receiving = new Receiving(ctx, this.groups);
    this.media = new ConnectionMedia(ctx);
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
    // A session recorded paired whose credentials never named the account (a crash between the two, before the
    // write order of reportPaired) cannot log in: it ends as logged out, cleanly, instead of asking for a QR.
    if (!this.pairing && !this.hasIdentity()) {
      return this.finish({
        type: 'logged_out',
        reason: 'the stored session was never completed (pairing interrupted)',
      });
    }
    this.state = this.pairing ? 'pairing' : 'connecting';
    this.openSocket();
  }

  private openSocket(): void {
    const auth = this.auth;
    if (auth === null || this.state === 'ended') return;
    // Key writes of a socket whose stream has closed are refused (auth-state.ts forSocket); none before it exists.
    const made: { socket?: SocketPort } = {};
    const keyWrites = new SessionWrites();
    this.keyWrites = keyWrites;
    const socket = this.deps.factory({
      auth: auth.forSocket(
        () => made.socket === undefined || made.socket.ws.isOpen,
        (write) => keyWrites.track(this.session, write),
      ),
      logger: this.deps.logger,
      getMessage: (key) => this.sending.sentMessage(key),
      cachedGroupMetadata: (jid) => this.groups.cached(socket, jid),
    });
    made.socket = socket;
    this.socket = socket;
    const receipts = this.groups.receiptsFor(socket);
    const handlers: SocketHandlers = {
      'connection.update': (update) => this.onConnectionUpdate(socket, update),
      'creds.update': () => this.saveCreds(),
      'messages.upsert': (upsert) => this.receiving.onUpsert(upsert),
      'messages.update': (updates) => this.receiving.onMessageUpdates(updates),
      'message-receipt.update': (updates) => receipts.handle(updates),
      'groups.upsert': (groups) => this.groups.onUpsert(groups),
      'groups.update': (groups) => this.groups.onUpdate(groups),
      'group-participants.update': (update) => this.groups.onParticipants(update),
      call: (updates) => announceCalls(updates, (event) => this.emit(event)),
      'lid-mapping.update': (update) => this.receiving.onLidMapping(update),
      ...this.receiving.history.handlers(),
      ...this.contacts.handlers,
      ...chatUpdateHandlers(socket, (event) => this.emit(event)),
    };
    this.detach = attachSocket(socket, handlers, (node) => this.sending.onAck(node));
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
        this.reportPaired(phone);
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
        this.reportPaired(phone);
      }
      this.state = 'open';
      const unlink = this.pendingLogout;
      this.pendingLogout = null;
      // The network answers the unlink by closing with "logged out": the state goes, nothing opens.
      if (unlink !== null) return void socket.logout().then(unlink.resolve, unlink.reject);
      // Never before `paired`, which waits for the credentials to be stored.
      void this.pairedReported.then(() => {
        if (this.socket === socket && this.state === 'open') this.emit({ type: 'connected', phone });
      });
      return;
    }
    if (update.connection !== 'close') return;
    // A pairing attempt is "paired" once the phone confirmed it (isNewLogin), before the restart.
    const action = closeAction(update.lastDisconnect?.error, this.pairing && !this.paired && !this.hasIdentity());
    if (action.kind === 'restart' && !this.restarts.take(Date.now())) {
      // A network that keeps asking must not make a tight loop of logins: past the cap it is a drop, backed off.
      const reason = this.restarts.reason();
      this.deps.logger.warn({ session: this.session }, `${reason}; reconnecting with backoff`);
      this.finish({ type: 'disconnected', reason, retry: 'backoff' });
      return;
    }
    switch (action.kind) {
      case 'restart':
      case 'new-qr-socket':
        this.dropSocket();
        this.state = this.pairing && !this.paired ? 'pairing' : 'connecting';
        if (this.state === 'pairing') forgetUnconfirmed(this.auth?.state.creds);
        // The closed socket's key writes settle first (one whose COMMIT met the close is undone: network-state.ts),
        // then, right after pairing, the first login's pre-keys are made off the event loop (pre-keys.ts).
        void this.keyWrites
          .settled(this.session)
          .then(() => (this.pairing && this.paired ? this.preparePreKeys() : undefined))
          .then(() => this.openSocket());
        return;
      case 'logged_out':
        this.finish({ type: 'logged_out', reason: action.reason });
        return;
      case 'disconnected':
        this.finish({ type: 'disconnected', reason: action.reason, retry: action.retry });
        return;
    }
  }

  private async preparePreKeys(): Promise<void> {
    try {
      if (this.auth !== null && (await prepareInitialPreKeys(this.auth.state, this.deps.preKeys)) > 0) this.saveCreds();
    } catch (error) {
      // The library makes them itself then, as it would have.
      this.deps.logger.warn({ err: error }, 'making the first pre-keys ahead of the login failed');
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
    // A pairing the gateway was not told of (never confirmed, or its credentials not stored) leaves nothing either,
    // and `paired`, when it is told, comes first.
    const inbound = this.receiving.settled();
    const reported = this.pairing ? this.pairedReported : Promise.resolve(true);
    void Promise.all([inbound, reported]).then(async ([, told]) => {
      if (event.type === 'logged_out' || !told) await this.discardState();
      this.emit(event);
    });
  }

  /**
   * `paired` once the credentials naming the account are stored, never before (docs/whatsapp.md, A crash while
   * pairing): the device is recorded PAIRED with this session only when the session can log in after a restart.
   * The library announces the confirmation right after it asked for the credentials to be saved, so the save
   * under way is the one to wait for.
   */
  private reportPaired(phone: PhoneNumber): void {
    this.pairedReported = this.credsChain.then(() => {
      if (this.credsLost || this.closedByGateway) return false;
      this.emit({ type: 'paired', phone, session: this.session });
      return true;
    });
  }

  private endWaits(error: Error): void {
    this.pendingLogout?.reject(error);
    this.pendingLogout = null;
    this.sending.endWaits(error);
  }

  private discardState(): Promise<void> {
    return this.deps.states
      .discard(this.session)
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'discarding a WhatsApp session failed'));
  }

  private emit(event: NetworkEvent): void {
    // After the end only the final event, incoming messages handed over before it (never lost: deliver()), and
    // `paired` for a pairing whose credentials were stored (it precedes the final event: finish()).
    if (this.state === 'ended' && !isFinal(event) && event.type !== 'incoming_message' && event.type !== 'paired')
      return;
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
          this.credsLost = true;
          if (error instanceof StaleNetworkStateError) {
            this.finish({ type: 'disconnected', reason: 'another connection holds this session', retry: 'replaced' });
          } else {
            this.finish({ type: 'disconnected', reason: 'the session could not be stored', retry: 'backoff' });
          }
        }),
    );
  }

  // --- sending (sending.ts) ---------------------------------------------------

  private open(): SocketPort {
    if (this.state !== 'open' || this.socket === null) throw new NetworkUnavailableError();
    return this.socket;
  }

  readonly sendMessage = (message: OutgoingNetworkMessage): Promise<void> => this.sending.sendMessage(message);
  readonly sendTyping: NetworkConnection['sendTyping'] = (to, durationMs) => this.sending.sendTyping(to, durationMs);
  readonly sendPresence: NetworkConnection['sendPresence'] = (state, to) => this.sending.sendPresence(state, to);

  // --- groups and numbers (connection-groups.ts) -------------------------------

  readonly listGroups: NetworkConnection['listGroups'] = () => this.groups.listGroups();
  readonly getGroup: NetworkConnection['getGroup'] = (groupId) => this.groups.getGroup(groupId);
  readonly createGroup: NetworkConnection['createGroup'] = (subject, phones) =>
    this.groups.createGroup(subject, phones);
  readonly addParticipants: NetworkConnection['addParticipants'] = (id, ps) => this.groups.addParticipants(id, ps);
  readonly updateGroup: NetworkConnection['updateGroup'] = (id, changes) => this.groups.updateGroup(id, changes);
  readonly changeParticipants: NetworkConnection['changeParticipants'] = (id, phones, action) =>
    this.groups.changeParticipants(id, phones, action);
  readonly groupInvite: NetworkConnection['groupInvite'] = (id, revoke) => this.groups.groupInvite(id, revoke);
  readonly joinGroup: NetworkConnection['joinGroup'] = (code) => this.groups.joinGroup(code);
  readonly leaveGroup: NetworkConnection['leaveGroup'] = (id) => this.groups.leaveGroup(id);
  readonly rejectCall: NetworkConnection['rejectCall'] = (call) => rejectCall(this.open(), call);
  readonly checkNumbers: NetworkConnection['checkNumbers'] = (phones) => this.groups.checkNumbers(phones);
  readonly modifyChat: NetworkConnection['modifyChat'] = (chat, c, last) => modifyChat(this.open(), chat, c, last);
  // Contacts and the own profile (contacts.ts).
  readonly listContacts: NetworkConnection['listContacts'] = () => this.contacts.listContacts();
  readonly getContact: NetworkConnection['getContact'] = (phone) => this.contacts.getContact(phone);
  readonly setBlocked: NetworkConnection['setBlocked'] = (phone, on) => this.contacts.setBlocked(phone, on);
  readonly listBlocked: NetworkConnection['listBlocked'] = () => this.contacts.listBlocked();
  readonly getProfile: NetworkConnection['getProfile'] = () => this.contacts.getProfile();
  readonly updateProfile: NetworkConnection['updateProfile'] = (changes) => this.contacts.updateProfile(changes);
  readonly setGroupPicture: NetworkConnection['setGroupPicture'] = (id, p) => this.contacts.setGroupPicture(id, p);
  // Incoming media: connection-media.ts.
  readonly downloadMedia: NetworkConnection['downloadMedia'] = (media) => this.media.download(media);

  // --- pairing, logout, close ----------------------------------------------------

  async requestPairingCode(phone: PhoneNumber): Promise<string> {
    return pairingCodeOn(this.state === 'pairing' && !this.paired ? this.socket : null, phone);
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
    await this.receiving.settled();
    await this.deps.writes.settled(this.session);
  }

  close(): void {
    if (this.state === 'ended') return;
    this.closedByGateway = true;
    this.state = 'ended';
    this.dropSocket();
    this.endWaits(new NetworkUnavailableError('the connection was closed'));
    if (this.pairing && !this.paired) void this.discardState();
  }
}
