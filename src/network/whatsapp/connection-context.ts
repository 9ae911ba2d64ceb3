/**
 * What one device's connection (connection.ts) shares with the parts that send, receive and manage groups for it
 * (sending.ts, receiving.ts, connection-groups.ts).
 *
 * Owns: the connection's dependencies and the narrow view of its state those parts are given: the session, its
 * writer, the current socket, and the one way to tell the gateway something.
 * Must never: let a part change the connection's life (open, end or replace a socket): only connection.ts does.
 */
import type { Logger } from 'pino';
import type { NetworkEvent, NetworkGroupId, PhoneNumber } from '../network.js';
import type { NetworkStateStore, NetworkStateWriter } from '../state.js';
import { userJid } from './numbers.js';
import type { Sealer } from './seal.js';
import type { SessionWrites } from './session-writes.js';
import type { SocketFactory, SocketPort } from './socket-port.js';

export interface ConnectionDeps {
  readonly states: NetworkStateStore;
  readonly sealer: Sealer;
  readonly factory: SocketFactory;
  readonly logger: Logger;
  /** How long a send waits for the server's acknowledgement before it is a transient failure. */
  readonly ackTimeoutMs: number;
  /** How long a media upload may stall (no bytes moving) before the send is a transient failure. */
  readonly uploadTimeoutMs: number;
  /** Send `list` and `template` in WhatsApp's native interactive form instead of as text (experimental). */
  readonly nativeInteractive: boolean;
  /** `GATEWAY_HISTORY_DAYS`: the history sync at pairing keeps messages of this many days; 0 none (history.ts). */
  readonly historyDays: number;
  /** Pre-keys made off the event loop after pairing, before the first login (pre-keys.ts; 812 but in tests). */
  readonly preKeys: number;
  /** Writes of every session under way in this process, shared by the connections of one network. */
  readonly writes: SessionWrites;
}

export interface ConnectionContext {
  readonly session: string;
  readonly deps: ConnectionDeps;
  /** The session's writer, null before the claim. */
  writer(): NetworkStateWriter | null;
  /** The current socket, null between sockets and after the end. */
  socket(): SocketPort | null;
  /** The current socket if the connection is open, else NetworkUnavailableError. */
  open(): SocketPort;
  /** Whether the connection has ended (close() or its final event). */
  ended(): boolean;
  /** Tells the gateway (after the end only what may still come: see connection.ts emit). */
  emit(event: NetworkEvent): void;
}

export type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;

/** A chat's jid: a group's id as it is, a phone number as its user jid. */
export function jidOf(to: PhoneNumber | NetworkGroupId): string {
  return to.includes('@') ? to : userJid(to);
}
