/**
 * Messages in the sandbox: devices sending to phones and groups, phones
 * receiving, reading and writing back, and the receipts that follow.
 *
 * Owns: the send rules (idempotency by sender + id, the magic numbers),
 * inboxes and the `delivered`/`read`/`incoming_message` events. Must never:
 * keep media bytes (only a summary) or deliver one message id twice.
 *
 * Rate-limited recipients (numbers ending 0004): the FIRST attempt of each
 * message id rejects with a transient NetworkSendError; a retry with the same
 * id is taken. This exists so the gateway's retry path can be tested.
 */
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import type { IncomingContent, OutgoingNetworkMessage, PhoneNumber } from '../network.js';
import { NetworkSendError } from '../network.js';
import type {
  PhoneMessage,
  RecipientScope,
  SandboxInboxEntry,
  SandboxPhone,
  SandboxPhoneSettings,
} from '../sandbox-control.js';
import { SandboxControlError } from '../sandbox-control.js';
import type { PhoneRecord, PhoneView, StatusTracker, StoredEntry } from './phones.js';
import { isMagicPhone, isWellFormedPhone, PhoneRecord as Phone, SHARED_VIEW } from './phones.js';
import type { Link, WorldState } from './state.js';
import type { DigestedContent, SandboxMessage } from './media-digest.js';
import { phoneMessage, quoteOf } from './phone-message.js';
import { sandboxMediaRef } from './media-download.js';
import { announceContact, blockedBy } from './contacts.js';

export function isGroupId(to: string): boolean {
  return to.endsWith('@g.us');
}

export function sendMessage(world: WorldState, link: Link, message: SandboxMessage): void {
  const from = world.requireOpen(link);
  const key = `${from}:${message.id}`;
  if (world.sentIds.has(key)) return;
  const { type, ...content } = summarise(message.content);
  const base = {
    message_id: message.id,
    from,
    type,
    content,
    received_at: '',
    read_at: null,
    ...replyContext(message, from),
    ...(message.forwarded === true ? { forwarded: true } : {}),
  };
  const session = link.session;
  // Every phone meets this message as the sending device's account has set it up.
  const view = link.view;

  if (isGroupId(message.to)) {
    const group = world.groups.get(message.to);
    if (!group?.participants.has(from)) throw new NetworkSendError('not a member of the group', 'permanent');
    if (group.settings.onlyAdminsCanSend && group.participants.get(from) === null) {
      throw new NetworkSendError('only administrators can send messages to this group', 'permanent');
    }
    world.rememberSent(key);
    // Members at send time receive it, like the real network's fan-out.
    const members = [...group.participants.keys()].filter((p) => p !== from);
    const groupId = group.id;
    world.later(world.deliveryDelayMs, () => {
      for (const member of members) {
        const entry = { ...structuredClone(base), group_id: groupId };
        // Each member's phone receipts for itself, as on the real network (docs/whatsapp.md, Group receipts).
        const own: StatusTracker = { delivered: false, read: false };
        arrive(world, world.phone(member), { entry, view, senderSession: session, tracker: own });
      }
    });
    return;
  }

  if (!isWellFormedPhone(message.to)) throw new NetworkSendError('invalid recipient number', 'permanent');
  const recipient = world.phone(message.to);
  const seen = recipient.in(view);
  if (!seen.registered) throw new NetworkSendError('recipient is not registered', 'permanent');
  if (seen.rateLimited && !world.rateLimitedOnce.has(key)) {
    world.rateLimitedOnce.add(key);
    throw new NetworkSendError('rate limited by the network', 'transient');
  }
  world.rememberSent(key);
  const tracker: StatusTracker = { delivered: false, read: false };
  world.later(world.deliveryDelayMs, () =>
    arrive(world, recipient, { entry: base, view, senderSession: session, tracker }),
  );
}

