/**
 * Changes to messages that WhatsApp phones make → the seam's `message_changed` (issue 26; docs/whatsapp.md,
 * Reactions, edits and deletes). Pure.
 *
 * Owns: reading a reaction (`reactionMessage`: its key names the message, its text is the emoji, "" taken away),
 * an edit (`protocolMessage` of type MESSAGE_EDIT: its key and the edited content's text or caption) and a delete
 * for everyone (`protocolMessage` of type REVOKE: its key) out of an upserted message, and naming the message they
 * concern as the seam does: one of ours by our id (ids.ts), another by WhatsApp's id.
 * They are read from `messages.upsert` only, in the order of the messages around them (receiving.ts passes them
 * through the same chain): the library also reports them as `messages.reaction` and `messages.update`, which the
 * connection does not take for them, so each change arrives once.
 * A reaction's key is already in this device's terms when the upsert is handed over (the library turns it around
 * before), a protocol message's is in its sender's: `fromMe` there means the sender wrote it.
 * Must never: take a change this device's own phone made (those are the device's, not a phone's), or claim a
 * message is ours when its id is not one of ours.
 */
import {
  areJidsSameUser,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  normalizeMessageContent,
  proto,
  type WAMessage,
} from 'baileys';
import type { ChangedMessage, MessageChange, NetworkEvent } from '../network.js';
import { fromNetworkId } from './ids.js';
import { senderInChat } from './lid.js';

export type Changed = Extract<NetworkEvent, { type: 'message_changed' }>;

/** A change that is left out: it names a message of ours the gateway did not send, or an edit without text. */
export type SkippedChange = 'not the gateway’s message' | 'no text';

const PROTOCOL = proto.Message.ProtocolMessage.Type;

function timestampMs(message: WAMessage): number {
  const t = message.messageTimestamp;
  const seconds = typeof t === 'number' ? t : t === null || t === undefined ? NaN : Number(t.toString());
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now();
}

/** The text of edited content: a chat's text or a media message's caption; null when it has none. */
function editedText(content: proto.IMessage | null | undefined): string | null {
  const inner = normalizeMessageContent(content);
  if (inner === undefined || inner === null) return null;
  const text =
    inner.conversation ??
    inner.extendedTextMessage?.text ??
    inner.imageMessage?.caption ??
    inner.videoMessage?.caption ??
    inner.documentMessage?.caption;
  return typeof text === 'string' && text !== '' ? text : null;
}

/**
 * The message a change names, as the seam names it. `ours`: whether this device wrote it, in this device's terms.
 * A message of ours whose id is not one the gateway gave (written on the phone itself) is not the gateway's: null.
 */
function target(id: string | null | undefined, ours: boolean): ChangedMessage | null {
  if (typeof id !== 'string' || id === '') return null;
  if (!ours) return { id, fromMe: false };
  const own = fromNetworkId(id);
  return own === null ? null : { id: own, fromMe: true };
}

type Found = { readonly target: ChangedMessage; readonly change: MessageChange };

/** What a message changes and which message; null when it changes none (it is a message, or bookkeeping). */
function changeIn(message: WAMessage, me: ReadonlyArray<string>): Found | SkippedChange | null {
  const content = normalizeMessageContent(message.message);
  if (content === undefined || content === null) return null;
  const reaction = content.reactionMessage;
  if (reaction !== null && reaction !== undefined) {
    const named = target(reaction.key?.id, reaction.key?.fromMe === true);
    if (named === null) return 'not the gateway’s message';
    return { target: named, change: { kind: 'reaction', emoji: reaction.text ?? '' } };
  }
  const protocol = content.protocolMessage;
  if (protocol === null || protocol === undefined) return null;
  const key = protocol.key;
  if (protocol.type === PROTOCOL.REVOKE) {
    // In the sender's terms: theirs when `fromMe`; else, in a group, whoever `participant` names (a deleting admin).
    const author = key?.fromMe === true ? null : (key?.participant ?? null);
    const ours = author !== null && me.some((jid) => areJidsSameUser(author, jid));
    const named = target(key?.id, ours);
    return named === null ? 'not the gateway’s message' : { target: named, change: { kind: 'deleted' } };
  }
  if (protocol.type === PROTOCOL.MESSAGE_EDIT) {
    // Only a message's author edits it: never one of ours.
    const named = target(key?.id, false);
    if (named === null) return 'not the gateway’s message';
    const text = editedText(protocol.editedMessage);
    return text === null ? 'no text' : { target: named, change: { kind: 'edited', text } };
  }
  return null;
}

/**
 * The seam's `message_changed` for an upserted message; why it was left out when it is a change that names nothing
 * the gateway has; null when it is no change another phone made (then it is read as a message, or left out, as
 * before). `me`: this device's own JIDs (its number's and its LID's).
 */
export function translateChange(message: WAMessage, me: ReadonlyArray<string>): Changed | SkippedChange | null {
  const key = message.key;
  const chat = key?.remoteJid ?? undefined;
  if (key === null || key === undefined || key.fromMe === true || chat === undefined) return null;
  if (isJidStatusBroadcast(chat) || isJidNewsletter(chat)) return null;
  const found = changeIn(message, me);
  if (found === null || typeof found === 'string') return found;
  const group = isJidGroup(chat) ? chat : undefined;
  const sender = senderInChat(chat, key);
  if (sender === null) return null;
  return {
    type: 'message_changed',
    target: found.target,
    ...sender,
    ...(group === undefined ? {} : { group }),
    change: found.change,
    at: new Date(timestampMs(message)),
  };
}
