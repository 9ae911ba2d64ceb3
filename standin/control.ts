/**
 * The control interface (HTTP, JSON, no envelope): what tests use to play the phones' users and the network.
 *
 * Owns: the routes of docs/standin.md (phones, scan, pair, a phone's messages, read, unlink, groups, drop,
 * faults, stats; a phone's reactions, edits and deletes through changes.ts) and their input checks (a 400 or 404 with `{error}`); a phone's outgoing message is built by
 * phone-content.ts.
 * Must never: answer a bad request with a 500, or change state before the request is known to be valid.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CHANGE_ROUTES, phoneChanges, type ChangeRoute } from './changes.js';
import { phoneVotes } from './votes.js';
import { HISTORY_LIMITS } from './history.js';
import { linkedProfilesNotification } from './lid-mappings.js';
import { ControlError } from './pairing.js';
import { expireOnHost } from './media-retry.js';
import { buildPhoneMessage } from './phone-content.js';
import { messageId, phoneReads, phoneSendsTo } from './routing.js';
import type { StandinHub } from './server.js';
import { pnDeviceJid, type Faults } from './world.js';

type Body = Record<string, unknown>;

async function readBody(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString());
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
    return parsed as Body;
  } catch {
    throw new ControlError(400, 'the body must be a JSON object');
  }
}

function digits(value: unknown, name: string): string {
  const text = typeof value === 'string' ? value.replace(/^\+/, '').split('@')[0]! : '';
  if (!/^\d{6,15}$/.test(text)) throw new ControlError(400, `${name} must be a phone number (digits)`);
  return text;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** How many of the phones' latest messages can be sent again on a retry receipt. */
const MAX_RESENDABLE = 10_000;

export async function handleControl(hub: StandinHub, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const answer = await route(hub, req.method ?? 'GET', new URL(req.url ?? '/', 'http://standin').pathname, req);
    send(res, 200, answer);
  } catch (error) {
    if (error instanceof ControlError) send(res, error.status, { error: error.message });
    else {
      hub.log(`control failed: ${(error as Error).stack}`);
      send(res, 500, { error: (error as Error).message });
    }
  }
}