/** A message reaches a phone, as its sender's view has the phone: blocked ones vanish, offline ones wait, the rest land. */
function arrive(world: WorldState, phone: PhoneRecord, stored: StoredEntry): void {
  const seen = phone.in(stored.view);
  if (seen.blocksEveryone) return;
  if (!seen.online) {
    phone.hold(stored);
    return;
  }
  const typing = phone.takeTyping(stored.entry.from);
  if (typing !== undefined) stored.entry.typing_ms = typing;
  stored.entry.received_at = new Date().toISOString();
  phone.store(stored);
  if (!stored.tracker.delivered) {
    stored.tracker.delivered = true;
    const id = stored.entry.message_id;
    world.emitToSession(stored.senderSession, {
      type: 'message_status',
      id,
      status: 'delivered',
      at: new Date(),
      ...participant(stored, phone.phone),
    });
  }
  if (seen.autoRead) world.later(world.readDelayMs, () => markRead(world, stored, phone.phone));
}

function markRead(world: WorldState, stored: StoredEntry, reader: PhoneNumber): void {
  if (stored.entry.read_at === null) stored.entry.read_at = new Date().toISOString();
  if (stored.tracker.read) return;
  stored.tracker.read = true;
  const id = stored.entry.message_id;
  world.emitToSession(stored.senderSession, {
    type: 'message_status',
    id,
    status: 'read',
    at: new Date(),
    ...participant(stored, reader),
  });
}

/** A group message's receipt names the member whose phone sent it; a direct message's needs no name. */
function participant(stored: StoredEntry, phone: PhoneNumber): { participant?: PhoneNumber } {
  return stored.entry.group_id === undefined ? {} : { participant: phone };
}

export function sendTyping(world: WorldState, link: Link, to: string, durationMs: number): void {
  const from = world.requireOpen(link);
  const targets = isGroupId(to)
    ? [...(world.groups.get(to)?.participants.keys() ?? [])].filter((p) => p !== from)
    : isWellFormedPhone(to)
      ? [to]
      : [];
  for (const phone of targets) world.phone(phone).typing.set(from, durationMs);
}

/** Without a view, any message in the inbox; with one, only that view's. */
export function readMessage(world: WorldState, phone: PhoneNumber, messageId: string, view?: PhoneView): void {
  const stored = world.phones
    .get(phone)
    ?.inbox.findLast((s) => s.entry.message_id === messageId && (view === undefined || s.view === view));
  if (!stored) throw new SandboxControlError(404, 'Message not found');
  markRead(world, stored, phone);
}

export function sendFromPhone(
  world: WorldState,
  phone: PhoneNumber,
  to: PhoneNumber,
  sent: string | PhoneMessage,
  recipient?: RecipientScope,
  view: PhoneView = SHARED_VIEW,
): { message_id: string } {
  if (!isWellFormedPhone(phone) || !isWellFormedPhone(to)) {
    throw new SandboxControlError(400, 'Invalid phone number format');
  }
  const message = phoneMessage(sent);
  if (!world.phone(phone).in(view).registered) {
    throw new SandboxControlError(400, 'Phone number is not registered', `${phone} has no account on the network`);
  }
  const sessions = [...world.sessions.values()].filter(
    (s) => s.phone === to && (recipient === undefined || s.token === recipient.session),
  );
  if (sessions.length === 0) throw new SandboxControlError(404, 'Device not found', `no device is paired with ${to}`);
  const id = ulid();
  for (const session of sessions) {
    world.emitToSession(session.token, {
      type: 'incoming_message',
      id,
      from: phone,
      content: withMediaRef(message),
      ...(message.replyTo === undefined ? {} : { quoted: quoteOf(message.replyTo) }),
      at: new Date(),
    });
  }
  return { message_id: id };
}

/** Media content names where its bytes are read from (media-download.ts reads the reference back). */
function withMediaRef(message: PhoneMessage): IncomingContent {
  const { content, mediaUrl } = message;
  if (mediaUrl === undefined || !('mimetype' in content)) return content;
  return { ...content, media: { ref: sandboxMediaRef(mediaUrl) } };
}

