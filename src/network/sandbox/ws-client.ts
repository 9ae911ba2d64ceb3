/**
 * A Network that talks to a sandbox running as its own process
 * (startSandboxServer), over ONE WebSocket per client that multiplexes every
 * device connection and every control call.
 *
 * Owns: the socket's life (opened lazily, re-opened lazily after a drop),
 * request/response matching and turning a lost socket into
 * `disconnected {reason: 'network unreachable'}` for every device connection.
 * Must never: reconnect device connections by itself (that is the gateway's
 * job, with backoff) or keep anything per device beyond a few fields.
 */
import { WebSocket } from 'ws';
import type {
  ConnectOptions,
  MediaSource,
  Network,
  NetworkConnection,
  NetworkEvent,
  NetworkEventHandler,
  NetworkGroup,
} from '../network.js';
import { NetworkUnavailableError } from '../network.js';
import type { SandboxCall, SandboxChatSettings, SandboxControl, SandboxPhone } from '../sandbox-control.js';
import type { ClientFrame, ConnectionOp, ControlOp, ServerFrame } from './ws-protocol.js';
import { downloadSandboxMedia } from './media-download.js';
import {
  decodeError,
  decodeEvent,
  encodeMessage,
  isFinalEvent,
  MAX_FRAME_BYTES,
  WIRE_CHUNK_BYTES,
} from './ws-protocol.js';

const UNREACHABLE = 'network unreachable';

type CallFrame = Extract<ClientFrame, { t: 'call' }>;

/** Sends a frame; resolves once it has left for the socket (the sender's backpressure), false if it could not. */
function written(socket: WebSocket, text: string): Promise<boolean> {
  return new Promise((resolve) => socket.send(text, (err) => resolve(err === undefined || err === null)));
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  /** Device calls fail as NetworkUnavailableError when the socket is lost; control calls as a plain Error. */
  readonly device: boolean;
}

class ClientConnection implements NetworkConnection {
  closed = false;

  constructor(
    private readonly client: SandboxClient,
    readonly cid: number,
    private readonly onEvent: NetworkEventHandler,
  ) {}

  /** Ends this connection locally; `event` (if any) is the last thing the gateway hears. */
  end(event?: NetworkEvent): void {
    if (this.closed) return;
    this.closed = true;
    this.client.forget(this.cid);
    if (event) this.deliver(event);
  }

  receive(event: NetworkEvent): void {
    if (this.closed) return;
    if (isFinalEvent(event)) this.end(event);
    else this.deliver(event);
  }

  private deliver(event: NetworkEvent): void {
    try {
      this.onEvent(event);
    } catch (err) {
      console.error('sandbox client: event handler failed: %s', (err as Error).message);
    }
  }

  private call<T>(op: ConnectionOp, ...args: unknown[]): Promise<T> {
    if (this.closed) return Promise.reject(new NetworkUnavailableError());
    return this.client.request({ t: 'call', rid: 0, cid: this.cid, op, args }) as Promise<T>;
  }

  sendMessage: NetworkConnection['sendMessage'] = async (message) => {
    if (this.closed) throw new NetworkUnavailableError();
    const { wire, media } = encodeMessage(message);
    const frame: CallFrame = { t: 'call', rid: 0, cid: this.cid, op: 'sendMessage', args: [wire] };
    if (media === null) await this.client.request(frame);
    else await this.client.upload(frame, media);
  };
  sendTyping: NetworkConnection['sendTyping'] = (to, ms) => this.call('sendTyping', to, ms);
  sendPresence: NetworkConnection['sendPresence'] = (state, to) => this.call('sendPresence', state, to);
  listGroups: NetworkConnection['listGroups'] = () => this.call<NetworkGroup[]>('listGroups');
  getGroup: NetworkConnection['getGroup'] = (id) => this.call('getGroup', id);
  createGroup: NetworkConnection['createGroup'] = (subject, phones) => this.call('createGroup', subject, phones);
  addParticipants: NetworkConnection['addParticipants'] = (id, phones) => this.call('addParticipants', id, phones);
  updateGroup: NetworkConnection['updateGroup'] = (id, changes) => this.call('updateGroup', id, changes);
  changeParticipants: NetworkConnection['changeParticipants'] = (id, phones, action) =>
    this.call('changeParticipants', id, phones, action);
  groupInvite: NetworkConnection['groupInvite'] = (id, revoke) => this.call('groupInvite', id, revoke);
  joinGroup: NetworkConnection['joinGroup'] = (code) => this.call('joinGroup', code);
  leaveGroup: NetworkConnection['leaveGroup'] = (id) => this.call('leaveGroup', id);
  rejectCall: NetworkConnection['rejectCall'] = (call) => this.call('rejectCall', call);
  checkNumbers: NetworkConnection['checkNumbers'] = (phones) => this.call('checkNumbers', phones);
  // Times travel as ISO 8601 text (ws-server.ts reads them back).
  modifyChat: NetworkConnection['modifyChat'] = (chat, change, last) => this.call('modifyChat', chat, change, last);
  listContacts: NetworkConnection['listContacts'] = () => this.call('listContacts');
  getContact: NetworkConnection['getContact'] = (phone) => this.call('getContact', phone);
  setBlocked: NetworkConnection['setBlocked'] = (phone, on) => this.call('setBlocked', phone, on);
  listBlocked: NetworkConnection['listBlocked'] = () => this.call('listBlocked');
  getProfile: NetworkConnection['getProfile'] = () => this.call('getProfile');
  updateProfile: NetworkConnection['updateProfile'] = (changes) => this.call('updateProfile', changes);
  setGroupPicture: NetworkConnection['setGroupPicture'] = (id, picture) => this.call('setGroupPicture', id, picture);
  // The media's address came with the message: the bytes are read from it here, not through the sandbox's socket.
  downloadMedia: NonNullable<NetworkConnection['downloadMedia']> = async (media) => {
    if (this.closed) throw new NetworkUnavailableError();
    return downloadSandboxMedia(media);
  };
  logout: NetworkConnection['logout'] = () => this.call('logout');
  requestPairingCode: NetworkConnection['requestPairingCode'] = (phone) =>
    this.call<string>('requestPairingCode', phone);

