/**
 * What a stand-in phone sends (docs/standin.md, a phone's messages): the message content built from the control
 * body: a text, media fetched from a URL (encrypted and stored on the media host; `ptt: true` makes audio a voice
 * note), a location (with its name and address), contact cards (vCards), a poll (versions 1 to 3), and the context a
 * message carries: the message it replies to (`reply_to: {id, participant?, text?}`) and the people it mentions
 * (`mentions: [number or JID]`).
 *
 * Owns: those shapes as WhatsApp's protobuf has them, and their input checks (a ControlError naming the field).
 * Must never: store anything before the body is known to be valid (the media host keeps only checked media).
 */
import type { proto } from 'baileys';
import { encryptBlob, type MediaKind } from './media.js';
import { ControlError } from './pairing.js';
import type { StandinHub } from './server.js';

type Body = Record<string, unknown>;

const MEDIA_KINDS: MediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];

const isText = (value: unknown): value is string => typeof value === 'string';

/** A number or a JID as a JID: digits become a phone-number JID. */
function jid(value: unknown, name: string): string {
  if (isText(value) && /^\d{5,20}$/.test(value)) return `${value}@s.whatsapp.net`;
  if (isText(value) && /^\d{1,32}(:\d+)?@(s\.whatsapp\.net|lid)$/.test(value)) return value;
  throw new ControlError(400, `${name} must be a phone number or a user JID`);
}

/** `contextInfo` for `reply_to` and `mentions`; null when the body has neither. */
function contextInfo(body: Body): proto.IContextInfo | null {
  const info: proto.IContextInfo = {};
  if (body.reply_to !== undefined) {
    const reply = body.reply_to as { id?: unknown; participant?: unknown; text?: unknown } | null;
    if (reply === null || typeof reply !== 'object' || !isText(reply.id) || reply.id === '')
      throw new ControlError(400, 'reply_to must be {id, participant?, text?}');
    info.stanzaId = reply.id;
    if (reply.participant !== undefined) info.participant = jid(reply.participant, 'reply_to.participant');
    info.quotedMessage = { conversation: isText(reply.text) ? reply.text : '' };
  }
  if (body.mentions !== undefined) {
    if (!Array.isArray(body.mentions)) throw new ControlError(400, 'mentions must list numbers or JIDs');
    info.mentionedJid = body.mentions.map((m) => jid(m, 'mentions[]'));
  }
  return Object.keys(info).length === 0 ? null : info;
}

