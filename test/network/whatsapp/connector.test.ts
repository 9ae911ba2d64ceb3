// Issue 12: the WhatsApp connector's contract, driven by a scripted fake of
// the Baileys socket (Baileys' own event buffer, real protobuf payloads) over
// the real store (both SQLite and PostgreSQL) and the real sealing.
import { Readable } from 'node:stream';
import {
  generateWAMessageContent,
  generateWAMessageFromContent,
  proto,
  type AnyMessageContent,
  type MiscMessageGenerationOptions,
} from 'baileys';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { SqlNetworkStateStore } from '../../../src/devices/network-state.js';
import {
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSendError,
  NetworkSettingRefusedError,
  NetworkUnavailableError,
  type Network,
  type NetworkConnection,
} from '../../../src/network/network.js';
import { createWhatsAppNetwork } from '../../../src/network/whatsapp/index.js';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';
import type { Store } from '../../../src/store/store.js';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { waitFor as poll } from '../../helpers/wait.js';
import { BytesSource, MiB, Recorder, sleep, waitFor } from '../helpers.js';
import { queryError, type FakeSocket, type FakeWhatsApp } from './fake-socket.js';
import { ackEverySend, KEYS, SLOW, upsert, WhatsAppHarness, SCRIPTED_PRE_KEYS } from './harness.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import type { NetworkStateStore, NetworkStateWriter } from '../../../src/network/state.js';

const ME = '4915100000001';
const FRIEND = '4917600000002';
const ULID = '01JQZ3Y8N5S7T9V1W3X5Y7Z9A2';
/** Content generation for text needs no upload; a test that reaches it has built media by mistake. */
const noUpload = async (): Promise<never> => {
  throw new Error('no uploads in these tests');
};

/** Waits (with a generous deadline) until an async probe answers something other than undefined/false. */
function until(probe: () => Promise<unknown>, what = 'condition'): Promise<unknown> {
  return poll(probe, (value) => value !== undefined && value !== false, { timeoutMs: SLOW, what });
}