  close(): void {
    if (this.closed) return;
    this.end();
    this.client.sendIfOpen({ t: 'close', cid: this.cid });
  }
}

class SandboxClient {
  private socket: WebSocket | null = null;
  private opening: Promise<WebSocket> | null = null;
  private readonly connections = new Map<number, ClientConnection>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly url: string) {}

  connect(options: ConnectOptions, onEvent: NetworkEventHandler): NetworkConnection {
    const connection = new ClientConnection(this, this.nextId++, onEvent);
    if (this.closed) {
      queueMicrotask(() => connection.end({ type: 'disconnected', reason: 'network closed' }));
      return connection;
    }
    this.connections.set(connection.cid, connection);
    const frame: ClientFrame = { t: 'connect', cid: connection.cid, options };
    // A failed open drops the socket, and the drop tells every connection (this one included): no catch needed.
    this.open().then(
      (socket) => {
        if (!connection.closed) socket.send(JSON.stringify(frame));
      },
      () => undefined,
    );
    return connection;
  }

  async request(frame: ClientFrame & { rid: number }): Promise<unknown> {
    const device = frame.t === 'call';
    let socket: WebSocket;
    try {
      socket = await this.open();
    } catch (err) {
      throw device ? new NetworkUnavailableError(UNREACHABLE) : (err as Error);
    }
    if (socket.readyState !== WebSocket.OPEN) {
      throw device ? new NetworkUnavailableError(UNREACHABLE) : new Error(`sandbox ${UNREACHABLE}`);
    }
    return new Promise((resolve, reject) => {
      const rid = this.nextId++;
      this.pending.set(rid, { resolve, reject, device });
      socket.send(JSON.stringify({ ...frame, rid }));
    });
  }

  /**
   * A `sendMessage` call whose media follows in chunk frames, each written once the one before left
   * the socket. Stops early when the call is answered first (refused) or the socket drops; a source
   * that cannot be read aborts the call and rejects with its own error.
   */
  async upload(frame: CallFrame, media: MediaSource): Promise<unknown> {
    let socket: WebSocket;
    try {
      socket = await this.open();
    } catch {
      throw new NetworkUnavailableError(UNREACHABLE);
    }
    if (socket.readyState !== WebSocket.OPEN) throw new NetworkUnavailableError(UNREACHABLE);
    const rid = this.nextId++;
    let answered = false;
    const answer = new Promise<unknown>((resolve, reject) => {
      const settle = () => (answered = true);
      this.pending.set(rid, {
        resolve: (value) => (settle(), resolve(value)),
        reject: (err) => (settle(), reject(err)),
        device: true,
      });
    });
    // Answered (or dropped) while still sending: the caller hears it once the loop below stops.
    answer.catch(() => undefined);
    socket.send(JSON.stringify({ ...frame, rid }));
    let lost = false;
    try {
      for await (const chunk of media.open()) {
        for (let at = 0; at < chunk.byteLength && !answered && !lost; at += WIRE_CHUNK_BYTES) {
          const size = Math.min(WIRE_CHUNK_BYTES, chunk.byteLength - at);
          const data = Buffer.from(chunk.buffer, chunk.byteOffset + at, size).toString('base64');
          lost = !(await written(socket, JSON.stringify({ t: 'chunk', rid, data })));
        }
        if (answered || lost) break;
      }
    } catch (err) {
      if (answered) return answer;
      this.pending.delete(rid);
      this.sendIfOpen({ t: 'abort', rid });
      throw err;
    }
    if (answered) return answer;
    if (lost) {
      // The socket is closing: its drop will tell every connection; this call fails as any call in flight.
      this.pending.delete(rid);
      throw new NetworkUnavailableError(UNREACHABLE);
    }
    socket.send(JSON.stringify({ t: 'end', rid }));
    return answer;
  }

  control(op: ControlOp, ...args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('sandbox client is closed'));
    return this.request({ t: 'control', rid: 0, op, args });
  }

  forget(cid: number): void {
    this.connections.delete(cid);
  }

  sendIfOpen(frame: ClientFrame): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private open(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(new Error('sandbox client is closed'));
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    if (this.opening) return this.opening;
    const socket = new WebSocket(this.url, { maxPayload: MAX_FRAME_BYTES });
    this.socket = socket;
    const opening = new Promise<WebSocket>((resolve, reject) => {
      let failure = '';
      socket.on('open', () => resolve(socket));
      socket.on('message', (data) => this.onFrame(String(data)));
      socket.on('error', (err) => (failure = err.message));
      socket.on('close', () => {
        reject(new Error(`sandbox ${UNREACHABLE}${failure ? `: ${failure}` : ''}`));
        this.onDrop(socket);
      });
    });
    this.opening = opening;
    const settled = () => {
      if (this.opening === opening) this.opening = null;
    };
    opening.then(settled, settled);
    return opening;
  }

  private onFrame(text: string): void {
    let frame: ServerFrame;
    try {
      frame = JSON.parse(text) as ServerFrame;
    } catch {
      console.error('sandbox client: ignoring a frame that is not JSON');
      return;
    }
    if (frame.t === 'event') {
      this.connections.get(frame.cid)?.receive(decodeEvent(frame.event));
      return;
    }
    const pending = this.pending.get(frame.rid);
    if (!pending) return;
    this.pending.delete(frame.rid);
    if (frame.ok) pending.resolve(frame.value);
    else pending.reject(decodeError(frame.error));
  }

  /** The socket is gone: every call in flight fails and every device connection hears it. */
  private onDrop(socket: WebSocket): void {
    if (this.socket !== socket) return;
    this.socket = null;
    for (const [rid, pending] of this.pending) {
      this.pending.delete(rid);
      pending.reject(pending.device ? new NetworkUnavailableError(UNREACHABLE) : new Error(`sandbox ${UNREACHABLE}`));
    }
    for (const connection of [...this.connections.values()]) {
      connection.end(this.closed ? undefined : { type: 'disconnected', reason: UNREACHABLE });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const connection of [...this.connections.values()]) connection.end();
    const socket = this.socket;
    if (!socket) return;
    if (socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.terminate();
    });
  }
}