export function upsertPhone(world: WorldState, settings: SandboxPhoneSettings, view: PhoneView): SandboxPhone {
  if (!isWellFormedPhone(settings?.phone)) throw new SandboxControlError(400, 'Invalid phone number format');
  if (settings.privacy !== undefined && settings.privacy !== 'everyone' && settings.privacy !== 'nobody') {
    throw new SandboxControlError(400, 'Invalid privacy setting', 'privacy must be "everyone" or "nobody"');
  }
  const phone = world.phone(settings.phone);
  const before = phone.overrides.has(view) ? phone.in(view) : null;
  const wasOnline = (before ?? phone.in(view)).online;
  phone.applySettings(view, settings);
  world.changed();
  if (before !== null) announceContact(world, phone, view, before);
  if (!wasOnline && phone.in(view).online) {
    // Online in this view: the messages this view's devices sent meanwhile arrive; the others keep waiting.
    const waiting = phone.pending.filter((stored) => stored.view === view);
    phone.pending = phone.pending.filter((stored) => stored.view !== view);
    for (const stored of waiting) arrive(world, phone, stored);
  }
  return phone.view(view, blockedBy(world, phone.phone));
}

/** Without a view: the shared view's settings and every message (a tester looking at the world itself). */
export function getPhone(world: WorldState, phone: PhoneNumber, view?: PhoneView): SandboxPhone {
  const record = world.phones.get(phone) ?? (isWellFormedPhone(phone) && isMagicPhone(phone) ? new Phone(phone) : null);
  if (!record) throw new SandboxControlError(404, 'Phone not found');
  return record.view(view, blockedBy(world, record.phone));
}

/** The mentions and the quoted message of an outgoing message, as the recipient's inbox shows them. */
function replyContext(
  message: Pick<OutgoingNetworkMessage, 'mentions' | 'quoted'>,
  from: PhoneNumber,
): Pick<SandboxInboxEntry, 'mentions' | 'quoted'> {
  const context: { -readonly [K in 'mentions' | 'quoted']?: SandboxInboxEntry[K] } = {};
  if (message.mentions !== undefined && message.mentions.length > 0) context.mentions = [...message.mentions];
  const quoted = message.quoted;
  if (quoted !== undefined) {
    const author = quoted.fromMe ? from : (quoted.author ?? quoted.chat);
    context.quoted = {
      message_id: quoted.id,
      from: author,
      ...(quoted.text === undefined ? {} : { text: quoted.text }),
    };
  }
  return context;
}

/** What the recipient "sees": media as its size and fingerprint, taken as the bytes went past; a reaction as its emoji and target. */
function summarise(content: DigestedContent): { type: string } & Record<string, unknown> {
  // A reaction shows its emoji and the id of the message it is on, as the phone's inbox knows it.
  if (content.type === 'reaction') return { type: 'reaction', emoji: content.emoji, message_id: content.target.id };
  // Actions (docs/internals.md, Message actions) show what they did to which message, in the order they came.
  if (content.type === 'edit') return { type: 'edit', text: content.text, message_id: content.target.id };
  if (content.type === 'delete') return { type: 'delete', message_id: content.target.id };
  if (content.type === 'read') return { type: 'read', message_ids: content.targets.map((target) => target.id) };
  // A link preview's image shows like media: its type, size and fingerprint, never the bytes.
  if (content.type === 'chat' && content.preview?.thumbnail !== undefined) {
    const { thumbnail, ...preview } = content.preview;
    const bytes = Buffer.from(thumbnail.base64, 'base64');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return {
      ...structuredClone(content),
      preview: { ...preview, thumbnail: { mimetype: thumbnail.mimetype, size: bytes.length, sha256 } },
    };
  }
  if (!('media' in content)) return structuredClone(content) as { type: string } & Record<string, unknown>;
  const { media, ...rest } = content;
  return { ...rest, size: media.size, sha256: media.sha256 };
}
