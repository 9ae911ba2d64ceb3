// Owns finding the message a reply quotes (docs/internals.md, Whatspie compatibility, `params.quotedMessageId`): the id may be the
// gateway's id of a message the device sent or received, or the network's id of one it received. The
// answer is what the network needs to show the reply (src/network/network.ts QuotedMessage), stored
// with the reply when it is accepted. Choice: an id the device does not know is refused (400 naming
// the field), never sent without its quote, since a client that asked for a reply must not believe
// it got one; a message of ours that failed never reached anyone, so it cannot be answered either.
// It must never find a message of another device or account, and never write.
import { ApiError } from '../errors.js';
import type { QuotedMessage } from '../network/network.js';
import type { Db } from '../store/schema.js';
import { messagesRepository, type MessageRow } from './repository.js';
import { incomingIdsRepository } from './incoming-ids-repository.js';

export const UNKNOWN_QUOTE = 'is not a message this device sent or received';
export const FAILED_QUOTE = 'is a message that failed to send: it cannot be replied to';

function groupOf(row: MessageRow): string | undefined {
  try {
    const params = JSON.parse(row.params) as { group_id?: unknown };
    return typeof params.group_id === 'string' ? params.group_id : undefined;
  } catch {
    return undefined;
  }
}

const textOf = (row: MessageRow) => (row.message === null || row.message === '' ? {} : { text: row.message });

function incoming(row: MessageRow, networkId: string): QuotedMessage {
  const sender = row.sender ?? row.device_phone;
  return { id: networkId, fromMe: false, chat: groupOf(row) ?? sender, author: sender, ...textOf(row) };
}

const refused = (message: string) =>
  new ApiError('VALIDATION_FAILED', { errors: { 'params.quotedMessageId': [message] } });

/** The quoted message for a reply sent by `deviceId`; a 400 naming `params.quotedMessageId` when there is none. */
export async function resolveQuote(db: Db, accountId: number, deviceId: number, id: string): Promise<QuotedMessage> {
  const own = await messagesRepository.find(db, accountId, id);
  if (own !== undefined && own.device_id === deviceId) {
    if (own.direction === 'outgoing') {
      if (own.status === 'failed') throw refused(FAILED_QUOTE);
      return { id: own.id, fromMe: true, chat: own.receiver, ...textOf(own) };
    }
    const networkId = await incomingIdsRepository.incomingNetworkId(db, deviceId, own.id);
    if (networkId !== undefined) return incoming(own, networkId);
  }
  const received = await incomingIdsRepository.findIncomingByNetworkId(db, deviceId, id);
  if (received !== undefined && received.account_id === accountId) return incoming(received, id);
  throw refused(UNKNOWN_QUOTE);
}
