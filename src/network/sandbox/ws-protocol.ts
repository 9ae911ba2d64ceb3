/**
 * The wire protocol between a sandbox running as its own process and its
 * clients: one WebSocket per client carries every device connection of that
 * client (by connection id) and every control call (by request id).
 *
 * Owns: the frame shapes and the (de)serialisation of events, messages and
 * errors (dates as ISO strings, errors re-created with their own class).
 * Media never travels in one frame: a `sendMessage` call whose content has
 * media names only its size (`media: {size}`), and the bytes follow as
 * `chunk` frames of at most WIRE_CHUNK_BYTES (base64) under the call's `rid`,
 * closed by `end` (or `abort` when the sender could not read them); the
 * server answers the call after `end`, or earlier to refuse it. The sender
 * writes a chunk only once the one before has left its socket, so a slow
 * reader holds the sender back instead of filling its memory.
 * Must never: carry behaviour; both ends stay thin.
 */
import type { MediaSource, NetworkEvent, OutgoingNetworkMessage } from '../network.js';
import {
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSendError,
  NetworkSettingRefusedError,
  NetworkUnavailableError,
  type GroupSettingName,
} from '../network.js';
import { SandboxControlError } from '../sandbox-control.js';

/** Largest frame a client takes: answers and events (a device's groups with all their participants), never media. */
export const MAX_FRAME_BYTES = 128 * 1024 * 1024;

/** Raw bytes of media per `chunk` frame (a third more once in base64). */
export const WIRE_CHUNK_BYTES = 256 * 1024;

/** Largest frame the server takes: calls (participant lists, number checks) and media chunks. */
export const MAX_CALL_FRAME_BYTES = 4 * 1024 * 1024;

/** Operations on one device connection, sent with its `cid`. */
export const CONNECTION_OPS = [
  'sendMessage',
  'sendTyping',
  'sendPresence',
  'listGroups',
  'getGroup',
  'createGroup',
  'addParticipants',
  'updateGroup',
  'changeParticipants',
  'groupInvite',
  'joinGroup',
  'leaveGroup',
  'modifyChat',
  'rejectCall',
  'checkNumbers',
  'listContacts',
  'getContact',
  'setBlocked',
  'listBlocked',
  'getProfile',
  'updateProfile',
  'setGroupPicture',
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
  'changeFromPhone',
  'callFromPhone',
  'changeChatOnPhone',
  'seedHistory',
  'readMessage',
  'createGroup',
  'changeGroupFromPhone',
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
  | { readonly t: 'control'; readonly rid: number; readonly op: ControlOp; readonly args: unknown[] }
  /** Part of the media of the `sendMessage` call `rid`, in order. */
  | { readonly t: 'chunk'; readonly rid: number; readonly data: string }
  /** All of the media of call `rid` was sent. */
  | { readonly t: 'end'; readonly rid: number }
  /** The media of call `rid` could not be read: the call is dropped, unanswered. */
  | { readonly t: 'abort'; readonly rid: number };

export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly status?: number;
  readonly detail?: string;
  readonly kind?: string;
  /** NetworkSettingRefusedError: the refused setting and those applied before it. */
  readonly setting?: string;
  readonly applied?: readonly string[];
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
  if (err instanceof NetworkSettingRefusedError) {
    return { name: err.name, message: err.message, setting: err.setting, applied: err.applied };
  }
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
    case 'NetworkSettingRefusedError':
      return new NetworkSettingRefusedError(
        wire.setting as GroupSettingName,
        (wire.applied ?? []) as GroupSettingName[],
        wire.message,
      );
    default:
      return new Error(wire.message);
  }
}

/** JSON turns the events' Dates into ISO strings; this turns them back. */
export function decodeEvent(wire: unknown): NetworkEvent {
  const event = wire as NetworkEvent;
  if (
    event.type === 'message_status' ||
    event.type === 'incoming_message' ||
    event.type === 'message_changed' ||
    event.type === 'poll_vote'
  ) {
    return { ...event, at: new Date(event.at as unknown as string) };
  }
  if (event.type === 'chat_changed' && typeof event.change.mutedUntil === 'string') {
    return { ...event, change: { ...event.change, mutedUntil: new Date(event.change.mutedUntil) } };
  }
  // The sandbox process counts a batch taken once it is on the wire (ws-server.ts).
  if (event.type === 'history_messages') {
    const messages = event.messages.map((m) => ({ ...m, at: new Date(m.at as unknown as string) }));
    return { type: 'history_messages', messages, taken: () => undefined };
  }
  return event;
}

/** The message as a `sendMessage` call carries it, and its media source (whose bytes follow in chunk frames). */
export function encodeMessage(message: OutgoingNetworkMessage): { wire: unknown; media: MediaSource | null } {
  const { content } = message;
  if (!('media' in content)) return { wire: message, media: null };
  return { wire: { ...message, content: { ...content, media: { size: content.media.size } } }, media: content.media };
}

/** Whether a wire message has media (declared well or not). */
export function carriesMedia(wire: unknown): boolean {
  const content = (wire as { content?: unknown } | null)?.content;
  return typeof content === 'object' && content !== null && 'media' in content;
}

/** The size a wire message declares for the media following it, or null when it has none. */
export function declaredMediaSize(wire: unknown): number | null {
  const media = (wire as { content?: { media?: { size?: unknown } } } | null)?.content?.media;
  const size = media?.size;
  return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : null;
}

/** `disconnected` and `logged_out` end a connection on both sides of the wire. */
export function isFinalEvent(event: NetworkEvent): boolean {
  return event.type === 'disconnected' || event.type === 'logged_out';
}
