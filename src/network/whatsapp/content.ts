/**
 * The seam's outgoing content → Baileys message content. Pure but for media,
 * which becomes a stream that reads the seam's source only once Baileys pulls.
 *
 * Owns: the mapping of every type, and the text form of `list` and `template`
 * (DECISIONS 10: WhatsApp no longer renders them from a linked device, so
 * they go as formatted text: title in bold, the text, numbered rows, footer
 * in italics, and how to answer).
 * Must never: send an interactive shape by default (it is accepted and then
 * silently never shown).
 */
import { Readable } from 'node:stream';
import type { AnyMessageContent, WAMediaUpload } from 'baileys';
import type { MediaSource, NetworkMessageContent, TemplateButton } from '../network.js';

export const LIST_REPLY_HINT = 'Reply with a number to choose.';

function buttonLine(button: TemplateButton, n: number): string {
  if ('urlButton' in button) return `${button.urlButton.displayText}: ${button.urlButton.url}`;
  if ('callButton' in button) return `${button.callButton.displayText}: ${button.callButton.phoneNumber}`;
  return `${n}. ${button.quickReplyButton.displayText}`;
}

/** The text a `list` or `template` is delivered as on WhatsApp. */
export function interactiveAsText(content: Extract<NetworkMessageContent, { type: 'list' | 'template' }>): string {
  const lines: string[] = [];
  if (content.type === 'list') {
    if (content.title !== '') lines.push(`*${content.title}*`);
    lines.push(content.text);
    let n = 0;
    for (const section of content.sections) {
      lines.push('');
      if (section.title !== '') lines.push(`*${section.title}*`);
      for (const row of section.rows) {
        n += 1;
        lines.push(row.description ? `${n}. ${row.title} — ${row.description}` : `${n}. ${row.title}`);
      }
    }
    if (content.footer) lines.push('', `_${content.footer}_`);
    lines.push('', LIST_REPLY_HINT);
    return lines.join('\n');
  }
  lines.push(content.text, '');
  let quick = 0;
  for (const button of content.buttons) {
    if ('quickReplyButton' in button) quick += 1;
    lines.push(buttonLine(button, quick));
  }
  if (content.footer) lines.push('', `_${content.footer}_`);
  if (quick > 0) lines.push('', LIST_REPLY_HINT);
  return lines.join('\n');
}

/**
 * Media as Baileys takes a stream: it reads it once, encrypting to a temporary file as it goes, so
 * the file is never whole in memory. Nothing is read until Baileys starts; every send opens anew.
 * A byte stream (not object mode), so it buffers at most about one chunk ahead of the reader.
 */
function upload(media: MediaSource): WAMediaUpload {
  return { stream: Readable.from(media.open(), { objectMode: false }) };
}

export function outgoingContent(content: NetworkMessageContent): AnyMessageContent {
  switch (content.type) {
    case 'chat':
      return { text: content.text };
    case 'image':
      return {
        image: upload(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
      };
    case 'video':
      return {
        video: upload(content.media),
        mimetype: content.mimetype,
        ...(content.caption === undefined ? {} : { caption: content.caption }),
        ...(content.viewOnce === true ? { viewOnce: true } : {}),
      };
    case 'audio':
      return { audio: upload(content.media), mimetype: content.mimetype };
    case 'file':
      return {
        document: upload(content.media),
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
