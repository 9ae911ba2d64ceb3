/**
 * The seam's outgoing content → Baileys message content. Pure.
 *
 * Owns: the mapping of every type; `list` and `template` go as their text
 * form (interactive.ts: DECISIONS 10, WhatsApp no longer renders them from a
 * linked device).
 * Must never: send an interactive shape here (it is accepted and then
 * silently never shown); the experimental native form is sent elsewhere.
 */
import type { AnyMessageContent } from 'baileys';
import type { NetworkMessageContent } from '../network.js';
import { interactiveAsText } from './interactive.js';

export function outgoingContent(content: NetworkMessageContent): AnyMessageContent {
  switch (content.type) {
    case 'chat':
      return { text: content.text };
    case 'image':
      return {
        image: Buffer.from(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
      };
    case 'video':
      return {
        video: Buffer.from(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
      };
    case 'audio':
      return { audio: Buffer.from(content.media), mimetype: content.mimetype };
    case 'file':
      return {
        document: Buffer.from(content.media),
        mimetype: content.mimetype,
        fileName: content.fileName,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
      };
    case 'location':
      return {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          ...(content.name === undefined ? {} : { name: content.name }),
          ...(content.address === undefined ? {} : { address: content.address }),
        },
      };
    case 'list':
    case 'template':
      return { text: interactiveAsText(content) };
  }
}
