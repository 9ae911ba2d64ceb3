/**
 * A phone changing a message (issue 26; docs/standin.md): it reacts to a message it sent or received, or edits or
 * deletes for everyone one it sent, the way WhatsApp phones do: a `reactionMessage`, or a `protocolMessage` of type
 * MESSAGE_EDIT or REVOKE, whose key names the message in the phone's own terms (`fromMe`: the phone wrote it).
 *
 * Owns: the control routes `POST /control/phones/{phone}/reactions {message_id, emoji}`, `…/edits {message_id,
 * text}` and `…/deletes {message_id}`, their checks (400, or 404 for a message the phone neither sent nor received),
 * and sending the change like any message of the phone, to the chat the message is in.
 * Must never: change what the phone's inbox or sent list holds, or answer a bad request with a 500.
 */
import { proto } from 'baileys';
import { ControlError } from './pairing.js';
import { messageId, phoneSendsTo } from './routing.js';
import type { StandinHub } from './server.js';
import type { Account } from './world.js';

export const CHANGE_ROUTES = ['reactions', 'edits', 'deletes'] as const;
export type ChangeRoute = (typeof CHANGE_ROUTES)[number];

const PROTOCOL = proto.Message.ProtocolMessage.Type;

const pnJid = (phone: string) => `${phone}@s.whatsapp.net`;

/** The change's content, naming the message by `key`. */
function changeMessage(route: ChangeRoute, key: proto.IMessageKey, body: Record<string, unknown>): proto.IMessage {
  switch (route) {
    case 'reactions':
      if (typeof body.emoji !== 'string') throw new ControlError(400, 'emoji must be a string ("" takes it away)');
      return { reactionMessage: { key, text: body.emoji, senderTimestampMs: Date.now() } };
    case 'edits':
      if (typeof body.text !== 'string' || body.text === '')
        throw new ControlError(400, 'text must be a non-empty string');
      return {
        editedMessage: {
          message: {
            protocolMessage: {
              key,
              type: PROTOCOL.MESSAGE_EDIT,
              editedMessage: { conversation: body.text },
              timestampMs: Date.now(),
            },
          },
        },
      };
    case 'deletes':
      return { protocolMessage: { key, type: PROTOCOL.REVOKE } };
  }
}

export async function phoneChanges(
  hub: StandinHub,
  account: Account,
  route: ChangeRoute,
  body: Record<string, unknown>,
): Promise<{ id: string }> {
  const world = hub.world;
  const target = body.message_id;
  if (typeof target !== 'string' || target === '') throw new ControlError(400, 'message_id must be a string');
  const sent = account.primary.sent.find((entry) => entry.id === target);
  const received = sent === undefined ? account.primary.inbox.find((entry) => entry.id === target) : undefined;
  if (sent === undefined && received === undefined) throw new ControlError(404, 'the phone has no such message');
  if (route !== 'reactions' && sent === undefined)
    throw new ControlError(400, 'a phone edits and deletes only the messages it sent');
  const group = sent !== undefined ? (sent.to.endsWith('@g.us') ? sent.to : undefined) : received!.group;
  // Direct chats: the other party; the phone's own message was sent to it, the other's came from it.
  const other = sent !== undefined ? sent.to : received!.from;
  const key: proto.IMessageKey =
    group === undefined
      ? { remoteJid: pnJid(other), fromMe: sent !== undefined, id: target }
      : {
          remoteJid: group,
          fromMe: sent !== undefined,
          id: target,
          ...(sent === undefined ? { participant: pnJid(received!.from) } : {}),
        };
  const message = changeMessage(route, key, body);
  const id = messageId();
  if (group !== undefined) {
    const known = world.groups.get(group);
    if (known === undefined) throw new ControlError(404, 'no such group');
    await hub.groups.phoneSends(account, known, id, message);
    return { id };
  }
  if (!/^\d{6,15}$/.test(other)) throw new ControlError(400, 'the message is not in a chat with a phone');
  const attrs = {
    from: account.primary.lidJid,
    sender_pn: account.primary.pnJid,
    addressing_mode: 'lid',
    notify: `Phone ${account.phone}`,
  };
  world.resendable.set(`${account.phone}/${id}`, { message, attrs, resends: 0 });
  for (const device of world.devices(world.account(other)))
    if (device.kind === 'companion') await phoneSendsTo(hub, account, device, id, message, attrs);
  return { id };
}
