/**
 * The message a reply quotes, as Baileys needs it. Pure.
 *
 * Owns: turning the seam's QuotedMessage into the `quoted` message Baileys
 * builds a reply's context from: the key (the chat, who wrote it, the network
 * id: ours encoded as every send encodes it, theirs as received) and the
 * content the reply shows (the message as sent when the sent record still has
 * it, else its text). A chat or author stored as a LID form (`12345@lid`) stays
 * that LID (lid.ts).
 * Must never: invent a network id for a message of ours that cannot be carried.
 */
import { isJidGroup, proto, type WAMessage } from 'baileys';
import type { NetworkGroupId, PhoneNumber, QuotedMessage } from '../network.js';
import { toNetworkId } from './ids.js';
import { addressJid } from './lid.js';
import { userJid } from './numbers.js';

export const chatJid = (to: PhoneNumber | NetworkGroupId): string => (to.includes('@') ? to : userJid(to));

/** The network id under which the quoted message is known on WhatsApp. */
export function quotedNetworkId(quoted: QuotedMessage): string {
  return quoted.fromMe ? (toNetworkId(quoted.id) ?? quoted.id) : quoted.id;
}

/** `sent`: the quoted message's own content, from the sent records, when it is ours and still kept. */
export function quotedMessage(quoted: QuotedMessage, sent: proto.IMessage | undefined): WAMessage {
  const remoteJid = chatJid(quoted.chat);
  // A sender stored under its LID (no number known then) is quoted under it, as the network addressed it.
  const author = quoted.fromMe || quoted.author === undefined ? undefined : addressJid(quoted.author);
  return {
    key: {
      remoteJid,
      fromMe: quoted.fromMe,
      id: quotedNetworkId(quoted),
      // In a group the author is the participant; in a chat with one person it is the chat itself.
      ...(author !== undefined && isJidGroup(remoteJid) === true ? { participant: author } : {}),
    },
    message: sent ?? proto.Message.create({ conversation: quoted.text ?? '' }),
  };
}
