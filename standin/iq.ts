/**
 * The answers to the IQs a linked device sends to the server: pre-keys (count, upload, digest, fetch, rotate),
 * passive/active, pings, AB props, blocklist, privacy, user sync, media connection, logout, link codes, groups.
 *
 * Owns: the table from an IQ's namespace and first child to its handler, and the error answer for anything not in
 * it (501, so a newer library fails loudly instead of waiting for an answer that never comes).
 * Must never: stay silent on an IQ.
 */
import {
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  getBinaryNodeChildren,
  jidDecode,
  type BinaryNode,
} from 'baileys';
import type { Groups } from './groups.js';
import type { Pairing } from './pairing.js';
import type { Stream } from './stream.js';
import { pnDeviceJid, type Account, type Companion, type World } from './world.js';

export interface IqContext {
  readonly world: World;
  readonly pairing: Pairing;
  readonly groups: Groups;
  /** host:port of the HTTPS media host. */
  readonly mediaHost: string;
  log(message: string): void;
}

/** What a handler returns: the result's children, or an error code with its text. */
type Answer = BinaryNode[] | { error: number; text: string };
type Handler = (
  ctx: IqContext,
  stream: Stream,
  companion: Companion,
  iq: BinaryNode,
  child: BinaryNode,
) => Answer | Promise<Answer>;

const uint = (value: number, bytes: number) => {
  const out = Buffer.alloc(bytes);
  out.writeUIntBE(value, 0, bytes);
  return out;
};
const leaf = (tag: string, content: Uint8Array | string) => ({ tag, attrs: {}, content }) satisfies BinaryNode;

const handlers: Record<string, Handler> = {
  'encrypt/count': (_ctx, _s, companion) => [{ tag: 'count', attrs: { value: String(companion.preKeys.size) } }],
  'encrypt/digest': () => [{ tag: 'digest', attrs: {} }],
  'encrypt/rotate': (_ctx, _s, companion, _iq, child) => {
    const skey = getBinaryNodeChild(child, 'skey');
    if (skey !== undefined) companion.signedPreKey = signedPreKeyOf(skey);
    return [];
  },
  // Pre-key upload: the children are registration, type, identity, list of keys and skey, no wrapper.
  'encrypt/registration': (_ctx, _s, companion, iq) => {
    const list = getBinaryNodeChild(iq, 'list');
    for (const key of getBinaryNodeChildren(list, 'key')) {
      const id = getBinaryNodeChildBuffer(key, 'id');
      const value = getBinaryNodeChildBuffer(key, 'value');
      if (id !== undefined && value !== undefined)
        companion.preKeys.set(Buffer.from(id).readUIntBE(0, id.length), Buffer.from(value));
    }
    const identity = getBinaryNodeChildBuffer(iq, 'identity');
    if (identity !== undefined) companion.identityKey = Buffer.from(identity);
    const registration = getBinaryNodeChildBuffer(iq, 'registration');
    if (registration !== undefined) companion.registrationId = Buffer.from(registration).readUInt32BE(0);
    const skey = getBinaryNodeChild(iq, 'skey');
    if (skey !== undefined) companion.signedPreKey = signedPreKeyOf(skey);
    return [];
  },
  'encrypt/key': async (ctx, _s, _c, _iq, child) => {
    const users: BinaryNode[] = [];
    for (const user of getBinaryNodeChildren(child, 'user')) {
      const jid = user.attrs.jid ?? '';
      const target = ctx.world.target(jid);
      if (target === undefined) {
        users.push({
          tag: 'user',
          attrs: { jid },
          content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }],
        });
        continue;
      }
      const b = await ctx.world.bundleOf(target);
      const content: BinaryNode[] = [
        leaf('registration', uint(b.registrationId, 4)),
        leaf('type', Buffer.from([5])),
        leaf('identity', b.identityKey),
        {
          tag: 'skey',
          attrs: {},
          content: [
            leaf('id', uint(b.signedPreKey.keyId, 3)),
            leaf('value', b.signedPreKey.publicKey),
            leaf('signature', b.signedPreKey.signature),
          ],
        },
      ];
      if (b.preKey !== undefined)
        content.push({
          tag: 'key',
          attrs: {},
          content: [leaf('id', uint(b.preKey.keyId, 3)), leaf('value', b.preKey.publicKey)],
        });
      users.push({ tag: 'user', attrs: { jid }, content });
    }
    return [{ tag: 'list', attrs: {}, content: users }];
  },
  'passive/active': () => [],
  'passive/passive': () => [],
  'w:p/ping': () => [],
  'abt/props': () => [{ tag: 'props', attrs: { protocol: '1', hash: 'standin' } }],
  'blocklist/': () => [{ tag: 'list', attrs: {} }],
  'privacy/privacy': () => [{ tag: 'privacy', attrs: {} }],
  'privacy/tokens': () => [],
  'w:stats/add': () => [],
  'urn:xmpp:whatsapp:dirty/clean': () => [],
  'usync/usync': (ctx, _s, _c, _iq, child) => usync(ctx.world, child),
  'w:m/media_conn': (ctx) => [
    {
      tag: 'media_conn',
      attrs: { auth: 'standin', ttl: '3600', auth_ttl: '3600', max_buckets: '1' },
      content: [{ tag: 'host', attrs: { hostname: ctx.mediaHost, maxContentLengthBytes: '104857600' } }],
    },
  ],
  'md/remove-companion-device': (ctx, stream, companion) => {
    companion.removed = true;
    ctx.log(`device ${pnDeviceJid(companion.account, companion.device)} logged out`);
    setTimeout(() => stream.end(), 20);
    return [];
  },
};

