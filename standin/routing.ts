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
  const entry = await describe(ctx, message);
  phone.inbox.push({
    id: incoming.id,
    from: sender.account.phone,
    type: entry.type,
    ...(entry.text === undefined ? {} : { text: entry.text }),
    ...(entry.media_sha256 === undefined ? {} : { media_sha256: entry.media_sha256 }),
    ...(incoming.group === undefined ? {} : { group: incoming.group }),
    received_at: new Date().toISOString(),
  });
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
  const author = ctx.world.accountOf(participant ?? to);
  if (author === undefined || (jidDecode(participant ?? to)?.device ?? 0) !== 0) return;
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
