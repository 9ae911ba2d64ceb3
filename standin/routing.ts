/**
 * Messages and receipts between devices: what a linked device sends (acked by the server, fanned out per
 * recipient device) and what the fake phones send (encrypted by the phone, delivered to each linked device).
 *
 * Owns: the stanzas' addressing (LID first, with the phone number alongside unless a phone sends from its LID
 * only), the server ack, the phones' delivery and read receipts, and the fault delays on acks and receipts.
 * Must never: decrypt for a linked device, or drop a stanza for an offline device (it waits in its queue).
 */
import { createHash, randomBytes } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, isJidGroup, jidDecode, proto, type BinaryNode } from 'baileys';
import { contentDetails } from './content-details.js';
import { decryptMedia, mediaKind } from './media.js';
import { now } from './pairing.js';
import type { Stream } from './stream.js';
import {
  lidDeviceJid,
  pnDeviceJid,
  targetDevice,
  type Account,
  type Companion,
  type Target,
  type World,
} from './world.js';

export interface RoutingContext {
  readonly world: World;
  /** Encrypted media bytes by direct path, for the phones to decrypt what they receive. */
  readonly media: Map<string, Buffer>;
  log(message: string): void;
}

export function messageId(): string {
  return `3EB0${randomBytes(10).toString('hex').toUpperCase()}`;
}

function later(ms: number | undefined, task: () => void): void {
  if (ms === undefined || ms <= 0) queueMicrotask(task);
  else setTimeout(task, ms);
}

/** A message from a linked device: ack it, then hand each per-device part to its device. */
export async function fromCompanion(
  ctx: RoutingContext,
  groupsFanout: GroupFanout,
  sender: Companion,
  node: BinaryNode,
  stream: Stream,
): Promise<void> {
  const { id = '', to = '' } = node.attrs;
  const faults = ctx.world.faults;
  if (faults.drop_acks !== true)
    later(faults.ack_delay_ms, () => stream.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: now() } }));
  if (isJidGroup(to)) {
    await groupsFanout(sender, node);
    return;
  }
  const participants = getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to');
  const senderLid = lidDeviceJid(sender.account, sender.device);
  for (const part of participants) {
    const target = ctx.world.target(part.attrs.jid ?? '');
    const enc = getBinaryNodeChild(part, 'enc');
    if (target === undefined || enc === undefined) {
      ctx.log(`message ${id}: no device ${part.attrs.jid}`);
      continue;
    }
    if (target.kind === 'phone') {
      void phoneReceives(ctx, target.account, sender, { id, chat: to, type: node.attrs.type ?? 'text' }, [enc]).catch(
        (error) => ctx.log(`phone ${target.account.phone} could not read ${id}: ${(error as Error).stack}`),
      );
      continue;
    }
    const own = target.companion.account === sender.account;
    ctx.world.deliver(target.companion, {
      tag: 'message',
      attrs: {
        id,
        from: senderLid,
        ...(own ? { recipient: to } : { sender_pn: pnDeviceJid(sender.account, sender.device) }),
        addressing_mode: 'lid',
        type: node.attrs.type ?? 'text',
        t: now(),
      },
      content: [enc],
    });
  }
}

export type GroupFanout = (sender: Companion, node: BinaryNode) => Promise<void>;

export interface Incoming {
  readonly id: string;
  /** The chat as the sender addressed it (a number, a LID, or a group). */
  readonly chat: string;
  readonly type: string;
  readonly group?: string;
}

