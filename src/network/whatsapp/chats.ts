/**
 * A device's chat settings on WhatsApp (DECISIONS 16): archive, pin and mute through Baileys' `chatModify`, which
 * writes app-state patches (synced to the phone and every linked device).
 *
 * Owns: one `chatModify` per setting, in the seam's order (archive, pin, mute), and what each needs: an archive
 * names the chat's last message (its key and time: WhatsApp places the archive at it; none when the gateway knows
 * none), a mute its end as milliseconds since the epoch (`muteEndTimestamp`; null unmutes).
 * Also the other way: settings changed on the phone or another linked device, as WhatsApp tells them. The library
 * turns the account's app-state sync into `chats.update` with `archived`, `pinned` (the pin's time, null when
 * unpinned) and `muteEndTime` (milliseconds since the epoch, -1 for "always", null when unmuted); they become the
 * seam's `chat_changed` (a chat named by a LID under its number when the library knows it; a mute "always" is
 * muted until the last millisecond of year 9999).
 * Must never: report a change as made that the library refused (its error passes on), touch the store, or tell a
 * change of a chat that is no person's or group's (status, broadcast lists, newsletters), of a LID whose number is
 * unknown, or of a field the update did not carry.
 */
import { isJidGroup, type BaileysEventMap, type ChatUpdate, type MinimalMessage } from 'baileys';
import type { ChatChange, ChatLastMessage, NetworkEvent, NetworkGroupId, PhoneNumber } from '../network.js';
import { lidOf, type LidLookup } from './lid.js';
import { phoneOf } from './numbers.js';
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

/** What "muted always" is shown as: the greatest time an ISO 8601 date with a four-digit year holds. */
export const MUTED_ALWAYS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Below this a mute's end is taken as seconds since the epoch (some clients write seconds): year 5138 in seconds. */
const SECONDS_BELOW = 100_000_000_000;

function muteEnd(value: unknown): Date | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const n = Number(value);
  if (!Number.isFinite(n)) return undefined;
  if (n < 0) return new Date(MUTED_ALWAYS);
  if (n === 0) return null;
  return new Date(Math.min(n < SECONDS_BELOW ? n * 1000 : n, MUTED_ALWAYS));
}

/** The settings one update carries, or null when it carries none of them. */
export function changeOf(update: Partial<ChatUpdate>): ChatChange | null {
  const mutedUntil = muteEnd(update.muteEndTime);
  const change: ChatChange = {
    ...(update.archived === undefined ? {} : { archived: update.archived === true }),
    ...(update.pinned === undefined ? {} : { pinned: update.pinned !== null && Number(update.pinned) > 0 }),
    ...(mutedUntil === undefined ? {} : { mutedUntil }),
  };
  return Object.keys(change).length === 0 ? null : change;
}

/** The chat an update names, as the seam names chats: a group's id, a person's number; else null. */
async function chatOf(jid: string | null | undefined, lids: LidLookup | null): Promise<string | null> {
  if (jid === null || jid === undefined) return null;
  if (isJidGroup(jid)) return jid;
  const lid = lidOf(jid);
  if (lid === null) return phoneOf(jid);
  const pn = await lids?.getPNForLID(jid).catch(() => null);
  return phoneOf(pn);
}

/** The `chat_changed` events of one `chats.update`, in its order. */
export async function chatChanges(
  updates: BaileysEventMap['chats.update'],
  lids: LidLookup | null,
): Promise<NetworkEvent[]> {
  const events: NetworkEvent[] = [];
  for (const update of updates) {
    const change = changeOf(update);
    if (change === null) continue;
    const chat = await chatOf(update.id, lids);
    if (chat !== null) events.push({ type: 'chat_changed', chat, change });
  }
  return events;
}

/** The handler of `chats.update` on one socket: its events told in order, one update after the other. */
export function chatUpdateHandlers(
  socket: { readonly signalRepository?: { readonly lidMapping: LidLookup } },
  emit: (event: NetworkEvent) => void,
): { 'chats.update': (updates: BaileysEventMap['chats.update']) => void } {
  let told = Promise.resolve();
  return {
    'chats.update': (updates) => {
      told = told
        .then(() => chatChanges(updates, socket.signalRepository?.lidMapping ?? null))
        .then((events) => events.forEach(emit))
        .catch(() => undefined);
    },
  };
}
