/**
 * The short history sync a phone sends a device it just linked: one INITIAL_BOOTSTRAP chunk, inline (deflated in
 * the notification itself), carrying the phone's push name and the LID/phone-number mappings it knows.
 *
 * Owns: building that HistorySync and sending it, from the phone to its own new device, once per link.
 * Must never: send history to a device of another account (the library drops it as spoofed, and so would
 * WhatsApp), or carry messages: the gateway keeps no history.
 */
import { deflateSync } from 'node:zlib';
import { proto } from 'baileys';
import { phoneSendsTo, messageId, type RoutingContext } from './routing.js';
import type { Companion } from './world.js';

/** How many other numbers' mappings one sync carries at most. */
const MAX_MAPPINGS = 500;

export async function sendInitialHistory(ctx: RoutingContext, companion: Companion): Promise<void> {
  const account = companion.account;
  const mappings: proto.IPhoneNumberToLIDMapping[] = [];
  for (const other of ctx.world.accounts.values()) {
    if (mappings.length >= MAX_MAPPINGS) break;
    mappings.push({ pnJid: `${other.phone}@s.whatsapp.net`, lidJid: `${other.lid}@lid` });
  }
  const history = proto.HistorySync.encode({
    syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    conversations: [],
    pushnames: [{ id: `${account.phone}@s.whatsapp.net`, pushname: `Phone ${account.phone}` }],
    phoneNumberToLidMappings: mappings,
    progress: 100,
    chunkOrder: 0,
  }).finish();
  await phoneSendsTo(
    ctx,
    account,
    { kind: 'companion', companion },
    messageId(),
    {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
        historySyncNotification: {
          syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
          chunkOrder: 0,
          progress: 100,
          initialHistBootstrapInlinePayload: deflateSync(history),
        },
      },
    },
    // From the account's own phone: the library only takes history from its own account.
    {
      from: account.primary.lidJid,
      sender_pn: account.primary.pnJid,
      addressing_mode: 'lid',
      category: 'peer',
      type: 'text',
    },
  );
}