/** A phone decrypts what a linked device sent it, records it, and answers with a delivery receipt. */
export async function phoneReceives(
  ctx: RoutingContext,
  account: Account,
  sender: Companion,
  incoming: Incoming,
  encs: BinaryNode[],
): Promise<void> {
  const phone = account.primary;
  const author = lidDeviceJid(sender.account, sender.device);
  let message: proto.Message | undefined;
  for (const enc of encs) {
    const type = enc.attrs.type;
    const bytes = enc.content as Uint8Array;
    if (type === 'skmsg') message = await phone.decryptGroup(incoming.group ?? '', author, bytes);
    else if (type === 'pkmsg' || type === 'msg') {
      const m = await phone.decrypt(author, type, bytes);
      if (m.senderKeyDistributionMessage && incoming.group !== undefined)
        await phone.acceptSenderKey(author, m.senderKeyDistributionMessage);
      if (incoming.group === undefined || !isOnlyKeyDistribution(m)) message = m;
    }
  }
  if (message === undefined) return;
  // A copy of what another device of the same account sent: the phone files it, it is not an incoming message.
  if (message.deviceSentMessage) return;
  // Decoded, so the wrapped content is a Message too.
  const content = (unwrapViewOnce(message) as proto.Message | undefined) ?? message;
  const entry = await describe(ctx, content);
  const { type: detailedType, ...details } = contentDetails(content);
  const quoted = quotedIn(content);
  const pollSecret = message.messageContextInfo?.messageSecret;
  if (details.poll !== undefined && pollSecret) phone.pollSecrets.set(incoming.id, new Uint8Array(pollSecret));
  const mentions = mentionsOf(content);
  phone.inbox.push({
    id: incoming.id,
    from: sender.account.phone,
    type: detailedType ?? entry.type,
    ...(entry.text === undefined ? {} : { text: entry.text }),
    ...(entry.media_sha256 === undefined ? {} : { media_sha256: entry.media_sha256 }),
    ...details,
    ...(incoming.group === undefined ? {} : { group: incoming.group }),
    ...(quoted === undefined ? {} : { quoted }),
    ...(unwrapViewOnce(message) === undefined ? {} : { view_once: true as const }),
    ...(mentions.length === 0 ? {} : { mentions }),
    received_at: new Date().toISOString(),
  });
  // The sender's own phone has a group message of its account's device as its own: it receipts nothing, as a member
  // the message reached would (the direct chat's copy never gets this far).
  if (sender.account === account) return;
  const receipt: BinaryNode = {
    tag: 'receipt',
    attrs: {
      id: incoming.id,
      from: incoming.group ?? incoming.chat,
      ...(incoming.group === undefined ? {} : { participant: phone.lidJid }),
      t: now(),
    },
  };
  later(ctx.world.faults.receipt_delay_ms, () => ctx.world.deliver(sender, receipt));
  // Remember who sent it, so a read receipt from the control interface finds its way back.
  ctx.world.readable.set(`${account.phone}/${incoming.id}`, { sender, chat: incoming.chat, group: incoming.group });
}

/** The phone's user reads a message a linked device sent: a read receipt goes back to that device. */
export function phoneReads(ctx: RoutingContext, account: Account, messageIdRead: string): boolean {
  const found = ctx.world.readable.get(`${account.phone}/${messageIdRead}`);
  if (found === undefined) return false;
  ctx.world.deliver(found.sender, {
    tag: 'receipt',
    attrs: {
      id: messageIdRead,
      from: found.group ?? found.chat,
      ...(found.group === undefined ? {} : { participant: account.primary.lidJid }),
      type: 'read',
      t: now(),
    },
  });
  return true;
}

/** The quote of a reply (a text's or a caption's context): the quoted id and the author it names. */
function quotedIn(message: proto.Message): { id: string; participant: string } | undefined {
  const context =
    message.extendedTextMessage?.contextInfo ??
    message.imageMessage?.contextInfo ??
    message.videoMessage?.contextInfo ??
    message.documentMessage?.contextInfo;
  if (typeof context?.stanzaId !== 'string' || context.stanzaId === '') return undefined;
  return { id: context.stanzaId, participant: context.participant ?? '' };
}

/** The content of a view-once wrapper; undefined when the message is not one. */
function unwrapViewOnce(m: proto.IMessage): proto.IMessage | undefined {
  return (
    m.viewOnceMessage?.message ?? m.viewOnceMessageV2?.message ?? m.viewOnceMessageV2Extension?.message ?? undefined
  );
}

/** The JIDs the content's context mentions (where the protobuf carries them: on the content itself). */
function mentionsOf(m: proto.IMessage): string[] {
  for (const value of Object.values(m) as unknown[]) {
    const context = (value as { contextInfo?: proto.IContextInfo | null } | null)?.contextInfo;
    if (context?.mentionedJid && context.mentionedJid.length > 0) return [...context.mentionedJid];
  }
  return [];
}

function isOnlyKeyDistribution(m: proto.Message): boolean {
  const keys = Object.keys(proto.Message.toObject(m)).filter(
    (k) => k !== 'senderKeyDistributionMessage' && k !== 'messageContextInfo',
  );
  return keys.length === 0;
}