export function connectSandboxNetwork(url: string): Network & { readonly sandbox: SandboxControl } {
  const client = new SandboxClient(url);
  const control = (op: ControlOp, ...args: unknown[]) => client.control(op, ...args);
  return {
    description: `sandbox (simulated network at ${url})`,
    connect: (options, onEvent) => client.connect(options, onEvent),
    sandbox: {
      scan: (qr, phone, scope) => control('scan', qr, phone, scope) as Promise<{ device_phone: string }>,
      pair: (code, phone, scope) => control('pair', code, phone, scope) as Promise<{ device_phone: string }>,
      upsertPhone: (settings, view) => control('upsertPhone', settings, view) as Promise<SandboxPhone>,
      getPhone: (phone, view) => control('getPhone', phone, view) as Promise<SandboxPhone>,
      sendFromPhone: (phone, to, text, recipient, view) =>
        control('sendFromPhone', phone, to, text, recipient, view) as Promise<{ message_id: string }>,
      changeFromPhone: async (phone, change, recipient, view) => {
        await control('changeFromPhone', phone, change, recipient, view);
      },
      changeChatOnPhone: (phone, chat, change, recipient, view) =>
        control('changeChatOnPhone', phone, chat, change, recipient, view) as Promise<SandboxChatSettings>,
      callFromPhone: (phone, call, recipient, view) =>
        control('callFromPhone', phone, call, recipient, view) as Promise<SandboxCall>,
      seedHistory: (phone, to, messages, view) =>
        control('seedHistory', phone, to, messages, view) as Promise<{ seeded: number }>,
      readMessage: async (phone, messageId, view) => {
        await control('readMessage', phone, messageId, view);
      },
      createGroup: (name, members, view) => control('createGroup', name, members, view) as Promise<NetworkGroup>,
      changeGroupFromPhone: (phone, groupId, change, view) =>
        control('changeGroupFromPhone', phone, groupId, change, view) as Promise<NetworkGroup>,
      disconnectDevice: async (deviceId, options) => {
        await control('disconnectDevice', deviceId, options);
      },
    },
    close: () => client.close(),
  };
}
