/**
 * A device's chat settings on WhatsApp (DECISIONS 16): archive, pin and mute through Baileys' `chatModify`, which
 * writes app-state patches (synced to the phone and every linked device).
 *
 * Owns: one `chatModify` per setting, in the seam's order (archive, pin, mute), and what each needs: an archive
 * names the chat's last message (its key and time: WhatsApp places the archive at it; none when the gateway knows
 * none), a mute its end as milliseconds since the epoch (`muteEndTimestamp`; null unmutes).
 * Must never: report a change as made that the library refused (its error passes on), or touch the store.
 */
import type { MinimalMessage } from 'baileys';
import type { ChatChange, ChatLastMessage, NetworkGroupId, PhoneNumber } from '../network.js';
import { chatJid, quotedMessage } from './quoted.js';
import type { SocketPort } from './socket-port.js';

export async function modifyChat(
  socket: Pick<SocketPort, 'chatModify'>,
  chat: PhoneNumber | NetworkGroupId,
  change: ChatChange,
  last: ChatLastMessage | null,
): Promise<void> {
  const jid = chatJid(chat);
  if (change.archived !== undefined) {
    await socket.chatModify({ archive: change.archived, lastMessages: lastMessages(chat, last) }, jid);
  }
  if (change.pinned !== undefined) await socket.chatModify({ pin: change.pinned }, jid);
  if (change.mutedUntil !== undefined) {
    await socket.chatModify({ mute: change.mutedUntil === null ? null : change.mutedUntil.getTime() }, jid);
  }
}

/** The chat's last message as `lastMessages` (newest first; here the one the gateway knows). */
function lastMessages(chat: PhoneNumber | NetworkGroupId, last: ChatLastMessage | null): MinimalMessage[] {
  if (last === null) return [];
  const { key } = quotedMessage(
    { id: last.id, fromMe: last.fromMe, chat, ...(last.author === undefined ? {} : { author: last.author }) },
    undefined,
  );
  return [{ key, messageTimestamp: Math.floor(last.at.getTime() / 1000) }];
}
