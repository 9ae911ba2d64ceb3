/**
 * What a stored message becomes on the network (docs/internals.md, Sending): its content, with its media bytes,
 * and what goes with it (mentions, the message it quotes). The dispatcher calls it for each send.
 *
 * Owns: reading a stored message's `type`, `params` and `quoted` back into the network seam's shapes.
 * Must never: validate (the params were validated at acceptance), do I/O, or read anything but the row
 * and its media.
 */
import type { NetworkMessageContent, OutgoingNetworkMessage, QuotedMessage } from '../network/network.js';
import type { MessageRow } from './repository.js';
import type { StoredMedia } from './stored-media.js';

/** The network content of a stored message, with its media bytes when it has some. */
export function networkContent(row: MessageRow, media: StoredMedia | undefined): NetworkMessageContent {
  // Stored params were validated at acceptance; their shape per type is the validator's.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const params = JSON.parse(row.params) as Record<string, any>;
  switch (row.type) {
    case 'chat':
      return { type: 'chat', text: String(params.text) };
    case 'image':
      return {
        type: 'image',
        media: media!.source,
        mimetype: media!.mimetype,
        caption: params.caption,
        viewOnce: params.viewOnce,
      };
    case 'video':
      return {
        type: 'video',
        media: media!.source,
        mimetype: media!.mimetype,
        caption: params.caption,
        viewOnce: params.viewOnce,
      };
    case 'audio':
      return {
        type: 'audio',
        media: media!.source,
        mimetype: media!.mimetype,
        ...(params.ptt === true ? { ptt: true } : {}),
      };
    case 'file':
      return {
        type: 'file',
        media: media!.source,
        mimetype: media!.mimetype,
        fileName: params.fileName,
        caption: params.caption,
      };
    case 'location':
      return {
        type: 'location',
        latitude: params.location.degreesLatitude,
        longitude: params.location.degreesLongitude,
        name: params.location.name,
        address: params.location.address,
      };
    case 'list':
      return {
        type: 'list',
        title: params.title,
        text: params.text,
        footer: params.footer,
        buttonText: params.buttonText,
        sections: params.sections,
      };
    case 'template':
      return { type: 'template', text: params.text, footer: params.footer, buttons: params.templateButtons };
    case 'sticker':
      return { type: 'sticker', media: media!.source, mimetype: media!.mimetype };
    case 'contact':
      return { type: 'contact', contacts: params.contacts };
    case 'poll':
      return { type: 'poll', name: params.name, options: params.options, selectableCount: params.selectable_count };
    case 'reaction':
      // Its target was resolved and stored at acceptance, in the place a reply's quote is.
      return { type: 'reaction', emoji: String(params.emoji), target: JSON.parse(row.quoted!) as QuotedMessage };
    // Message actions (actions.ts): their target stored in the same place, a read's targets in its params.
    case 'edit':
      return { type: 'edit', text: String(params.text), target: JSON.parse(row.quoted!) as QuotedMessage };
    case 'delete':
      return { type: 'delete', target: JSON.parse(row.quoted!) as QuotedMessage };
    case 'read':
      return { type: 'read', targets: params.targets as QuotedMessage[] };
    default:
      throw new Error(`unknown message type ${row.type}`);
  }
}

/**
 * The text whose first link is previewed when the message is sent (`link_preview` not `false`), or null: chat
 * messages only.
 */
export function previewedText(row: MessageRow): string | null {
  if (row.type !== 'chat') return null;
  const params = JSON.parse(row.params) as { text?: unknown; link_preview?: unknown };
  return params.link_preview === false || typeof params.text !== 'string' ? null : params.text;
}

/** What goes with a stored message's content to the network: its mentions, the message it quotes, a forward's mark. */
export function networkReplyContext(
  row: MessageRow,
): Pick<OutgoingNetworkMessage, 'mentions' | 'quoted' | 'forwarded'> {
  // An action's stored quote is its target (networkContent); it has no context of its own.
  if (row.direction === 'action') return {};
  const params = JSON.parse(row.params) as { mentions?: unknown; forwarded?: unknown };
  const mentions =
    Array.isArray(params.mentions) && params.mentions.length > 0 ? (params.mentions as string[]) : undefined;
  // A reaction's stored quote is its target (networkContent), not a message it replies to.
  const quoted = row.quoted === null || row.type === 'reaction' ? undefined : (JSON.parse(row.quoted) as QuotedMessage);
  return {
    ...(mentions === undefined ? {} : { mentions }),
    ...(quoted === undefined ? {} : { quoted }),
    ...(params.forwarded === true ? { forwarded: true } : {}),
  };
}
