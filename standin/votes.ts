/**
 * A phone voting on a poll (issue 26; docs/standin.md): `POST /control/phones/{phone}/votes {message_id, options}`.
 * The phone votes the way WhatsApp phones do: a `pollUpdateMessage` naming the poll by its key (in the phone's
 * terms) and carrying the SHA-256 of each chosen option's text inside a `PollVoteMessage`, encrypted with AES-256-GCM
 * under a key derived (HMAC-SHA256, twice) from the poll's message secret, the poll's id, its creator's JID and the
 * voter's JID, with `{poll id}\0{voter JID}` as the associated data. The JIDs used are the number forms
 * (`…@s.whatsapp.net`, no device): the device tries those and the LID forms.
 *
 * Owns: the route's checks (400 for a body that is not a vote, 404 for a poll the phone never received or one
 * without the secret its votes need), the encryption, and sending the vote like any message of the phone.
 * Must never: vote with an option text the poll does not have (400), or answer a bad request with a 500.
 */
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { proto } from 'baileys';
import { ControlError } from './pairing.js';
import { messageId, phoneSendsTo } from './routing.js';
import type { StandinHub } from './server.js';
import type { Account } from './world.js';

const pnJid = (phone: string) => `${phone}@s.whatsapp.net`;

/** The vote sealed for the poll `pollId` of `creator`, cast by `voter`: what a phone puts in `vote`. */
export function sealVote(
  hashes: Uint8Array[],
  secret: Uint8Array,
  ids: { pollId: string; creator: string; voter: string },
): { encPayload: Uint8Array; encIv: Uint8Array } {
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: hashes }).finish();
  const first = createHmac('sha256', new Uint8Array(32)).update(secret).digest();
  const info = Buffer.concat([
    Buffer.from(ids.pollId),
    Buffer.from(ids.creator),
    Buffer.from(ids.voter),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key = createHmac('sha256', first).update(info).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${ids.pollId}\u0000${ids.voter}`));
  const sealed = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { encPayload: sealed, encIv: iv };
}

export async function phoneVotes(hub: StandinHub, account: Account, body: Record<string, unknown>) {
  const world = hub.world;
  const target = body.message_id;
  if (typeof target !== 'string' || target === '') throw new ControlError(400, 'message_id must be a string');
  const options = body.options;
  if (!Array.isArray(options) || !options.every((o) => typeof o === 'string'))
    throw new ControlError(400, 'options must list option texts');
  const received = account.primary.inbox.find((entry) => entry.id === target);
  if (received?.poll === undefined) throw new ControlError(404, 'the phone received no such poll');
  const secret = account.primary.pollSecrets.get(target);
  if (secret === undefined) throw new ControlError(404, 'the poll came without the secret its votes need');
  const unknown = options.find((o) => !received.poll!.options.includes(o as string));
  if (unknown !== undefined) throw new ControlError(400, `the poll has no option ${JSON.stringify(unknown)}`);
  const hashes = options.map(
    (o) =>
      new Uint8Array(
        createHash('sha256')
          .update(o as string)
          .digest(),
      ),
  );
  const group = received.group;
  const creator = pnJid(received.from);
  const vote = sealVote(hashes, secret, { pollId: target, creator, voter: pnJid(account.phone) });
  const pollKey: proto.IMessageKey =
    group === undefined
      ? { remoteJid: creator, fromMe: false, id: target }
      : { remoteJid: group, fromMe: false, id: target, participant: creator };
  const message: proto.IMessage = {
    pollUpdateMessage: { pollCreationMessageKey: pollKey, vote, senderTimestampMs: Date.now() },
    messageContextInfo: { messageSecret: randomBytes(32) },
  };
  const id = messageId();
  if (group !== undefined) {
    const known = world.groups.get(group);
    if (known === undefined) throw new ControlError(404, 'no such group');
    await hub.groups.phoneSends(account, known, id, message);
    return { id };
  }
  const attrs = {
    from: account.primary.lidJid,
    sender_pn: account.primary.pnJid,
    addressing_mode: 'lid',
    notify: `Phone ${account.phone}`,
  };
  world.resendable.set(`${account.phone}/${id}`, { message, attrs, resends: 0 });
  for (const device of world.devices(world.account(received.from)))
    if (device.kind === 'companion') await phoneSendsTo(hub, account, device, id, message, attrs);
  return { id };
}