function vcard(name: string, phone: string): string {
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${name}`, `TEL;type=CELL;waid=${phone}:+${phone}`, 'END:VCARD'].join('\n');
}

function contacts(value: unknown): proto.IMessage {
  if (!Array.isArray(value) || value.length === 0) throw new ControlError(400, 'contacts must list {name, phone}');
  const cards = value.map((c: { name?: unknown; phone?: unknown } | null) => {
    if (c === null || typeof c !== 'object' || !isText(c.name) || !isText(c.phone) || !/^\d{5,20}$/.test(c.phone))
      throw new ControlError(400, 'contacts[] must be {name, phone (digits)}');
    return { displayName: c.name, vcard: vcard(c.name, c.phone) };
  });
  return cards.length === 1
    ? { contactMessage: cards[0]! }
    : { contactsArrayMessage: { displayName: `${cards.length} contacts`, contacts: cards } };
}

function poll(value: unknown): proto.IMessage {
  const p = value as { name?: unknown; options?: unknown; selectable_count?: unknown; version?: unknown } | null;
  if (p === null || typeof p !== 'object' || !isText(p.name) || !Array.isArray(p.options) || !p.options.every(isText))
    throw new ControlError(400, 'poll must be {name, options: [texts], selectable_count?, version?}');
  const count = p.selectable_count === undefined ? 1 : p.selectable_count;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0)
    throw new ControlError(400, 'poll.selectable_count must be a whole number');
  const version = p.version ?? 3;
  const field = { 1: 'pollCreationMessage', 2: 'pollCreationMessageV2', 3: 'pollCreationMessageV3' }[String(version)];
  if (field === undefined) throw new ControlError(400, 'poll.version must be 1, 2 or 3');
  const options = (p.options as string[]).map((optionName) => ({ optionName }));
  return { [field]: { name: p.name, options, selectableOptionsCount: count } } as proto.IMessage;
}

function location(value: unknown): proto.IMessage {
  const l = value as { latitude?: unknown; longitude?: unknown; name?: unknown; address?: unknown } | null;
  if (l === null || typeof l !== 'object' || typeof l.latitude !== 'number' || typeof l.longitude !== 'number')
    throw new ControlError(400, 'location must be {latitude, longitude, name?, address?}');
  return {
    locationMessage: {
      degreesLatitude: l.latitude,
      degreesLongitude: l.longitude,
      ...(isText(l.name) ? { name: l.name } : {}),
      ...(isText(l.address) ? { address: l.address } : {}),
    },
  };
}

async function media(hub: StandinHub, body: Body, kind: MediaKind): Promise<proto.IMessage> {
  const spec = body[kind] as { url?: unknown; mimetype?: unknown; file_name?: unknown } | null;
  if (spec === null || typeof spec !== 'object' || !isText(spec.url))
    throw new ControlError(400, `${kind} must be {url, mimetype?, file_name?}`);
  const response = await fetch(spec.url).catch(() => undefined);
  if (response === undefined || !response.ok) throw new ControlError(400, `could not fetch ${spec.url}`);
  const plain = Buffer.from(await response.arrayBuffer());
  const mimetype = isText(spec.mimetype)
    ? spec.mimetype
    : (response.headers.get('content-type') ?? 'application/octet-stream');
  const { blob, mediaKey, fileSha256, fileEncSha256 } = await encryptBlob(plain, kind);
  const directPath = `/v/t62.7118-24/${fileEncSha256.toString('hex').slice(0, 24)}.enc`;
  hub.media.set(directPath, blob);
  const item = {
    url: `https://${hub.mediaHost}${directPath}`,
    directPath,
    mediaKey,
    fileSha256,
    fileEncSha256,
    fileLength: plain.length,
    mimetype,
    mediaKeyTimestamp: Math.floor(Date.now() / 1000),
    ...(isText(body.caption) && kind !== 'sticker' && kind !== 'audio' ? { caption: body.caption } : {}),
    ...(kind === 'document' ? { fileName: isText(spec.file_name) ? spec.file_name : 'file' } : {}),
    ...(kind === 'audio' && body.ptt === true ? { ptt: true } : {}),
  };
  return { [`${kind}Message`]: item } as proto.IMessage;
}

/** The content, without its context. */
async function content(hub: StandinHub, body: Body): Promise<proto.IMessage> {
  if (isText(body.text)) return { conversation: body.text };
  if (body.location !== undefined) return location(body.location);
  if (body.contacts !== undefined) return contacts(body.contacts);
  if (body.poll !== undefined) return poll(body.poll);
  const kind = MEDIA_KINDS.find((k) => body[k] !== undefined);
  if (kind === undefined)
    throw new ControlError(
      400,
      'give text, location, contacts, poll, or one of image, video, audio, document, sticker as {url}',
    );
  return media(hub, body, kind);
}

/** The message a phone sends for this control body. */
export async function buildPhoneMessage(hub: StandinHub, body: Body): Promise<proto.IMessage> {
  const info = contextInfo(body);
  const message = await content(hub, body);
  if (info === null) return message;
  // A text with context travels as an extended text; every other kind carries the context itself.
  if (message.conversation !== undefined && message.conversation !== null) {
    return { extendedTextMessage: { text: message.conversation, contextInfo: info } };
  }
  const [field, item] = Object.entries(message)[0]!;
  return { [field]: { ...(item as object), contextInfo: info } } as proto.IMessage;
}