describe.skipIf(noStoreAvailable)('WhatsApp connector (scripted socket)', () => {
  let harness: WhatsAppHarness;
  let store: Store;
  let wa: FakeWhatsApp;
  /** The harness's network (a test that puts another in its place puts it in the harness too). */
  let network: Network;

  beforeEach(async () => {
    harness = await WhatsAppHarness.open();
    ({ store, wa, network } = harness);
  });
  afterEach(async () => {
    await harness.close();
  });

  async function sessionRows(session: string): Promise<number> {
    const rows = await store.db
      .selectFrom('network_auth')
      .select('session_id')
      .where('session_id', '=', session)
      .execute();
    return rows.length;
  }

  /** Pairs through QR → pair-success → 515 restart → open; returns the open connection on the second socket. */
  async function pairDevice(): Promise<{
    connection: NetworkConnection;
    rec: Recorder;
    socket: FakeSocket;
    session: string;
  }> {
    const { recorder: rec, connection, socket, session } = await harness.pair(1, ME);
    return { connection, rec, socket, session };
  }

  async function reconnect(
    session: string,
  ): Promise<{ connection: NetworkConnection; rec: Recorder; socket: FakeSocket }> {
    const { recorder: rec, connection, socket } = await harness.reconnect(session);
    return { connection, rec, socket };
  }

  describe('pairing and connecting', () => {
    it('QR, pair-success, the restart the network asks for, open: qr → paired → connected, nothing more', async () => {
      const rec = new Recorder();
      network.connect({ deviceId: 1, session: null }, rec.handler);
      expect(rec.events).toEqual([]);
      const first = await wa.socket(0);
      first.connection({ qr: 'qr-1' });
      first.connection({ qr: 'qr-2' });
      first.pairSuccess(`${ME}:7@s.whatsapp.net`);
      first.close(515, 'Stream Errored (restart required)');
      const second = await wa.socket(1);
      // The same credentials go on: the restart is internal.
      expect(second.auth.creds.me?.id).toBe(`${ME}:7@s.whatsapp.net`);
      second.connection({ connection: 'open' });
      await rec.wait('connected', undefined, 0, SLOW);
      expect(rec.types()).toEqual(['qr', 'qr', 'paired', 'connected']);
      expect(rec.of('qr').map((e) => e.qr)).toEqual(['qr-1', 'qr-2']);
      const paired = rec.of('paired')[0]!;
      expect(paired).toMatchObject({ phone: ME, session: expect.stringMatching(/^wa1\.[0-9a-f-]{36}$/) });
      expect(rec.of('connected')[0]).toEqual({ type: 'connected', phone: ME });
      // The restart closed the first socket without a trace.
      expect(first.ended).toBe(true);
    });

    it('a stored session reconnects without a QR, with the credentials saved at pairing', async () => {
      const { connection, session } = await pairDevice();
      connection.close();
      const { rec, socket } = await reconnect(session);
      expect(rec.types()).toEqual(['connected']);
      expect(socket.auth.creds.me?.id).toBe(`${ME}:7@s.whatsapp.net`);
    });

    it('paired as soon as the phone confirms: a failed restart after it keeps the session (a later reconnect)', async () => {
      const rec = new Recorder();
      network.connect({ deviceId: 1, session: null }, rec.handler);
      const first = await wa.socket(0);
      first.connection({ qr: 'qr-1' });
      first.pairSuccess(`${ME}:7@s.whatsapp.net`);
      const paired = await rec.wait('paired', undefined, 0, SLOW);
      first.close(515, 'Stream Errored (restart required)');
      const second = await wa.socket(1);
      second.close(428, 'Connection Closed');
      await rec.wait('disconnected', undefined, 0, SLOW);
      expect(rec.types()).toEqual(['qr', 'paired', 'disconnected']);
      expect(await sessionRows(paired.session)).toBe(1);
      const { rec: back } = await reconnect(paired.session);
      expect(back.types()).toEqual(['connected']);
    });

    it('a new socket when the QR codes of an attempt run out (408 while pairing), with no event', async () => {
      const rec = new Recorder();
      network.connect({ deviceId: 1, session: null }, rec.handler);
      const first = await wa.socket(0);
      first.connection({ qr: 'qr-1' });
      first.close(408, 'QR refs attempts ended');
      const second = await wa.socket(1);
      second.connection({ qr: 'qr-3' });
      await rec.wait('qr', (e) => e.qr === 'qr-3', 0, SLOW);
      expect(rec.types()).toEqual(['qr', 'qr']);
    });

    it('a pairing code, in groups of four, only while pairing', async () => {
      const rec = new Recorder();
      const connection = network.connect({ deviceId: 1, session: null }, rec.handler);
      const socket = await wa.socket(0);
      socket.connection({ qr: 'qr-1' });
      expect(await connection.requestPairingCode(ME)).toBe('ABCD-2345');
      expect(socket.calls.filter((c) => c.method === 'requestPairingCode')).toEqual([
        { method: 'requestPairingCode', args: [ME] },
      ]);
      const { connection: open } = await pairDevice();
      await expect(open.requestPairingCode(ME)).rejects.toBeInstanceOf(NetworkUnavailableError);
    });

    it('a pairing attempt that ends leaves no state behind', async () => {
      const rec = new Recorder();
      const connection = network.connect({ deviceId: 1, session: null }, rec.handler);
      await wa.socket(0);
      await until(async () => (await store.db.selectFrom('network_auth').selectAll().execute()).length === 1);
      connection.close();
      await until(async () => (await store.db.selectFrom('network_auth').selectAll().execute()).length === 0);
    });
  });

  describe('close codes (docs/internals.md, WhatsApp and sandbox accounts)', () => {
    it.each([
      [401, 'logged_out', undefined],
      [403, 'logged_out', undefined],
      [402, 'logged_out', undefined],
      [406, 'logged_out', undefined],
      [440, 'disconnected', 'replaced'],
      [405, 'disconnected', 'outdated'],
      [408, 'disconnected', 'backoff'],
      [428, 'disconnected', 'backoff'],
      [500, 'disconnected', 'backoff'],
      [503, 'disconnected', 'backoff'],
      [411, 'logged_out', undefined],
    ] as const)('close %i → %s (%s), then nothing', async (code, type, retry) => {
      const { session } = await pairDevice();
      const { rec, socket } = await reconnect(session);
      socket.close(code, 'closed by the test');
      const event = await rec.wait(type, undefined, 0, SLOW);
      expect(event.reason.startsWith(`closed by the test (${code})`)).toBe(true);
      if (type === 'disconnected') expect(rec.of('disconnected')[0]!.retry).toBe(retry);
      // Logged out: the session's stored state is gone; a drop keeps it.
      await until(async () => ((await sessionRows(session)) === (type === 'logged_out' ? 0 : 1) ? true : undefined));
      socket.connection({ connection: 'open' });
      socket.close(401);
      await sleep(30);
      expect(rec.types()).toEqual(['connected', type]);
      expect(socket.ended).toBe(true);
    });

    it('a transient close while pairing ends the attempt (the QR request fails) and leaves no state', async () => {
      const rec = new Recorder();
      network.connect({ deviceId: 1, session: null }, rec.handler);
      const socket = await wa.socket(0);
      socket.close(408, 'Connection Failure');
      await rec.wait('disconnected', undefined, 0, SLOW);
      await until(async () =>
        (await store.db.selectFrom('network_auth').selectAll().execute()).length === 0 ? true : undefined,
      );
    });

    it('close() emits nothing, also when the socket closes afterwards', async () => {
      const { connection, rec, socket } = await pairDevice();
      const before = rec.events.length;
      connection.close();
      socket.close(401);
      socket.ev.emit('messages.upsert', {
        type: 'notify',
        messages: [
          upsert({ key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'X1' }, message: { conversation: 'late' } }),
        ],
      });
      await sleep(30);
      expect(rec.events).toHaveLength(before);
      await expect(
        connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'x' } }),
      ).rejects.toBeInstanceOf(NetworkUnavailableError);
    });

    it('logout: the network closes with 401, the connection ends logged_out, the state is deleted', async () => {
      const { connection, rec, session } = await pairDevice();
      await connection.logout();
      await rec.wait('logged_out', undefined, 0, SLOW);
      await until(async () => ((await sessionRows(session)) === 0 ? true : undefined));
    });
  });

  describe('closing', () => {
    /** The same store, with every session write held at a gate the test closes and opens. */
    async function gatedWrites(): Promise<{ close(): void; open(): void }> {
      let gate: Promise<void> = Promise.resolve();
      let release = (): void => undefined;
      const states = new SqlNetworkStateStore(store, systemClock);
      const gated: NetworkStateStore = Object.assign(Object.create(states) as NetworkStateStore, {
        claim: async (session: string, options: { readonly create: boolean }) => {
          const writer = await states.claim(session, options);
          if (writer === null) return null;
          return Object.assign(Object.create(writer) as NetworkStateWriter, {
            write: async (change: Parameters<NetworkStateWriter['write']>[0]) => {
              await gate;
              return writer.write(change);
            },
          });
        },
      });
      await network.close();
      network = harness.network = createWhatsAppNetwork({
        states: gated,
        keys: KEYS,
        logger: pino({ level: 'silent' }),
        factory: wa.factory,
        ackTimeoutMs: 300,
        preKeysAtPairing: SCRIPTED_PRE_KEYS,
      });
      return {
        close: () => void (gate = new Promise<void>((resolve) => (release = resolve))),
        open: () => release(),
      };
    }

    async function storedName(session: string): Promise<string | undefined> {
      const row = await store.db
        .selectFrom('network_auth')
        .select('creds')
        .where('session_id', '=', session)
        .executeTakeFirstOrThrow();
      const plain = new Sealer(KEYS).open(Buffer.from(row.creds!), { session, kind: 'creds', id: '' }).plain;
      return JSON.parse(plain.toString('utf8')).me.name;
    }

    it('settled() resolves only once a credentials write begun before close() is stored', async () => {
      const gate = await gatedWrites();
      const { connection, socket, session } = await pairDevice();

      gate.close();
      socket.auth.creds.me = { ...socket.auth.creds.me!, name: 'renamed before the close' };
      socket.ev.emit('creds.update', { me: socket.auth.creds.me });
      connection.close();
      let settled = false;
      const settling = connection.settled!().then(() => (settled = true));
      await sleep(100);
      expect(settled).toBe(false);
      gate.open();
      await settling;
      expect(await storedName(session)).toBe('renamed before the close');
    });

    it('the next connection of a session reads it only after the writes of the one before are stored', async () => {
      const gate = await gatedWrites();
      const { socket, session } = await pairDevice();

      gate.close();
      socket.auth.creds.me = { ...socket.auth.creds.me!, name: 'renamed before the drop' };
      socket.ev.emit('creds.update', { me: socket.auth.creds.me });
      socket.close(428, 'Connection Closed');
      const before = wa.sockets.length;
      const rec = new Recorder();
      network.connect({ deviceId: 1, session }, rec.handler);
      await sleep(100);
      // No socket yet: the session is not read while the write of before the drop is held.
      expect(wa.sockets.length).toBe(before);
      gate.open();
      const next = await wa.socket(before);
      expect(next.auth.creds.me?.name).toBe('renamed before the drop');
      next.connection({ connection: 'open' });
      await rec.wait('connected', undefined, 0, SLOW);
      expect(await storedName(session)).toBe('renamed before the drop');
    });
  });

  describe('stored sessions that cannot be used are logged out, never a fresh QR', () => {
    it('tampered credentials', async () => {
      const { connection, session } = await pairDevice();
      connection.close();
      const row = await store.db.selectFrom('network_auth').select('creds').executeTakeFirstOrThrow();
      const creds = Buffer.from(row.creds!);
      creds[40] = creds[40]! ^ 1;
      await store.db.updateTable('network_auth').set({ creds }).execute();
      const rec = new Recorder();
      const before = wa.sockets.length;
      network.connect({ deviceId: 1, session }, rec.handler);
      const event = await rec.wait('logged_out', undefined, 0, SLOW);
      expect(event.reason).toBe('the stored session can no longer be read');
      expect(wa.sockets).toHaveLength(before);
      expect(rec.types()).toEqual(['logged_out']);
    });

    it.each([
      [
        'a session that no longer exists',
        'wa1.00000000-0000-0000-0000-000000000000',
        'the stored session no longer exists',
      ],
      ["another network's session", 'sbx1.abc', 'the stored session is not a WhatsApp session'],
    ])('%s', async (_what, session, reason) => {
      const rec = new Recorder();
      network.connect({ deviceId: 1, session }, rec.handler);
      expect((await rec.wait('logged_out', undefined, 0, SLOW)).reason).toBe(reason);
      expect(wa.sockets).toHaveLength(0);
    });
  });

  describe('sending', () => {
    it('carries our id as the network id and is sent only once the server acknowledged it', async () => {
      const { connection, socket } = await pairDevice();
      let settled = false;
      const sending = connection
        .sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'hello' } })
        .then(() => (settled = true));
      await waitFor(() => socket.calls.some((c) => c.method === 'sendMessage') || undefined);
      const [jid, content, options] = socket.calls.find((c) => c.method === 'sendMessage')!.args;
      expect(jid).toBe(`${FRIEND}@s.whatsapp.net`);
      // `linkPreview: null`: the library must not fetch a preview itself (the gateway makes them, guarded).
      expect(content).toEqual({ text: 'hello', linkPreview: null });
      expect(options).toEqual({ messageId: toNetworkId(ULID), mediaUploadTimeoutMs: 60_000 });
      await sleep(30);
      expect(settled).toBe(false);
      socket.ack(toNetworkId(ULID)!);
      await sending;
      // The same id again (a retry after a lost answer): not sent a second time.
      await connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'hello' } });
      expect(socket.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(1);
      // Kept sealed for the network's resend requests.
      const sent = await store.db.selectFrom('network_sent').selectAll().executeTakeFirstOrThrow();
      expect(sent.message_id).toBe(toNetworkId(ULID));
      expect(sent.acked_at).not.toBeNull();
      expect(Buffer.from(sent.payload).includes(Buffer.from('hello'))).toBe(false);
      const resend = await socket.options.getMessage({
        id: toNetworkId(ULID)!,
        remoteJid: jid as string,
        fromMe: true,
      });
      expect(resend?.conversation).toBe('hello');
      expect(await socket.options.getMessage({ id: 'NOT-OURS', fromMe: true })).toBeUndefined();
    });

    it('no acknowledgement in time is a transient failure; a refusing acknowledgement a permanent one', async () => {
      const { connection, socket } = await pairDevice();
      const late = await connection
        .sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'a' } })
        .catch((e: unknown) => e);
      expect(late).toBeInstanceOf(NetworkSendError);
      expect(late).toMatchObject({ kind: 'transient', message: 'the network did not acknowledge the message in time' });
      const other = '01JQZ3Y8N5S7T9V1W3X5Y7Z9A3';
      socket.onSend = async (_jid, _content, options) => {
        setImmediate(() => socket.ack(options.messageId!, '463'));
      };
      const refused = await connection
        .sendMessage({ id: other, to: FRIEND, content: { type: 'chat', text: 'b' } })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ kind: 'permanent', message: 'refused by the network (463)' });
    });

    it('the ack wait starts when the stanza has left: a slow upload does not eat it', async () => {
      const { connection, socket } = await pairDevice();
      // The send itself (a media upload) takes longer than the whole ack window (300 ms here).
      socket.onSend = async (_jid, _content, options) => {
        await sleep(600);
        setImmediate(() => socket.ack(options.messageId!));
      };
      await connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'big' } });
      expect(socket.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(1);
    });

    it('an ack after the wait ran out still counts: `sent`, recorded, and a retry sends nothing twice', async () => {
      const { connection, socket, rec: recorder } = await pairDevice();
      const late = await connection
        .sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'a' } })
        .catch((e: unknown) => e);
      expect(late).toMatchObject({ kind: 'transient' });
      socket.ack(toNetworkId(ULID)!);
      const status = await recorder.wait('message_status', undefined, 0, SLOW);
      expect(status).toMatchObject({ id: ULID, status: 'sent' });
      const sent = await store.db.selectFrom('network_sent').selectAll().executeTakeFirstOrThrow();
      expect(sent.acked_at).not.toBeNull();
      await connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'a' } });
      expect(socket.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(1);
    });

    it('mentions go as WhatsApp ids beside the text, and a reply quotes our own message as it was sent', async () => {
      const { connection, socket } = await pairDevice();
      ackEverySend(socket);
      await connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'first' } });
      const reply = '01JQZ3Y8N5S7T9V1W3X5Y7Z9A4';
      await connection.sendMessage({
        id: reply,
        to: FRIEND,
        content: { type: 'chat', text: 'hi @4917600000003' },
        mentions: ['4917600000003'],
        quoted: { id: ULID, fromMe: true, chat: FRIEND, text: 'what the gateway stored' },
      });
      const [jid, content, options] = socket.calls.filter((c) => c.method === 'sendMessage')[1]!.args as [
        string,
        AnyMessageContent,
        MiscMessageGenerationOptions,
      ];
      expect(content).toEqual({
        text: 'hi @4917600000003',
        linkPreview: null,
        mentions: ['4917600000003@s.whatsapp.net'],
      });
      expect(options.messageId).toBe(toNetworkId(reply));
      // The quoted message as it was sent (from the sent records), under its network id.
      expect(options.quoted?.key).toEqual({
        remoteJid: `${FRIEND}@s.whatsapp.net`,
        fromMe: true,
        id: toNetworkId(ULID),
      });
      expect(options.quoted?.message?.conversation).toBe('first');
      // What Baileys builds from it: the reply's context names the quoted message and the mention.
      const built = generateWAMessageFromContent(jid, await generateWAMessageContent(content, { upload: noUpload }), {
        userJid: `${ME}@s.whatsapp.net`,
        quoted: options.quoted!,
      });
      expect(built.message?.extendedTextMessage?.contextInfo).toMatchObject({
        stanzaId: toNetworkId(ULID),
        participant: `${ME}@s.whatsapp.net`,
        quotedMessage: { conversation: 'first' },
        mentionedJid: ['4917600000003@s.whatsapp.net'],
      });
    });

    it('a reaction goes as Baileys’ react on the reacted-to message’s key, with no quote; Baileys builds a reactionMessage', async () => {
      const { connection, socket } = await pairDevice();
      ackEverySend(socket);
      const group = '120363000000000001@g.us';
      await connection.sendMessage({
        id: ULID,
        to: group,
        content: {
          type: 'reaction',
          emoji: '👍',
          target: { id: 'ABCDEF0123', fromMe: false, chat: group, author: FRIEND, text: 'question?' },
        },
      });
      await connection.sendMessage({
        id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9A6',
        to: FRIEND,
        content: {
          type: 'reaction',
          emoji: '❤️',
          target: { id: 'XYZ987', fromMe: false, chat: FRIEND, author: FRIEND },
        },
      });
      const [inGroup, inChat] = socket.calls.filter((c) => c.method === 'sendMessage');
      const [jid, content, options] = inGroup!.args as [string, AnyMessageContent, MiscMessageGenerationOptions];
      expect(jid).toBe(group);
      // In a group the key names the member who wrote the message; in a chat with one person the chat is enough.
      expect(content).toEqual({
        react: {
          text: '👍',
          key: { remoteJid: group, fromMe: false, id: 'ABCDEF0123', participant: `${FRIEND}@s.whatsapp.net` },
        },
      });
      expect(options).toEqual({ messageId: toNetworkId(ULID), mediaUploadTimeoutMs: 60_000 });
      expect(inChat!.args[1]).toEqual({
        react: { text: '❤️', key: { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: false, id: 'XYZ987' } },
      });
      const built = await generateWAMessageContent(content, { upload: noUpload });
      expect(built.reactionMessage).toMatchObject({
        text: '👍',
        key: { remoteJid: group, id: 'ABCDEF0123', participant: `${FRIEND}@s.whatsapp.net` },
      });
    });

    it('a reply to a group member’s message quotes it by its network id, author and text; media mention too', async () => {
      const { connection, socket } = await pairDevice();
      ackEverySend(socket);
      const group = '120363000000000001@g.us';
      await connection.sendMessage({
        id: ULID,
        to: group,
        content: {
          type: 'image',
          media: new BytesSource(new Uint8Array([1, 2])),
          mimetype: 'image/png',
          caption: '@4917600000002',
        },
        mentions: [FRIEND],
        quoted: { id: 'ABCDEF0123', fromMe: false, chat: group, author: FRIEND, text: 'question?' },
      });
      const [jid, content, options] = socket.calls.find((c) => c.method === 'sendMessage')!.args as [
        string,
        AnyMessageContent,
        MiscMessageGenerationOptions,
      ];
      expect(jid).toBe(group);
      expect(content).toMatchObject({ caption: '@4917600000002', mentions: [`${FRIEND}@s.whatsapp.net`] });
      expect(options.quoted?.key).toEqual({
        remoteJid: group,
        fromMe: false,
        id: 'ABCDEF0123',
        participant: `${FRIEND}@s.whatsapp.net`,
      });
      expect(options.quoted?.message?.conversation).toBe('question?');
      const built = generateWAMessageFromContent(jid, proto.Message.create({ extendedTextMessage: { text: 'x' } }), {
        userJid: `${ME}@s.whatsapp.net`,
        quoted: options.quoted!,
      });
      expect(built.message?.extendedTextMessage?.contextInfo).toMatchObject({
        stanzaId: 'ABCDEF0123',
        participant: `${FRIEND}@s.whatsapp.net`,
        quotedMessage: { conversation: 'question?' },
      });
      // A document carries its mentions in its context (Baileys' type for it has no `mentions`).
      await connection.sendMessage({
        id: '01JQZ3Y8N5S7T9V1W3X5Y7Z9A5',
        to: group,
        content: {
          type: 'file',
          media: new BytesSource(new Uint8Array([1])),
          mimetype: 'application/pdf',
          fileName: 'a.pdf',
        },
        mentions: [FRIEND],
      });
      const [, document] = socket.calls.filter((c) => c.method === 'sendMessage')[1]!.args as [
        string,
        AnyMessageContent,
      ];
      expect(document).toMatchObject({ contextInfo: { mentionedJid: [`${FRIEND}@s.whatsapp.net`] } });
    });

    it('a refusal after the acknowledgement is a failed status for our message', async () => {
      const { connection, rec, socket } = await pairDevice();
      ackEverySend(socket);
      await connection.sendMessage({ id: ULID, to: FRIEND, content: { type: 'chat', text: 'x' } });
      socket.ack(toNetworkId(ULID)!, '463');
      const failed = await rec.wait('message_status', (e) => e.status === 'failed', 0, SLOW);
      expect(failed).toMatchObject({ id: ULID, status: 'failed', reason: 'refused by the network (463)' });
    });

    it('every content type maps to the library content; list and template go as text', async () => {
      const { connection, socket } = await pairDevice();
      ackEverySend(socket);
      const media = new BytesSource(new Uint8Array([1, 2, 3]));
      const ids = Array.from({ length: 6 }, (_, i) => `01JQZ3Y8N5S7T9V1W3X5Y7Z9B${i}`);
      await connection.sendMessage({
        id: ids[0]!,
        to: FRIEND,
        content: { type: 'image', media, mimetype: 'image/png', caption: 'c', viewOnce: true },
      });
      await connection.sendMessage({
        id: ids[1]!,
        to: FRIEND,
        content: { type: 'file', media, mimetype: 'application/pdf', fileName: 'a.pdf' },
      });
      await connection.sendMessage({
        id: ids[2]!,
        to: FRIEND,
        content: { type: 'location', latitude: 1.5, longitude: 2.5, name: 'N' },
      });
      await connection.sendMessage({
        id: ids[3]!,
        to: '120363000000000001@g.us',
        content: {
          type: 'list',
          title: 'Menu',
          text: 'Pick one',
          footer: 'Thanks',
          buttonText: 'Open',
          sections: [
            {
              title: 'Food',
              rows: [
                { title: 'Rice', rowId: 'r1', description: 'hot' },
                { title: 'Tea', rowId: 'r2' },
              ],
            },
          ],
        },
      });
      const sent = socket.calls.filter((c) => c.method === 'sendMessage').map((c) => c.args);
      const stream = { stream: expect.any(Readable) };
      expect(sent[0]![1]).toEqual({ image: stream, mimetype: 'image/png', caption: 'c', viewOnce: true });
      expect(sent[1]![1]).toEqual({ document: stream, mimetype: 'application/pdf', fileName: 'a.pdf' });
      // Each send read the media anew, through the stream.
      expect(media.opened).toBe(2);
      expect(socket.uploads.map((u) => [...u.bytes])).toEqual([
        [1, 2, 3],
        [1, 2, 3],
      ]);
      expect(sent[2]![1]).toEqual({ location: { degreesLatitude: 1.5, degreesLongitude: 2.5, name: 'N' } });
      expect(sent[3]![0]).toBe('120363000000000001@g.us');
      expect(sent[3]![1]).toEqual({
        text: '*Menu*\nPick one\n\n*Food*\n1. Rice — hot\n2. Tea\n\n_Thanks_\n\nReply with a number to choose.',
      });
    });

    it('media goes to the library as a stream read chunk by chunk, and a retry reads it again', async () => {
      const { connection, socket } = await pairDevice();
      const bytes = Buffer.alloc(5.5 * MiB, 7);
      const media = new BytesSource(bytes);
      // How far the source was read ahead of the library's reading, at most (`base`: pulled by earlier reads).
      let lead = 0;
      let base = 0;
      socket.onUploadChunk = (read) => (lead = Math.max(lead, media.pulled - base - read));
      let attempt = 0;
      socket.onSend = async (_jid, _content, options) => {
        attempt += 1;
        if (attempt === 1) throw new Error('upload failed');
        setImmediate(() => socket.ack(options.messageId!));
      };
      const message = { id: ULID, to: FRIEND, content: { type: 'video', media, mimetype: 'video/mp4' } } as const;
      await expect(connection.sendMessage(message)).rejects.toMatchObject({ kind: 'transient' });
      base = media.pulled;
      await connection.sendMessage(message);
      expect(media.opened).toBe(2);
      for (const upload of socket.uploads) {
        expect(upload.bytes.equals(bytes)).toBe(true);
        expect(upload.chunkSizes.length).toBeGreaterThanOrEqual(6);
        expect(Math.max(...upload.chunkSizes)).toBeLessThanOrEqual(MiB);
      }
      expect(lead).toBeLessThanOrEqual(2 * MiB);
    });

    it('typing: available first (WhatsApp shows typing only then), composing, then paused and unavailable', async () => {
      const { connection, socket } = await pairDevice();
      await connection.sendTyping(FRIEND, 40);
      await waitFor(
        () => socket.calls.some((c) => c.method === 'sendPresenceUpdate' && c.args[0] === 'unavailable') || undefined,
      );
      expect(socket.calls.filter((c) => c.method === 'sendPresenceUpdate').map((c) => c.args)).toEqual([
        ['available', undefined],
        ['composing', `${FRIEND}@s.whatsapp.net`],
        ['paused', `${FRIEND}@s.whatsapp.net`],
        ['unavailable', undefined],
      ]);
    });
  });

  describe('receipts', () => {
    const key = (id: string | undefined, fromMe = true) => ({ remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe, id });

    it('delivered, read, and a collapsed delivered+read records both; others are ignored', async () => {
      const { rec, socket } = await pairDevice();
      const ours = toNetworkId(ULID)!;
      socket.ev.emit('messages.update', [
        { key: key(ours), update: { status: proto.WebMessageInfo.Status.DELIVERY_ACK } },
      ]);
      socket.ev.emit('messages.update', [{ key: key(ours), update: { status: proto.WebMessageInfo.Status.READ } }]);
      // Buffered (a reconnect backlog): Baileys collapses the two into one READ.
      const other = toNetworkId('01JQZ3Y8N5S7T9V1W3X5Y7Z9A3')!;
      socket.ev.buffer();
      socket.ev.emit('messages.update', [
        { key: key(other), update: { status: proto.WebMessageInfo.Status.DELIVERY_ACK } },
      ]);
      socket.ev.emit('messages.update', [{ key: key(other), update: { status: proto.WebMessageInfo.Status.READ } }]);
      socket.ev.flush();
      // Not ours, or not from us: nothing.
      socket.ev.emit('messages.update', [{ key: key('3EB0ABCDEF0123456789'), update: { status: 3 } }]);
      socket.ev.emit('messages.update', [{ key: key(ours, false), update: { status: 4 } }]);
      await waitFor(() => rec.of('message_status').length >= 4 || undefined);
      await sleep(30);
      expect(rec.of('message_status').map((e) => [e.id, e.status])).toEqual([
        [ULID, 'delivered'],
        [ULID, 'delivered'],
        [ULID, 'read'],
        ['01JQZ3Y8N5S7T9V1W3X5Y7Z9A3', 'delivered'],
        ['01JQZ3Y8N5S7T9V1W3X5Y7Z9A3', 'read'],
      ]);
    });
  });

  describe('incoming', () => {
    it.each([
      [
        'a text (notify)',
        'notify',
        { key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I1' }, message: { conversation: 'hi' } },
        { from: FRIEND, content: { type: 'chat', text: 'hi' } },
      ],
      [
        'a text that arrived while offline (append)',
        'append',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I2' },
          message: { extendedTextMessage: { text: 'while away' } },
        },
        { from: FRIEND, content: { type: 'chat', text: 'while away' } },
      ],
      [
        'an image with caption in a disappearing chat',
        'notify',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I3' },
          message: { ephemeralMessage: { message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look' } } } },
        },
        { content: { type: 'image', mimetype: 'image/jpeg', caption: 'look' } },
      ],
      [
        'a document',
        'notify',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I4' },
          message: { documentMessage: { mimetype: 'application/pdf' } },
        },
        { content: { type: 'file', mimetype: 'application/pdf' } },
      ],
      [
        'a location',
        'notify',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I5' },
          message: { locationMessage: { degreesLatitude: 1.25, degreesLongitude: 2.5 } },
        },
        { content: { type: 'location', latitude: 1.25, longitude: 2.5 } },
      ],
      [
        'a sender known by LID, with its number beside it',
        'notify',
        {
          key: { remoteJid: '99887766@lid', remoteJidAlt: `${FRIEND}@s.whatsapp.net`, id: 'I6' },
          message: { conversation: 'lid' },
        },
        { from: FRIEND, fromLid: '99887766@lid' },
      ],
      [
        'a sender known by LID alone: delivered under the LID (lid.ts)',
        'notify',
        { key: { remoteJid: '99887766@lid', id: 'I10' }, message: { conversation: 'who' } },
        { from: '99887766@lid', fromLid: '99887766@lid' },
      ],
      [
        'a group message from a LID participant',
        'notify',
        {
          key: {
            remoteJid: '120363000000000001@g.us',
            participant: '99887766@lid',
            participantAlt: `${FRIEND}@s.whatsapp.net`,
            id: 'I7',
          },
          message: { conversation: 'in group' },
        },
        { from: FRIEND, group: '120363000000000001@g.us' },
      ],
      [
        "a broadcast list's message: from its owner, not a group",
        'notify',
        {
          key: {
            remoteJid: '1760000000@broadcast',
            participant: '99887766@lid',
            participantAlt: `${FRIEND}@s.whatsapp.net`,
            id: 'I9',
          },
          message: { conversation: 'to my list' },
        },
        { from: FRIEND, content: { type: 'chat', text: 'to my list' } },
      ],
      [
        'a list reply',
        'notify',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'I8' },
          message: { listResponseMessage: { title: 'Rice', singleSelectReply: { selectedRowId: 'r1' } } },
        },
        { content: { type: 'list_reply', rowId: 'r1', title: 'Rice' } },
      ],
    ] as const)('%s', async (_what, type, message, expected) => {
      const { rec, socket } = await pairDevice();
      socket.ev.emit('messages.upsert', { type, messages: [upsert(message)] });
      const event = await rec.wait('incoming_message', undefined, 0, SLOW);
      expect(event).toMatchObject({ id: message.key.id, at: new Date(1_760_000_000_000), ...expected });
    });

    it.each([
      [
        'our own message',
        { key: { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: true, id: 'S1' }, message: { conversation: 'mine' } },
      ],
      [
        'a decryption placeholder (no content yet)',
        {
          key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'S2' },
          messageStubType: 2,
          messageStubParameters: ['No session'],
        },
      ],
      [
        'a status broadcast',
        {
          key: { remoteJid: 'status@broadcast', participant: `${FRIEND}@s.whatsapp.net`, id: 'S3' },
          message: { conversation: 'story' },
        },
      ],
      [
        'a newsletter',
        { key: { remoteJid: '120363000000000009@newsletter', id: 'S4' }, message: { conversation: 'news' } },
      ],
    ])('ignores %s', async (_what, message) => {
      const { rec, socket } = await pairDevice();
      socket.ev.emit('messages.upsert', { type: 'notify', messages: [upsert(message)] });
      // A real message after it arrives alone: the ignored one produced nothing.
      socket.ev.emit('messages.upsert', {
        type: 'notify',
        messages: [
          upsert({ key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'REAL' }, message: { conversation: 'x' } }),
        ],
      });
      await rec.wait('incoming_message', undefined, 0, SLOW);
      expect(rec.of('incoming_message').map((e) => e.id)).toEqual(['REAL']);
    });

    it('history sync upserts are not incoming messages', async () => {
      const { rec, socket } = await pairDevice();
      socket.ev.emit('messages.upsert', {
        type: 'append' as const,
        messages: [
          upsert({ key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'H1' }, message: { conversation: 'old' } }),
        ],
      });
      // `append` counts (offline delivery); history arrives as messaging-history.set, which is not listened to.
      await rec.wait('incoming_message', undefined, 0, SLOW);
      socket.ev.emit('messaging-history.set', {
        chats: [],
        contacts: [],
        messages: [
          upsert({ key: { remoteJid: `${FRIEND}@s.whatsapp.net`, id: 'H2' }, message: { conversation: 'older' } }),
        ],
        isLatest: true,
      });
      await sleep(30);
      expect(rec.of('incoming_message').map((e) => e.id)).toEqual(['H1']);
    });
  });

  describe('groups and numbers', () => {
    const GROUP = '120363000000000001@g.us';
    function seedGroup(socket: FakeSocket, size = 3): void {
      socket.groups[GROUP] = {
        id: GROUP,
        subject: 'Team',
        desc: 'About',
        owner: undefined,
        participants: [
          { id: `${ME}@s.whatsapp.net`, admin: 'superadmin' },
          { id: '55443322@lid', phoneNumber: `${FRIEND}@s.whatsapp.net`, admin: 'admin' },
          { id: '11223344@lid', admin: null },
          ...Array.from({ length: size - 3 }, (_, i) => ({
            id: `62800000${String(i).padStart(5, '0')}@s.whatsapp.net`,
            admin: null,
          })),
        ],
      };
    }

    it('lists and gets groups as numbers (a LID participant by its number, one with none left out)', async () => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket);
      const groups = await connection.listGroups();
      expect(groups).toEqual([
        {
          id: GROUP,
          subject: 'Team',
          description: 'About',
          capacity: 1024,
          participants: [
            { phone: ME, role: 'superadmin' },
            { phone: FRIEND, role: 'admin' },
          ],
          settings: { onlyAdminsCanSend: false, onlyAdminsCanEdit: false, disappearingSeconds: 0 },
        },
      ]);
      expect(await connection.getGroup(GROUP)).toEqual(groups[0]);
      // announcement, locked and the ephemeral timer, as WhatsApp reports them.
      Object.assign(socket.groups[GROUP]!, { announce: true, restrict: true, ephemeralDuration: 604_800 });
      expect((await connection.getGroup(GROUP)).settings).toEqual({
        onlyAdminsCanSend: true,
        onlyAdminsCanEdit: true,
        disappearingSeconds: 604_800,
      });
    });

    it('a sync does not set off a storm: the echo of a listing is not a change, a real change is', async () => {
      const { connection, rec, socket } = await pairDevice();
      seedGroup(socket);
      await connection.listGroups();
      await sleep(20);
      expect(rec.of('groups_changed')).toEqual([]);
      socket.ev.emit('groups.update', [{ id: GROUP, subject: 'Renamed' }]);
      socket.ev.emit('group-participants.update', { id: GROUP, author: '', participants: [], action: 'add' });
      await waitFor(() => rec.of('groups_changed').length === 2 || undefined);
      expect(rec.of('groups_changed').map((e) => e.groupIds)).toEqual([[GROUP], [GROUP]]);
    });

    it.each([
      ['200', { ok: true }],
      ['403', { ok: false, code: 'PRIVACY_SETTINGS' }],
      ['409', { ok: false, code: 'ALREADY_MEMBER' }],
      ['404', { ok: false, code: 'USER_NOT_FOUND' }],
      ['401', { ok: false, code: 'USER_BLOCKED' }],
      ['419', { ok: false, code: 'GROUP_FULL' }],
      ['500', { ok: false, code: 'RATE_LIMITED' }],
      ['429', { ok: false, code: 'RATE_LIMITED' }],
      ['408', { ok: false, code: 'RATE_LIMITED' }],
      ['400', { ok: false, code: 'INVALID_NUMBER' }],
      ['999', { ok: false, code: 'RATE_LIMITED' }],
    ])('add participant: status %s', async (status, outcome) => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket);
      socket.addResults = [{ status, jid: `${FRIEND}@s.whatsapp.net` }];
      expect(await connection.addParticipants(GROUP, [FRIEND])).toEqual([
        expect.objectContaining({ phone: FRIEND, ...outcome }),
      ]);
    });

    it('add participant: 500 in a full group is GROUP_FULL', async () => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket, 1024);
      socket.addResults = [{ status: '500', jid: `${FRIEND}@s.whatsapp.net` }];
      expect(await connection.addParticipants(GROUP, [FRIEND])).toEqual([
        expect.objectContaining({ code: 'GROUP_FULL' }),
      ]);
    });

    it.each([
      [403, NetworkForbiddenError],
      [401, NetworkForbiddenError],
      [404, NetworkNotFoundError],
    ])('a request refused with %i', async (code, kind) => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket);
      socket.groupFailure = Object.assign(new Error('refused'), { data: code });
      await expect(connection.addParticipants(GROUP, [FRIEND])).rejects.toBeInstanceOf(kind);
      await expect(connection.updateGroup(GROUP, { subject: 'x' })).rejects.toBeInstanceOf(kind);
    });

    it('creates a group and reads it back; updates subject and description', async () => {
      const { connection, socket } = await pairDevice();
      socket.refusedAtCreate.add('4917600000003@s.whatsapp.net');
      const created = await connection.createGroup('New', [FRIEND, '4917600000003']);
      expect(created.subject).toBe('New');
      expect(created.participants.map((p) => p.phone)).toEqual([FRIEND]);
      expect(created.notAdded).toEqual([{ phone: '4917600000003', code: 'USER_NOT_FOUND' }]);
      expect(socket.calls.some((c) => c.method === 'groupMetadata' && c.args[0] === created.id)).toBe(true);
      const updated = await connection.updateGroup(created.id, { subject: 'Newer', description: 'D' });
      expect(updated).toMatchObject({ subject: 'Newer', description: 'D' });
    });

    it('changes settings one query each, in the seam’s order: ephemeral, locked, announcement', async () => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket);
      const updated = await connection.updateGroup(GROUP, {
        onlyAdminsCanSend: true,
        onlyAdminsCanEdit: true,
        disappearingSeconds: 7_776_000,
        subject: 'Quiet',
      });
      const queries = socket.calls
        .filter(
          (c) =>
            c.method.startsWith('groupUpdate') ||
            c.method.startsWith('groupSetting') ||
            c.method === 'groupToggleEphemeral',
        )
        .map((c) => [c.method, ...c.args]);
      expect(queries).toEqual([
        ['groupUpdateSubject', GROUP, 'Quiet'],
        ['groupToggleEphemeral', GROUP, 7_776_000],
        ['groupSettingUpdate', GROUP, 'locked'],
        ['groupSettingUpdate', GROUP, 'announcement'],
      ]);
      expect(updated).toMatchObject({
        subject: 'Quiet',
        settings: { onlyAdminsCanSend: true, onlyAdminsCanEdit: true, disappearingSeconds: 7_776_000 },
      });
      socket.calls.length = 0;
      const reopened = await connection.updateGroup(GROUP, {
        onlyAdminsCanSend: false,
        onlyAdminsCanEdit: false,
        disappearingSeconds: 0,
      });
      expect(socket.calls.filter((c) => c.method !== 'groupMetadata').map((c) => [c.method, ...c.args])).toEqual([
        ['groupToggleEphemeral', GROUP, 0],
        ['groupSettingUpdate', GROUP, 'unlocked'],
        ['groupSettingUpdate', GROUP, 'not_announcement'],
      ]);
      expect(reopened.settings).toEqual({ onlyAdminsCanSend: false, onlyAdminsCanEdit: false, disappearingSeconds: 0 });
    });

    it('a refused setting names itself and what was changed before it; a refusal of everything is forbidden', async () => {
      const { connection, socket } = await pairDevice();
      seedGroup(socket);
      socket.refuseSetting.set('announcement', queryError(400, 'bad-request'));
      const refused = await connection
        .updateGroup(GROUP, { subject: 'S', onlyAdminsCanSend: true, disappearingSeconds: 86_400 })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(NetworkSettingRefusedError);
      expect(refused).toMatchObject({
        setting: 'onlyAdminsCanSend',
        applied: ['subject', 'disappearingSeconds'],
        message: 'refused by the network (400)',
      });
      socket.refuseSetting.set('announcement', queryError(403, 'not-authorized'));
      await expect(connection.updateGroup(GROUP, { onlyAdminsCanSend: true })).rejects.toBeInstanceOf(
        NetworkForbiddenError,
      );
      const late = await connection
        .updateGroup(GROUP, { subject: 'T', onlyAdminsCanSend: true })
        .catch((e: unknown) => e);
      expect(late).toMatchObject({
        setting: 'onlyAdminsCanSend',
        applied: ['subject'],
        message: 'not allowed for this device (403)',
      });
      socket.refuseSetting.set('ephemeral', queryError(404, 'item-not-found'));
      await expect(connection.updateGroup(GROUP, { disappearingSeconds: 86_400 })).rejects.toBeInstanceOf(
        NetworkNotFoundError,
      );
    });

    it('number checks match the answers back to the numbers asked', async () => {
      const { connection, socket } = await pairDevice();
      // The network answers by JID, in its own order, and only for registered numbers.
      socket.numbers = [
        { jid: `${FRIEND}@s.whatsapp.net`, exists: true },
        { jid: '5511987654321@s.whatsapp.net', exists: true },
      ];
      expect(await connection.checkNumbers([FRIEND, '551187654321'])).toEqual([
        { phone: FRIEND, registered: true },
        // Brazil's ninth digit: answered under the rewritten number, matched as the one left over.
        { phone: '551187654321', registered: true },
      ]);
      // With two numbers left over, an unmatched answer is ambiguous: neither is claimed registered.
      expect(await connection.checkNumbers(['4915199999999', FRIEND, '551187654321'])).toEqual([
        { phone: '4915199999999', registered: false },
        { phone: FRIEND, registered: true },
        { phone: '551187654321', registered: false },
      ]);
    });
  });

  it('deletes records of sent messages after the retention, in the background, and stops with the network', async () => {
    const states = new SqlNetworkStateStore(store, systemClock);
    const writer = (await states.claim('wa1.prune', { create: true }))!;
    await writer.recordSent('OLD', Buffer.of(1), Date.now() - 15 * 24 * 60 * 60 * 1000);
    await writer.recordSent('NEW', Buffer.of(2), Date.now());
    const pruning = createWhatsAppNetwork({
      states,
      keys: KEYS,
      logger: pino({ level: 'silent' }),
      factory: wa.factory,
      pruneIntervalMs: 20,
    });
    try {
      await until(async () => (await writer.readSent('OLD')) === null, 'the old record deleted');
      expect(await writer.readSent('NEW')).not.toBeNull();
    } finally {
      await pruning.close();
    }
  });
});
