/**
 * A sandbox phone's message to a device, as the sandbox takes it (from the gateway in-process, or over its
 * WebSocket as plain JSON): a text, or any incoming kind with the message it replies to.
 *
 * Owns: checking that what arrived is a message the seam can carry (a known kind with its fields), and naming a
 * quoted message as this network does: a message a device sent is known on the network by the id the device sent
 * it with; a message a device received by the id the sandbox gave it.
 * Must never: pass on a shape the gateway could not store.
 */
import type { IncomingContent, IncomingQuote } from '../network.js';
import { SandboxControlError, type PhoneMessage } from '../sandbox-control.js';

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);

/** Whether `content` has the fields its kind needs (the shapes of IncomingContent). */
function wellFormed(content: unknown): content is IncomingContent {
  if (content === null || typeof content !== 'object') return false;
  const c = content as Record<string, unknown>;
  switch (c.type) {
    case 'chat':
      return isText(c.text) && c.text !== '';
    case 'image':
    case 'video':
    case 'file':
    case 'sticker':
    case 'audio':
      return isText(c.mimetype);
    case 'location':
      return typeof c.latitude === 'number' && typeof c.longitude === 'number';
    case 'contact':
      return (
        Array.isArray(c.contacts) &&
        c.contacts.every(
          (card: unknown) =>
            card !== null &&
            typeof card === 'object' &&
            isText((card as { name?: unknown }).name) &&
            isTextList((card as { phones?: unknown }).phones),
        )
      );
    case 'poll':
      return isText(c.name) && isTextList(c.options) && typeof c.selectableCount === 'number';
    default:
      return false;
  }
}

/** The message as the seam carries it; 400 when it is not one. */
export function phoneMessage(sent: string | PhoneMessage): PhoneMessage {
  if (typeof sent === 'string') {
    if (sent.length === 0) throw new SandboxControlError(400, 'Text is required');
    return { content: { type: 'chat', text: sent } };
  }
  if (sent === null || typeof sent !== 'object' || !wellFormed(sent.content)) {
    throw new SandboxControlError(400, 'Invalid message', 'the message is not one a phone can send');
  }
  const url = sent.mediaUrl;
  if (url !== undefined && (!isText(url) || !/^https?:\/\//.test(url) || !('mimetype' in sent.content))) {
    throw new SandboxControlError(400, 'Invalid message', 'mediaUrl must be an http(s) address, with media only');
  }
  const reply = sent.replyTo;
  if (reply !== undefined && (reply === null || !isText(reply.id) || typeof reply.fromMe !== 'boolean')) {
    throw new SandboxControlError(400, 'Invalid message', 'replyTo must be {id, fromMe}');
  }
  return sent;
}

/** The quoted message as the device hears it: the sandbox knows a device's own messages by the id it sent them with. */
export function quoteOf(replyTo: NonNullable<PhoneMessage['replyTo']>): IncomingQuote {
  return replyTo.fromMe ? { networkId: replyTo.id, sentId: replyTo.id } : { networkId: replyTo.id };
}
