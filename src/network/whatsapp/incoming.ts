/**
 * Incoming WhatsApp messages → the seam's incoming content. Pure.
 *
 * Owns: which upserts are messages for the gateway (not our own, not status
 * broadcasts or newsletters, not a decryption placeholder: a stub with the
 * same id would make the gateway's dedupe swallow the real message when it
 * comes), unwrapping (ephemeral, view once, document with caption), and the
 * content table (contact cards: incoming-contacts.ts; replies and mentions:
 * incoming-context.ts).
 * Must never: emit a message without content, or drop one whose sender is
 * known by LID alone (it goes on under the LID: lid.ts).
 */
import {
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  normalizeMessageContent,
  type proto,
  type WAMessage,
} from 'baileys';
import type { IncomingContent, NetworkEvent } from '../network.js';
import { contactCards } from './incoming-contacts.js';
import { contextOf } from './incoming-context.js';
import { incomingMediaOf, mediaMessageKey } from './media-download.js';
import { senderInChat } from './lid.js';
import { unsupportedContent } from './unsupported.js';

type Incoming = Extract<NetworkEvent, { type: 'incoming_message' }>;

/** Options of a poll passed on at most (WhatsApp allows 12). */
const MAX_POLL_OPTIONS = 64;

/** Why an upsert was not passed on; `null` when it was. */
export type Skipped = 'own' | 'broadcast' | 'placeholder' | 'no content' | 'unresolved sender';

function timestampMs(message: WAMessage): number {
  const t = message.messageTimestamp;
  const seconds = typeof t === 'number' ? t : t === null || t === undefined ? NaN : Number(t.toString());
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now();
}

/** A text field's value when the sender gave a non-empty one. */
function given(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A poll as the seam shows it; WhatsApp's 0 for how many may be picked means any number of the options. */
function pollContent(poll: proto.Message.IPollCreationMessage): IncomingContent {
  const options = (poll.options ?? []).slice(0, MAX_POLL_OPTIONS).map((option) => option?.optionName ?? '');
  const count = poll.selectableOptionsCount ?? 0;
  const selectableCount = count >= 1 && count <= options.length ? count : Math.max(options.length, 1);
  return { type: 'poll', name: poll.name ?? '', options, selectableCount };
}

export function incomingContent(message: WAMessage): IncomingContent | null {
  const content = normalizeMessageContent(message.message);
  if (content === undefined || content === null) return null;
  // Kept with the media: the sender's phone finds the message by it when asked to upload the media again.
  const key = mediaMessageKey(message.key);
  const text = content.conversation ?? content.extendedTextMessage?.text;
  if (typeof text === 'string' && text !== '') return { type: 'chat', text };
  const audio = content.audioMessage;
  if (audio !== null && audio !== undefined) {
    const media = incomingMediaOf('audio', audio, key);
    return {
      type: 'audio',
      mimetype: audio.mimetype ?? 'application/octet-stream',
      ...(audio.ptt === true ? { ptt: true } : {}),
      ...(media === undefined ? {} : { media }),
    };
  }
  const media = [
    ['image', content.imageMessage],
    ['video', content.videoMessage],
    ['file', content.documentMessage],
    ['sticker', content.stickerMessage],
  ] as const;
  for (const [type, item] of media) {
    if (item === null || item === undefined) continue;
    const caption = 'caption' in item ? given(item.caption) : undefined;
    const fileName = 'fileName' in item ? given(item.fileName) : undefined;
    const media = incomingMediaOf(type, item, key);
    return {
      type,
      mimetype: item.mimetype ?? 'application/octet-stream',
      ...(caption === undefined ? {} : { caption }),
      ...(fileName === undefined ? {} : { fileName }),
      ...(media === undefined ? {} : { media }),
    };
  }
  const location = content.locationMessage ?? content.liveLocationMessage;
  if (location !== null && location !== undefined) {
    const name = 'name' in location ? given(location.name) : undefined;
    const address = 'address' in location ? given(location.address) : undefined;
    return {
      type: 'location',
      latitude: location.degreesLatitude ?? 0,
      longitude: location.degreesLongitude ?? 0,
      ...(name === undefined ? {} : { name }),
      ...(address === undefined ? {} : { address }),
    };
  }
  if (content.contactMessage !== null && content.contactMessage !== undefined) {
    return { type: 'contact', contacts: contactCards([content.contactMessage]) };
  }
  if (content.contactsArrayMessage !== null && content.contactsArrayMessage !== undefined) {
    return { type: 'contact', contacts: contactCards(content.contactsArrayMessage.contacts ?? []) };
  }
  const poll = content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3;
  if (poll !== null && poll !== undefined) return pollContent(poll);
  const row = content.listResponseMessage?.singleSelectReply?.selectedRowId;
  if (typeof row === 'string')
    return { type: 'list_reply', rowId: row, title: content.listResponseMessage?.title ?? '' };
  const buttons = content.buttonsResponseMessage;
  if (typeof buttons?.selectedButtonId === 'string') {
    return { type: 'button_reply', id: buttons.selectedButtonId, displayText: buttons.selectedDisplayText ?? '' };
  }
  const template = content.templateButtonReplyMessage;
  if (typeof template?.selectedId === 'string') {
    return { type: 'button_reply', id: template.selectedId, displayText: template.selectedDisplayText ?? '' };
  }
  return nativeFlowReply(content.interactiveResponseMessage) ?? unsupportedContent(content);
}

/**
 * A reply to the experimental native form: the chosen id travels in the response's JSON parameters.
 * A pick from a `single_select` (a list) is a list reply, any other a button reply. Not yet seen from
 * real phones (docs/whatsapp-checklist.md).
 */
function nativeFlowReply(
  response: proto.Message.IInteractiveResponseMessage | null | undefined,
): IncomingContent | null {
  const flow = response?.nativeFlowResponseMessage;
  if (typeof flow?.paramsJson !== 'string') return null;
  let params: { id?: unknown; title?: unknown };
  try {
    params = JSON.parse(flow.paramsJson) as { id?: unknown; title?: unknown };
  } catch {
    return null;
  }
  if (params === null || typeof params !== 'object' || typeof params.id !== 'string') return null;
  const shown = typeof params.title === 'string' ? params.title : (response?.body?.text ?? '');
  return flow.name === 'single_select'
    ? { type: 'list_reply', rowId: params.id, title: shown }
    : { type: 'button_reply', id: params.id, displayText: shown };
}

/** The seam's incoming event for an upserted message, or why it is not one. */
export function translateIncoming(message: WAMessage): Incoming | Skipped {
  const key = message.key;
  const chat = key?.remoteJid ?? undefined;
  if (key === null || key === undefined || typeof key.id !== 'string') return 'no content';
  if (key.fromMe === true) return 'own';
  // Status updates and channels are not messages to the device; a broadcast list's message is (sent by its owner).
  if (chat === undefined || isJidStatusBroadcast(chat) || isJidNewsletter(chat)) return 'broadcast';
  if (message.message === null || message.message === undefined) return 'placeholder';
  const content = incomingContent(message);
  if (content === null) return 'no content';
  const context = contextOf(normalizeMessageContent(message.message) ?? {});
  const group = isJidGroup(chat) ? chat : undefined;
  const sender = senderInChat(chat, key);
  if (sender === null) return 'unresolved sender';
  return {
    type: 'incoming_message',
    id: key.id,
    ...sender,
    ...(group === undefined ? {} : { group }),
    content,
    ...context,
    at: new Date(timestampMs(message)),
  };
}
