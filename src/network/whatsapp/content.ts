/**
 * The seam's outgoing content → Baileys message content. Pure.
 *
 * Owns: the mapping of every type, and the text form of `list` and `template`
 * (DECISIONS 10: WhatsApp no longer renders them from a linked device, so
 * they go as formatted text: title in bold, the text, numbered rows, footer
 * in italics, and how to answer).
 * Must never: send an interactive shape by default (it is accepted and then
 * silently never shown).
 */
import type { AnyMessageContent } from 'baileys';
import type { NetworkMessageContent, TemplateButton } from '../network.js';

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
