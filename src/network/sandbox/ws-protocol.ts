/**
 * The wire protocol between a sandbox running as its own process and its
 * clients: one WebSocket per client carries every device connection of that
 * client (by connection id) and every control call (by request id).
 *
 * Owns: the frame shapes and the (de)serialisation of events, messages and
 * errors (dates as ISO strings, media bytes as base64, errors re-created with
 * their own class). Must never: carry behaviour; both ends stay thin.
 */
import type { NetworkEvent, OutgoingNetworkMessage } from '../network.js';
import { NetworkForbiddenError, NetworkNotFoundError, NetworkSendError, NetworkUnavailableError } from '../network.js';
import { SandboxControlError } from './control.js';

/** Media up to the gateway's own limits, base64-inflated, with headroom. */
export const MAX_FRAME_BYTES = 128 * 1024 * 1024;

/** Operations on one device connection, sent with its `cid`. */
export const CONNECTION_OPS = [
  'sendMessage',
  'sendTyping',
  'listGroups',
  'getGroup',
  'createGroup',
  'addParticipants',
  'updateGroup',
  'checkNumbers',
  'logout',
  'requestPairingCode',
] as const;
export type ConnectionOp = (typeof CONNECTION_OPS)[number];

/** Control API operations (SandboxControl), sent without `cid`. */
export const CONTROL_OPS = [
  'scan',
  'pair',
  'upsertPhone',
  'getPhone',
  'sendFromPhone',
  'readMessage',
  'createGroup',
  'disconnectDevice',
] as const;
export type ControlOp = (typeof CONTROL_OPS)[number];

export type ClientFrame =
  | { readonly t: 'connect'; readonly cid: number; readonly options: unknown }
  | { readonly t: 'close'; readonly cid: number }
  | {
      readonly t: 'call';
      readonly rid: number;
      readonly cid: number;
      readonly op: ConnectionOp;
      readonly args: unknown[];
    }
  | { readonly t: 'control'; readonly rid: number; readonly op: ControlOp; readonly args: unknown[] };

export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly status?: number;
  readonly detail?: string;
  readonly kind?: string;
}

export type ServerFrame =
  | { readonly t: 'event'; readonly cid: number; readonly event: unknown }
  | { readonly t: 'result'; readonly rid: number; readonly ok: true; readonly value: unknown }
  | { readonly t: 'result'; readonly rid: number; readonly ok: false; readonly error: WireError };

export function encodeError(err: unknown): WireError {
  if (err instanceof SandboxControlError) {
    return { name: err.name, message: err.message, status: err.status, detail: err.detail };
  }
  if (err instanceof NetworkSendError) return { name: err.name, message: err.message, kind: err.kind };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

export function decodeError(wire: WireError): Error {
  switch (wire.name) {
    case 'SandboxControlError':
      return new SandboxControlError(wire.status as 400 | 404 | 409, wire.message, wire.detail);
    case 'NetworkSendError':
      return new NetworkSendError(wire.message, wire.kind === 'transient' ? 'transient' : 'permanent');
    case 'NetworkForbiddenError':
      return new NetworkForbiddenError(wire.message);
    case 'NetworkNotFoundError':
      return new NetworkNotFoundError(wire.message);
    case 'NetworkUnavailableError':
      return new NetworkUnavailableError(wire.message);
    default:
      return new Error(wire.message);
  }
}

/** JSON turns the events' Dates into ISO strings; this turns them back. */
export function decodeEvent(wire: unknown): NetworkEvent {
  const event = wire as NetworkEvent;
  if (event.type === 'message_status' || event.type === 'incoming_message') {
    return { ...event, at: new Date(event.at as unknown as string) };
  }
  return event;
}

export function encodeMessage(message: OutgoingNetworkMessage): unknown {
  const { content } = message;
  if (!('media' in content)) return message;
  return { ...message, content: { ...content, media: Buffer.from(content.media).toString('base64') } };
}

export function decodeMessage(wire: unknown): OutgoingNetworkMessage {
  const message = wire as OutgoingNetworkMessage;
  const content = message.content as unknown as Record<string, unknown>;
  if (typeof content?.media !== 'string') return message;
  const media = new Uint8Array(Buffer.from(content.media, 'base64'));
  return { ...message, content: { ...content, media } as unknown as OutgoingNetworkMessage['content'] };
}

/** `disconnected` and `logged_out` end a connection on both sides of the wire. */
export function isFinalEvent(event: NetworkEvent): boolean {
  return event.type === 'disconnected' || event.type === 'logged_out';
}
