/**
 * The stored form of an incoming message's content (docs/webhooks.md, Incoming messages): its `type`, its text (a
 * chat's text, a caption, a poll's question) and its `params`, and the reply and mentions it carries.
 *
 * Owns: the params of each incoming kind (the same names an outgoing message of that kind uses where it has one:
 * `location.degreesLatitude`, `fileName`, `contacts`, `name`/`options`/`selectable_count`), and finding OUR id of
 * the message a reply quotes: an outgoing message of this device sent under that id, or an incoming one stored
 * under the quoted network id; `null` when the gateway does not have it.
 * Must never: look outside the receiving device's own messages, or write.
 */
import type { Transaction } from 'kysely';
import { incomingIdsRepository } from '../messages/incoming-ids-repository.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import type { IncomingContent, IncomingQuote } from '../network/network.js';
import type { Database } from '../store/schema.js';

type Fields = Pick<MessageRow, 'type' | 'message' | 'params'>;

const fields = (type: string, message: string | null, params: object): Fields => ({
  type,
  message,
  params: JSON.stringify(params),
});

/** The stored form of incoming content: the message's type, its text (or caption) and params. */
export function incomingFields(content: IncomingContent): Fields {
  switch (content.type) {
    case 'chat':
      return fields('chat', content.text, { text: content.text });
    case 'image':
    case 'video':
    case 'file':
    case 'sticker': {
      const { type, caption, mimetype, fileName } = content;
      const params = {
        mimetype,
        ...(caption === undefined ? {} : { caption }),
        ...(fileName === undefined ? {} : { fileName }),
      };
      return fields(type, caption ?? null, params);
    }
    case 'audio':
      return fields('audio', null, { mimetype: content.mimetype, ...(content.ptt === true ? { ptt: true } : {}) });
    case 'location': {
      // The same shape as an outgoing location's params.
      const { latitude, longitude, name, address } = content;
      const location = {
        degreesLatitude: latitude,
        degreesLongitude: longitude,
        ...(name === undefined ? {} : { name }),
        ...(address === undefined ? {} : { address }),
      };
      return fields('location', null, { location });
    }
    case 'contact':
      return fields('contact', null, {
        contacts: content.contacts.map(({ name, phones }) => ({ name, phones: [...phones] })),
      });
    case 'poll':
      return fields('poll', content.name, {
        name: content.name,
        options: [...content.options],
        selectable_count: content.selectableCount,
      });
    case 'list_reply':
      return fields('list_reply', content.title, { rowId: content.rowId, title: content.title });
    case 'button_reply':
      return fields('button_reply', content.displayText, { id: content.id, displayText: content.displayText });
    case 'unsupported':
      // Kept with the network's own type name, so a receiver sees something came and what it was.
      return fields('unsupported', null, { network_type: content.networkType });
  }
}

/** OUR id of the quoted message when this device has it (sent it, or received it), else null. */
export async function quotedMessageId(
  trx: Transaction<Database>,
  device: { readonly id: number; readonly account_id: number },
  quoted: IncomingQuote,
): Promise<string | null> {
  if (quoted.sentId !== undefined) {
    const own = await messagesRepository.find(trx, device.account_id, quoted.sentId);
    if (own !== undefined && own.device_id === device.id && own.direction === 'outgoing') return own.id;
  }
  const received = await incomingIdsRepository.findIncomingByNetworkId(trx, device.id, quoted.networkId);
  return received?.id ?? null;
}

/** The reply and mentions among the params, as `quoted: {message_id, network_id}` and `mentions: [...]`. */
export async function replyParams(
  trx: Transaction<Database>,
  device: { readonly id: number; readonly account_id: number },
  event: { readonly quoted?: IncomingQuote; readonly mentions?: ReadonlyArray<string> },
): Promise<Record<string, unknown>> {
  const { quoted, mentions } = event;
  return {
    ...(quoted === undefined
      ? {}
      : { quoted: { message_id: await quotedMessageId(trx, device, quoted), network_id: quoted.networkId } }),
    ...(mentions === undefined || mentions.length === 0 ? {} : { mentions: [...mentions] }),
  };
}