function signedPreKeyOf(skey: BinaryNode) {
  const id = getBinaryNodeChildBuffer(skey, 'id') ?? Buffer.alloc(3);
  return {
    keyId: Buffer.from(id).readUIntBE(0, id.length),
    publicKey: Buffer.from(getBinaryNodeChildBuffer(skey, 'value') ?? []),
    signature: Buffer.from(getBinaryNodeChildBuffer(skey, 'signature') ?? []),
  };
}

function devicesNode(world: World, account: Account): BinaryNode {
  const list = world.devices(account).map((target): BinaryNode =>
    target.kind === 'phone'
      ? { tag: 'device', attrs: { id: '0' } }
      : {
          tag: 'device',
          attrs: { id: String(target.companion.device), 'key-index': String(target.companion.device) },
        },
  );
  return { tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: list }] };
}

/** User sync: for each user asked (by JID or by phone number), the protocols asked for: devices, lid, contact. */
function usync(world: World, usyncNode: BinaryNode): Answer {
  const query = getBinaryNodeChild(usyncNode, 'query');
  const protocols = new Set((Array.isArray(query?.content) ? query.content : []).map((n) => n.tag));
  const users: BinaryNode[] = [];
  for (const user of getBinaryNodeChildren(getBinaryNodeChild(usyncNode, 'list'), 'user')) {
    let jid = user.attrs.jid;
    const contact = getBinaryNodeChild(user, 'contact');
    if (jid === undefined && contact?.content !== undefined) {
      const digits = Buffer.from(contact.content as Uint8Array)
        .toString()
        .replace(/\D/g, '');
      jid = `${digits}@s.whatsapp.net`;
    }
    if (jid === undefined) continue;
    const account = world.accountOf(jid);
    if (account === undefined) {
      users.push({ tag: 'user', attrs: { jid }, content: [{ tag: 'contact', attrs: { type: 'out' } }] });
      continue;
    }
    const isLid = jidDecode(jid)?.server === 'lid';
    const content: BinaryNode[] = [];
    if (protocols.has('devices')) content.push(devicesNode(world, account));
    if (protocols.has('lid') && !isLid) content.push({ tag: 'lid', attrs: { val: `${account.lid}@lid` } });
    if (protocols.has('contact')) content.push({ tag: 'contact', attrs: { type: 'in' } });
    users.push({
      tag: 'user',
      attrs: { jid: isLid ? `${account.lid}@lid` : `${account.phone}@s.whatsapp.net` },
      content,
    });
  }
  return [
    {
      tag: 'usync',
      attrs: { ...usyncNode.attrs },
      content: [
        { tag: 'result', attrs: {} },
        { tag: 'list', attrs: {}, content: users },
      ],
    },
  ];
}

/** Answers one IQ from a logged-in device. */
export async function answerIq(ctx: IqContext, stream: Stream, iq: BinaryNode): Promise<void> {
  const type = iq.attrs.type;
  if (type === 'result' || type === 'error') {
    // Answers to the server's own IQs: pair-device-sign ends pairing; the rest (pair-device) need nothing back.
    ctx.pairing.onSigned(stream, iq);
    return;
  }
  const child = Array.isArray(iq.content) ? iq.content[0] : undefined;
  const xmlns = iq.attrs.xmlns ?? '';
  const companion = stream.companion;
  let answer: Answer;
  if (xmlns === 'md' && child?.tag === 'link_code_companion_reg')
    answer = ctx.pairing.onLinkCode(stream, iq, child) ?? { error: 400, text: 'bad-request' };
  else if (xmlns === 'w:p') answer = [];
  // Before login (a device waiting to be linked) only pairing and pings make sense.
  else if (companion === undefined) answer = { error: 401, text: 'not-authorized' };
  else if (xmlns === 'w:g2') answer = await ctx.groups.answer(companion, iq, child);
  else {
    const handler = handlers[`${xmlns}/${child?.tag ?? ''}`];
    try {
      answer =
        handler === undefined
          ? { error: 501, text: 'feature-not-implemented' }
          : await handler(ctx, stream, companion, iq, child ?? iq);
    } catch (error) {
      ctx.log(`iq ${xmlns}/${child?.tag} failed: ${(error as Error).stack}`);
      answer = { error: 500, text: 'internal-server-error' };
    }
  }
  if (!Array.isArray(answer)) ctx.log(`iq ${xmlns}/${child?.tag ?? ''} answered with error ${answer.error}`);
  stream.send(iqAnswer(iq, answer));
}

export function iqAnswer(iq: BinaryNode, answer: Answer): BinaryNode {
  const base = { from: iq.attrs.to ?? 's.whatsapp.net', id: iq.attrs.id ?? '' };
  return Array.isArray(answer)
    ? { tag: 'iq', attrs: { ...base, type: 'result' }, content: answer.length === 0 ? undefined : answer }
    : {
        tag: 'iq',
        attrs: { ...base, type: 'error' },
        content: [{ tag: 'error', attrs: { code: String(answer.error), text: answer.text } }],
      };
}
