/**
 * Incoming WhatsApp content the gateway has no shape for yet (poll votes,
 * group invitations, events, and any kind WhatsApp adds later; reactions,
 * edits and deletes are read as changes first: message-changes.ts) → the seam's `unsupported` content, named by
 * WhatsApp's own type (docs/whatsapp.md, Incoming kinds). Pure.
 *
 * Owns: telling a message a person sent apart from the network's own
 * bookkeeping (key shares, history-sync notices, disappearing-message
 * settings), which is not a message and is left out.
 * Must never: name anything of the content itself (text, media keys) in
 * what it returns: only the type.
 */
import { proto } from 'baileys';
import type { IncomingContent } from '../network.js';

const PROTOCOL = proto.Message.ProtocolMessage.Type;

/** Protocol messages a person caused (a delete, an edit): shown as unsupported when message-changes.ts cannot read them. */
const PERSON_PROTOCOL = new Set<number>([PROTOCOL.REVOKE, PROTOCOL.MESSAGE_EDIT]);

/** Fields that travel beside the content and are never the message itself. */
const BESIDE = new Set(['messageContextInfo', 'senderKeyDistributionMessage']);

/** Unsupported content named by WhatsApp's type, or null when the message is bookkeeping (or empty). */
export function unsupportedContent(content: proto.IMessage): IncomingContent | null {
  const protocol = content.protocolMessage;
  if (protocol !== null && protocol !== undefined) {
    const type = protocol.type ?? PROTOCOL.REVOKE;
    if (!PERSON_PROTOCOL.has(type)) return null;
    return { type: 'unsupported', networkType: `protocolMessage.${PROTOCOL[type] ?? String(type)}` };
  }
  // Own, set fields only: a decoded protobuf carries defaults on its prototype.
  const name = Object.keys(content).find(
    (key) =>
      !BESIDE.has(key) &&
      (key === 'conversation' || key.includes('Message')) &&
      (content as Record<string, unknown>)[key] !== null &&
      (content as Record<string, unknown>)[key] !== undefined,
  );
  return name === undefined ? null : { type: 'unsupported', networkType: name };
}