async function route(hub: StandinHub, method: string, path: string, req: IncomingMessage): Promise<unknown> {
  const world = hub.world;
  const phoneRoute =
    /^\/control\/phones\/([^/]+)(?:\/(messages|read|unlink|reveal|reactions|edits|deletes|votes|history))?$/.exec(path);
  if (method === 'GET' && path === '/control/presence') return { presence: hub.presence };
  if (method === 'GET' && path === '/control/stats') return { ...world.stats, waiting: world.waitingMessages() };
  if (method === 'GET' && phoneRoute !== null && phoneRoute[2] === undefined) {
    const account = world.accounts.get(digits(decodeURIComponent(phoneRoute[1]!), 'phone'));
    if (account === undefined) throw new ControlError(404, 'no such phone');
    return {
      phone: account.phone,
      lid: `${account.lid}@lid`,
      linked_devices: [...account.companions.values()]
        .filter((c) => !c.removed)
        .map((c) => pnDeviceJid(account, c.device)),
      inbox: account.primary.inbox,
      sent: account.primary.sent,
    };
  }
  if (method !== 'POST') throw new ControlError(404, 'no such route');
  const body = await readBody(req);
  if (path === '/control/phones') {
    const account = world.account(digits(body.phone, 'phone'));
    return { phone: account.phone, lid: `${account.lid}@lid` };
  }
  if (phoneRoute !== null && phoneRoute[2] === 'history') {
    // The history the phone offers its next linked device at its first login (history.ts).
    const account = world.account(digits(decodeURIComponent(phoneRoute[1]!), 'phone'));
    const count = (name: keyof typeof HISTORY_LIMITS, fallback?: number) => {
      const value = body[name] ?? fallback;
      const max = HISTORY_LIMITS[name];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < (name === 'chats' ? 1 : 0) || value > max)
        throw new ControlError(400, `${name} must be a whole number up to ${max}`);
      return value;
    };
    account.history = { messages: count('messages'), chats: count('chats'), old: count('old', 0) };
    return { ...account.history };
  }
  if (path === '/control/scan') {
    if (typeof body.qr !== 'string') throw new ControlError(400, 'qr must be the text of the QR code');
    return hub.pairing.scan(body.qr, digits(body.phone, 'phone'));
  }
  if (path === '/control/pair') {
    if (typeof body.code !== 'string') throw new ControlError(400, 'code must be a string');
    await hub.pairing.typeCode(body.code, digits(body.phone, 'phone'));
    return { paired: true };
  }
  if (path === '/control/groups') {
    if (typeof body.subject !== 'string' || body.subject === '')
      throw new ControlError(400, 'subject must be a non-empty string');
    if (!Array.isArray(body.members) || body.members.length === 0)
      throw new ControlError(400, 'members must list phone numbers');
    const members = body.members.map((m) => digits(m, 'members[]'));
    return { id: hub.groups.create(body.subject, members[0]!, members.slice(1)).id };
  }
  if (path === '/control/drop') {
    const code = body.code === undefined ? undefined : Number(body.code);
    if (code !== undefined && !Number.isInteger(code)) throw new ControlError(400, 'code must be a number');
    const streams = [...hub.streams];
    for (const stream of streams) stream.end(code);
    return { dropped: streams.length };
  }
  if (path === '/control/faults') {
    for (const key of Object.keys(world.faults)) delete world.faults[key as keyof Faults];
    for (const key of ['ack_delay_ms', 'receipt_delay_ms', 'slow_upload_ms'] as const)
      if (body[key] !== undefined) {
        if (typeof body[key] !== 'number' || body[key] < 0)
          throw new ControlError(400, `${key} must be a number of milliseconds`);
        world.faults[key] = body[key];
      }
    for (const key of ['drop_acks', 'restart_loop'] as const)
      if (body[key] !== undefined) world.faults[key] = body[key] === true;
    return { ...world.faults };
  }
  if (phoneRoute === null) throw new ControlError(404, 'no such route');
  const account = world.account(digits(decodeURIComponent(phoneRoute[1]!), 'phone'));
  if (phoneRoute[2] === 'read') {
    if (typeof body.message_id !== 'string') throw new ControlError(400, 'message_id must be a string');
    if (!phoneReads(hub, account, body.message_id)) throw new ControlError(404, 'the phone has no such message');
    return { read: true };
  }
  if (phoneRoute[2] === 'votes') return phoneVotes(hub, account, body);
  // A reaction, edit or delete (changes.ts).
  if ((CHANGE_ROUTES as readonly string[]).includes(phoneRoute[2] ?? ''))
    return phoneChanges(hub, account, phoneRoute[2] as ChangeRoute, body);
  if (phoneRoute[2] === 'reveal') {
    // The server tells the linked devices of `to` the number behind this phone's LID.
    const to = world.account(digits(body.to, 'to'));
    let told = 0;
    for (const target of world.devices(to))
      if (target.kind === 'companion') {
        world.deliver(target.companion, linkedProfilesNotification(account));
        told++;
      }
    return { told };
  }
  if (phoneRoute[2] === 'unlink') {
    let unlinked = 0;
    for (const companion of account.companions.values()) {
      if (companion.removed) continue;
      companion.removed = true;
      unlinked++;
      companion.stream?.end(401, 'device_removed');
    }
    return { unlinked };
  }
  // A message from the phone.
  if (typeof body.to !== 'string') throw new ControlError(400, 'to must be a number or a group id');
  const message = await buildPhoneMessage(hub, body);
  // The media host's copy expired before the device fetched it; the phone still has it (`reupload`) or not (`gone`).
  if (body.media_expired !== undefined) {
    if (body.media_expired !== 'reupload' && body.media_expired !== 'gone')
      throw new ControlError(400, 'media_expired must be "reupload" or "gone"');
    if (!expireOnHost(hub, message, body.media_expired === 'reupload' ? 'kept' : 'deleted'))
      throw new ControlError(400, 'media_expired needs media');
  }
  const id = messageId();
  const text = typeof body.text === 'string' ? body.text : typeof body.caption === 'string' ? body.caption : undefined;
  if (body.to.endsWith('@g.us')) {
    const group = world.groups.get(body.to);
    if (group === undefined) throw new ControlError(404, 'no such group');
    if (!group.participants.includes(account.phone))
      throw new ControlError(400, 'the phone is not a member of the group');
    await hub.groups.phoneSends(account, group, id, message, { lidOnly: body.lid === true });
  } else {
    const recipient = world.account(digits(body.to, 'to'));
    // A broadcast list (or the status list) is addressed like a group: the list is `from`, the phone its
    // participant, with its number beside its LID (decode-wa-message.js reads `participant_pn` for LID addressing).
    const list = body.status === true ? 'status@broadcast' : body.broadcast === true ? `${Date.now()}@broadcast` : null;
    const attrs: Record<string, string> =
      list !== null
        ? {
            from: list,
            participant: account.primary.lidJid,
            participant_pn: account.primary.pnJid,
            addressing_mode: 'lid',
          }
        : {
            from: account.primary.lidJid,
            ...(body.lid === true ? {} : { sender_pn: account.primary.pnJid }),
            addressing_mode: 'lid',
          };
    // Listed before it leaves: the device's acknowledgement (or refusal) of it is noted on this entry.
    account.primary.sent.push({ id, to: list ?? body.to, ...(text === undefined ? {} : { text }) });
    const withName = { ...attrs, notify: `Phone ${account.phone}` };
    world.resendable.set(`${account.phone}/${id}`, { message, attrs: withName, resends: 0 });
    if (world.resendable.size > MAX_RESENDABLE) world.resendable.delete(world.resendable.keys().next().value!);
    for (const target of world.devices(recipient))
      if (target.kind === 'companion') await phoneSendsTo(hub, account, target, id, message, withName);
    return { id };
  }
  account.primary.sent.push({ id, to: body.to, ...(text === undefined ? {} : { text }) });
  return { id };
}