async function describe(
  ctx: RoutingContext,
  message: proto.Message,
): Promise<{ type: string; text?: string; media_sha256?: string }> {
  const text = message.conversation ?? message.extendedTextMessage?.text ?? undefined;
  if (text !== undefined && text !== null) return { type: 'text', text };
  const kind = mediaKind(message);
  if (kind !== undefined) {
    const bytes = await decryptMedia(ctx.media, kind.kind, kind.media);
    return {
      type: kind.kind,
      ...(kind.media.caption ? { text: kind.media.caption } : {}),
      ...(bytes === undefined ? {} : { media_sha256: createHash('sha256').update(bytes).digest('hex') }),
    };
  }
  return { type: Object.keys(proto.Message.toObject(message))[0] ?? 'unknown' };
}

/** A receipt from a linked device: ack it and, when it is for a phone's message, note it on the phone. */
export function receiptFromCompanion(ctx: RoutingContext, node: BinaryNode, stream: Stream): void {
  const { id = '', to = '', type, participant } = node.attrs;
  stream.send({ tag: 'ack', attrs: { class: 'receipt', id, from: to, ...(type === undefined ? {} : { type }) } });
  const ids = [id, ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id ?? '')];
  // Any receipt (delivery, inactive, read, retry) means the device has the stanza: it is not offered again.
  if (stream.companion !== undefined) ctx.world.receipted(stream.companion, ids);
  const author = ctx.world.accountOf(participant ?? to);
  if (author === undefined || (jidDecode(participant ?? to)?.device ?? 0) !== 0) return;
  if (type === 'retry') {
    if (stream.companion !== undefined) {
      for (const one of ids) stream.companion.retrying.add(one);
      void phoneResends(ctx, author, stream.companion, ids);
    }
    return;
  }
  for (const one of ids) {
    const sent = author.primary.sent.find((s) => s.id === one);
    if (sent === undefined) continue;
    const at = new Date().toISOString();
    // A device that is not "available" (markOnlineOnConnect false) acknowledges delivery as `inactive`.
    if (type === undefined || type === 'delivery' || type === 'inactive') sent.delivered_at ??= at;
    else if (type === 'read' || type === 'read-self' || type === 'played') {
      sent.delivered_at ??= at;
      sent.read_at ??= at;
    }
  }
}

/** A linked device's acknowledgement of a phone's message: a refusal (`error`) is noted on the phone's sent entry. */
export function ackFromCompanion(ctx: RoutingContext, node: BinaryNode): void {
  const { id = '', class: kind, error } = node.attrs;
  if (kind !== 'message' || error === undefined) return;
  ctx.log(`message ${id} refused by a linked device: ${error}`);
  for (const account of ctx.world.accounts.values()) {
    const sent = account.primary.sent.find((s) => s.id === id);
    if (sent !== undefined) sent.nack = error;
  }
}

/** A phone sends a message again, newly encrypted, that a linked device could not decrypt (a retry receipt). */
async function phoneResends(ctx: RoutingContext, author: Account, companion: Companion, ids: string[]): Promise<void> {
  for (const id of ids) {
    const key = `${author.phone}/${id}`;
    const original = ctx.world.resendable.get(key);
    if (original === undefined) {
      ctx.log(`retry receipt for ${id}: the phone ${author.phone} has nothing to send again`);
      continue;
    }
    ctx.log(`retry receipt for ${id}: the phone ${author.phone} sends it again`);
    if (++original.resends >= MAX_RESENDS) ctx.world.resendable.delete(key);
    await phoneSendsTo(ctx, author, { kind: 'companion', companion }, id, original.message, original.attrs).catch(
      (error) => ctx.log(`phone ${author.phone} could not send ${id} again: ${(error as Error).stack}`),
    );
  }
}

const MAX_RESENDS = 3;

/** What a phone sends to one linked device of another (or its own) account. */
export async function phoneSendsTo(
  ctx: RoutingContext,
  account: Account,
  target: Target & { kind: 'companion' },
  id: string,
  message: proto.IMessage,
  attrs: Record<string, string>,
  extra: BinaryNode[] = [],
): Promise<void> {
  const companion = target.companion;
  const jid = lidDeviceJid(companion.account, companion.device);
  const { type, ciphertext } = await account.primary.encrypt(jid, message, async () =>
    ctx.world.companionBundle(companion),
  );
  ctx.world.deliver(companion, {
    tag: 'message',
    attrs: { id, t: now(), type: message.conversation || message.extendedTextMessage ? 'text' : 'media', ...attrs },
    content: [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }, ...extra],
  });
}

export { targetDevice };
