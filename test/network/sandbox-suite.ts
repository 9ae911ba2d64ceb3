/**
 * The behaviour suite every sandbox transport must pass: the same tests run
 * against the in-process network and against the WebSocket client + server.
 * Not a test file itself; the *.unit.test.ts files call sandboxSuite().
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NetworkForbiddenError,
  NetworkNotFoundError,
  NetworkSendError,
  NetworkSettingRefusedError,
  NetworkUnavailableError,
} from '../../src/network/network.js';
import { SandboxControlError } from '../../src/network/sandbox-control.js';
import type { SandboxOptions } from '../../src/network/sandbox/state.js';
import type { SandboxNetwork } from './helpers.js';
import { BytesSource, MiB, pair, reconnect, Recorder, sleep, waitFor } from './helpers.js';

export type MakeNetwork = (options: SandboxOptions) => Promise<{ network: SandboxNetwork; close(): Promise<void> }>;

const DEVICE = '4915112345678';
const OTHER_DEVICE = '4915187654321';
const FRIEND = '4917612345678';
const FAST: SandboxOptions = { qrRotateMs: 5000, deliveryDelayMs: 3, readDelayMs: 3 };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

export function sandboxSuite(label: string, make: MakeNetwork): void {
  describe(`sandbox behaviour (${label})`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function start(options: SandboxOptions = FAST): Promise<SandboxNetwork> {
      const made = await make(options);
      cleanups.push(() => made.close());
      return made.network;
    }

    describe('pairing', () => {
      it('emits a WhatsApp-like QR asynchronously and rotates it', async () => {
        const network = await start({ ...FAST, qrRotateMs: 50 });
        const rec = new Recorder();
        network.connect({ deviceId: 1, session: null }, rec.handler);
        expect(rec.events).toHaveLength(0);
        const first = await rec.wait('qr');
        const second = await rec.wait('qr', () => true, 1);
        expect(second.qr).not.toBe(first.qr);
        for (const { qr } of [first, second]) {
          expect(qr).toMatch(/^2@[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+$/);
          expect(qr.length).toBeGreaterThanOrEqual(100);
          expect(qr.length).toBeLessThanOrEqual(160);
        }
        const err = await rejection(network.sandbox.scan(first.qr, DEVICE));
        expect(err).toBeInstanceOf(SandboxControlError);
        expect(err).toMatchObject({ status: 400, message: 'Invalid QR code' });
      });

      it('pairs on a scan of the current QR: paired, then connected', async () => {
        const network = await start();
        const rec = new Recorder();
        network.connect({ deviceId: 1, session: null }, rec.handler);
        const { qr } = await rec.wait('qr');
        await expect(network.sandbox.scan(qr, DEVICE)).resolves.toEqual({ device_phone: DEVICE });
        await rec.wait('connected');
        expect(rec.types()).toEqual(['qr', 'paired', 'connected']);
        expect(rec.of('paired')[0]).toMatchObject({ phone: DEVICE, session: expect.any(String) });
        const again = await rejection(network.sandbox.scan(qr, DEVICE));
        expect(again).toMatchObject({ status: 400, message: 'Invalid QR code' });
      });

      it('refuses unknown codes, malformed phones and the wrong phone', async () => {
        const network = await start();
        await expect(network.sandbox.scan('2@nope', DEVICE)).rejects.toMatchObject({
          status: 400,
          message: 'Invalid QR code',
        });
        const rec = new Recorder();
        network.connect({ deviceId: 1, session: null, expectedPhone: DEVICE }, rec.handler);
        const { qr } = await rec.wait('qr');
        const malformed = await rejection(network.sandbox.scan(qr, '+49 151'));
        expect(malformed).toBeInstanceOf(SandboxControlError);
        expect(malformed).toMatchObject({ status: 400, message: 'Invalid phone number format' });
        const mismatch = await rejection(network.sandbox.scan(qr, OTHER_DEVICE));
        expect(mismatch).toMatchObject({
          status: 400,
          message: 'Phone number mismatch',
          detail: `this device must be paired from ${DEVICE}`,
        });
        await expect(network.sandbox.scan(qr, DEVICE)).resolves.toEqual({ device_phone: DEVICE });
      });

      it('reconnects with a session, replaces an older connection, refuses an unknown session', async () => {
        const network = await start();
        const first = await pair(network, 1, DEVICE);
        first.connection.close();
        const second = await reconnect(network, 1, first.session);
        expect(second.phone).toBe(DEVICE);
        const third = await reconnect(network, 1, first.session);
        await second.recorder.wait('disconnected', (e) => e.reason === 'replaced');
        await expect(second.connection.listGroups()).rejects.toBeInstanceOf(NetworkUnavailableError);
        await expect(third.connection.listGroups()).resolves.toEqual([]);
        const bogus = new Recorder();
        network.connect({ deviceId: 2, session: 'not-a-session' }, bogus.handler);
        await bogus.wait('logged_out');
      });

      it('logout ends the session; close is quiet; closed connections reject', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await device.connection.logout();
        await device.recorder.wait('logged_out');
        await expect(
          device.connection.sendMessage({ id: 'm', to: FRIEND, content: { type: 'chat', text: 'x' } }),
        ).rejects.toBeInstanceOf(NetworkUnavailableError);
        const after = new Recorder();
        network.connect({ deviceId: 1, session: device.session }, after.handler);
        await after.wait('logged_out');

        const quiet = await pair(network, 2, OTHER_DEVICE);
        const before = quiet.recorder.events.length;
        quiet.connection.close();
        await network.sandbox.disconnectDevice(2, { logout: false }).catch(() => undefined);
        await sleep(20);
        expect(quiet.recorder.events).toHaveLength(before);
        await expect(quiet.connection.listGroups()).rejects.toBeInstanceOf(NetworkUnavailableError);
      });

      it('disconnectDevice drops (session kept) or logs out (session ended)', async () => {
        const network = await start();
        const device = await pair(network, 7, DEVICE);
        await network.sandbox.disconnectDevice(7, { logout: false });
        await device.recorder.wait('disconnected');
        const back = await reconnect(network, 7, device.session);
        await network.sandbox.disconnectDevice(7, { logout: true });
        await back.recorder.wait('logged_out');
        const after = new Recorder();
        network.connect({ deviceId: 7, session: device.session }, after.handler);
        await after.wait('logged_out');
        const missing = await rejection(network.sandbox.disconnectDevice(99, { logout: false }));
        expect(missing).toBeInstanceOf(SandboxControlError);
        expect(missing).toMatchObject({ status: 404, message: 'Device not connected' });
      });

      it('pairs by code (docs/internals.md, WhatsApp and sandbox accounts): the code is bound to the number that asked, and replaced by a new one', async () => {
        const network = await start();
        const rec = new Recorder();
        const connection = network.connect({ deviceId: 1, session: null }, rec.handler);
        await rec.wait('qr');
        const first = await connection.requestPairingCode(DEVICE);
        expect(first).toMatch(/^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/);
        const code = await connection.requestPairingCode(DEVICE);
        expect(code).not.toBe(first);
        // The earlier code stopped working when a new one was asked for.
        await expect(network.sandbox.pair(first, DEVICE)).rejects.toMatchObject({
          status: 400,
          message: 'Invalid pairing code',
        });
        await expect(network.sandbox.pair(code, FRIEND)).rejects.toMatchObject({
          status: 400,
          message: 'Phone number mismatch',
        });
        await expect(network.sandbox.pair(code, '12')).rejects.toMatchObject({
          status: 400,
          message: 'Invalid phone number format',
        });
        // Typed in lower case, as a user might: still the code.
        await expect(network.sandbox.pair(code.toLowerCase(), DEVICE)).resolves.toEqual({ device_phone: DEVICE });
        await rec.wait('connected');
        expect(rec.types()).toEqual(['qr', 'paired', 'connected']);
        expect(rec.of('paired')[0]).toMatchObject({ phone: DEVICE });
        // Used once: the code and the QR of the attempt are gone, and a paired connection has no code to give.
        await expect(network.sandbox.pair(code, DEVICE)).rejects.toMatchObject({ message: 'Invalid pairing code' });
        await expect(network.sandbox.scan(rec.of('qr')[0]!.qr, DEVICE)).rejects.toMatchObject({
          message: 'Invalid QR code',
        });
        await expect(connection.requestPairingCode(DEVICE)).rejects.toBeInstanceOf(NetworkUnavailableError);
      });

      it('a pairing code follows the expected phone, and dies with its attempt', async () => {
        const network = await start();
        const rec = new Recorder();
        const connection = network.connect({ deviceId: 1, session: null, expectedPhone: DEVICE }, rec.handler);
        await rec.wait('qr');
        const code = await connection.requestPairingCode(FRIEND);
        await expect(network.sandbox.pair(code, FRIEND)).rejects.toMatchObject({
          status: 400,
          message: 'Phone number mismatch',
        });
        connection.close();
        await expect(network.sandbox.pair(code, FRIEND)).rejects.toMatchObject({ message: 'Invalid pairing code' });
        expect(rec.types()).toEqual(['qr']);
      });
    });

    describe('messages', () => {
      it('sends, delivers into the inbox and reads (auto_read and readMessage)', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await device.connection.sendTyping(FRIEND, 1200);
        await device.connection.sendMessage({ id: 'm1', to: FRIEND, content: { type: 'chat', text: 'hello' } });
        await device.recorder.wait('message_status', (e) => e.id === 'm1' && e.status === 'delivered');
        const phone = await network.sandbox.getPhone(FRIEND);
        expect(phone.inbox).toEqual([
          expect.objectContaining({ message_id: 'm1', from: DEVICE, type: 'chat', content: { text: 'hello' } }),
        ]);
        expect(phone.inbox[0]?.typing_ms).toBe(1200);
        expect(phone.inbox[0]?.read_at).toBeNull();
        expect(device.recorder.of('message_status').filter((e) => e.status === 'read')).toHaveLength(0);

        await network.sandbox.readMessage(FRIEND, 'm1');
        const read = await device.recorder.wait('message_status', (e) => e.id === 'm1' && e.status === 'read');
        expect(read.at).toBeInstanceOf(Date);
        expect((await network.sandbox.getPhone(FRIEND)).inbox[0]?.read_at).toEqual(expect.any(String));
        await expect(network.sandbox.readMessage(FRIEND, 'nope')).rejects.toMatchObject({
          status: 404,
          message: 'Message not found',
        });

        const reader = '4917699998888';
        await network.sandbox.upsertPhone({ phone: reader, auto_read: true, name: 'Reader' });
        await device.connection.sendMessage({ id: 'm2', to: reader, content: { type: 'chat', text: 'hi' } });
        await device.recorder.wait('message_status', (e) => e.id === 'm2' && e.status === 'read');
        const statuses = device.recorder.of('message_status').filter((e) => e.id === 'm2');
        expect(statuses.map((e) => e.status)).toEqual(['delivered', 'read']);
      });

      it('summarises media and keeps list content as given', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const media = new Uint8Array([1, 2, 3, 4, 5]);
        await device.connection.sendMessage({
          id: 'img',
          to: FRIEND,
          content: { type: 'image', media: new BytesSource(media, 2), mimetype: 'image/png', caption: 'look' },
        });
        const sections = [{ title: 'S', rows: [{ title: 'R', rowId: 'r1' }] }];
        await device.connection.sendMessage({
          id: 'list',
          to: FRIEND,
          content: { type: 'list', title: 'T', text: 'pick', buttonText: 'Go', sections },
        });
        await device.recorder.wait('message_status', (e) => e.id === 'list');
        await device.recorder.wait('message_status', (e) => e.id === 'img');
        const { inbox } = await network.sandbox.getPhone(FRIEND);
        expect(inbox.find((e) => e.message_id === 'img')?.content).toEqual({
          mimetype: 'image/png',
          caption: 'look',
          size: 5,
          sha256: createHash('sha256').update(media).digest('hex'),
        });
        expect(inbox.find((e) => e.message_id === 'list')?.content).toEqual({
          title: 'T',
          text: 'pick',
          buttonText: 'Go',
          sections,
        });
      });

      it('carries a sticker, contact cards, a poll and a chat with its link preview (its image as a digest)', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const webp = new Uint8Array([0x52, 0x49, 0x46, 0x46, 1, 2, 3]);
        const thumbnail = Buffer.from([0xff, 0xd8, 0xff, 9, 9]);
        const contacts = [{ name: 'Ani', phone: '+6281200000001', organization: 'Toko' }];
        const preview = { url: 'https://shop.example/a', title: 'Shop', description: 'Open daily' };
        const sends = [
          { id: 'st', content: { type: 'sticker', media: new BytesSource(webp, 3), mimetype: 'image/webp' } },
          { id: 'ct', content: { type: 'contact', contacts } },
          { id: 'pl', content: { type: 'poll', name: 'Q?', options: ['A', 'B'], selectableCount: 2 } },
          {
            id: 'pv',
            content: {
              type: 'chat',
              text: 'see https://shop.example/a',
              preview: { ...preview, thumbnail: { mimetype: 'image/jpeg', base64: thumbnail.toString('base64') } },
            },
          },
        ] as const;
        for (const { id, content } of sends) await device.connection.sendMessage({ id, to: FRIEND, content });
        for (const { id } of sends) await device.recorder.wait('message_status', (e) => e.id === id);
        const { inbox } = await network.sandbox.getPhone(FRIEND);
        const seen = (id: string) => inbox.find((e) => e.message_id === id);
        expect(seen('st')).toMatchObject({
          type: 'sticker',
          content: { mimetype: 'image/webp', size: 7, sha256: createHash('sha256').update(webp).digest('hex') },
        });
        expect(seen('ct')).toMatchObject({ type: 'contact', content: { contacts } });
        expect(seen('pl')).toMatchObject({
          type: 'poll',
          content: { name: 'Q?', options: ['A', 'B'], selectableCount: 2 },
        });
        expect(seen('pv')?.content).toEqual({
          text: 'see https://shop.example/a',
          preview: {
            ...preview,
            thumbnail: {
              mimetype: 'image/jpeg',
              size: thumbnail.length,
              sha256: createHash('sha256').update(thumbnail).digest('hex'),
            },
          },
        });
      });

      it('takes media larger than any frame, read chunk by chunk, and keeps only its size and digest', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        // Larger than the WebSocket server takes in one frame: it has to travel in chunks.
        const bytes = randomBytes(9 * MiB + 123);
        const source = new BytesSource(bytes);
        await device.connection.sendMessage({
          id: 'big',
          to: FRIEND,
          content: { type: 'file', media: source, mimetype: 'application/pdf', fileName: 'big.pdf' },
        });
        await device.recorder.wait('message_status', (e) => e.id === 'big' && e.status === 'delivered');
        expect(source).toMatchObject({ opened: 1, pulled: bytes.length });
        const { inbox } = await network.sandbox.getPhone(FRIEND);
        expect(inbox.find((e) => e.message_id === 'big')?.content).toEqual({
          mimetype: 'application/pdf',
          fileName: 'big.pdf',
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        });
      });

      it('reads media again for a retry, and refuses a send whose media cannot be read', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const bytes = new Uint8Array(3 * MiB).fill(9);
        const send = (id: string, to: string, media: BytesSource) =>
          device.connection.sendMessage({ id, to, content: { type: 'audio', media, mimetype: 'audio/ogg' } });

        // A rate-limited recipient refuses the first attempt; the retry opens the media anew.
        const limited = '4917600000004';
        const source = new BytesSource(bytes);
        await expect(send('again', limited, source)).rejects.toMatchObject({ kind: 'transient' });
        await send('again', limited, source);
        await device.recorder.wait('message_status', (e) => e.id === 'again' && e.status === 'delivered');
        expect(source.opened).toBe(2);
        const [entry] = (await network.sandbox.getPhone(limited)).inbox;
        expect(entry?.content).toMatchObject({ size: bytes.length });

        // The media's bytes fail part-way: the send fails with that error and nothing arrives; the same id
        // can be sent again once the bytes can be read.
        const broken = new BytesSource(bytes, MiB, 2 * MiB);
        const err = await rejection(send('broken', FRIEND, broken));
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toBe('the media could not be read');
        await send('broken', FRIEND, new BytesSource(bytes));
        await device.recorder.wait('message_status', (e) => e.id === 'broken' && e.status === 'delivered');
        const arrived = (await network.sandbox.getPhone(FRIEND)).inbox.filter((e) => e.message_id === 'broken');
        expect(arrived.map((e) => e.content)).toEqual([
          {
            mimetype: 'audio/ogg',
            size: bytes.length,
            sha256: createHash('sha256').update(bytes).digest('hex'),
          },
        ]);
      });

      it('is idempotent by message id', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const message = { id: 'same', to: FRIEND, content: { type: 'chat', text: 'once' } } as const;
        await device.connection.sendMessage(message);
        await device.connection.sendMessage(message);
        await device.recorder.wait('message_status', (e) => e.id === 'same');
        await device.connection.sendMessage(message);
        await sleep(20);
        expect((await network.sandbox.getPhone(FRIEND)).inbox).toHaveLength(1);
        expect(device.recorder.of('message_status').filter((e) => e.status === 'delivered')).toHaveLength(1);
      });

      it('applies the magic numbers', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const send = (id: string, to: string) =>
          device.connection.sendMessage({ id, to, content: { type: 'chat', text: id } });

        const unregistered = await rejection(send('a', '4917600000000'));
        expect(unregistered).toBeInstanceOf(NetworkSendError);
        expect(unregistered).toMatchObject({ kind: 'permanent', message: 'recipient is not registered' });

        await send('b', '4917600000001');
        const limited = await rejection(send('e', '4917600000004'));
        expect(limited).toBeInstanceOf(NetworkSendError);
        expect(limited).toMatchObject({ kind: 'transient', message: 'rate limited by the network' });
        await send('e', '4917600000004');
        await device.recorder.wait('message_status', (e) => e.id === 'e' && e.status === 'delivered');

        await send('d', '4917600000003');
        await sleep(20);
        expect(device.recorder.of('message_status').map((e) => e.id)).toEqual(['e']);
        expect((await network.sandbox.getPhone('4917600000001')).inbox).toHaveLength(0);
        expect((await network.sandbox.getPhone('4917600000003')).inbox).toHaveLength(0);
        const offline = await network.sandbox.getPhone('4917600000003');
        expect(offline).toMatchObject({ online: false, registered: true });
        await network.sandbox.upsertPhone({ phone: '4917600000003', online: true });
        await device.recorder.wait('message_status', (e) => e.id === 'd' && e.status === 'delivered');
        expect((await network.sandbox.getPhone('4917600000003')).inbox).toHaveLength(1);

        const magic = await network.sandbox.getPhone('4917655550002');
        expect(magic).toMatchObject({ privacy: 'nobody', registered: true, inbox: [] });
        await expect(network.sandbox.getPhone('4917655551234')).rejects.toMatchObject({ status: 404 });
        expect(await device.connection.checkNumbers(['4917600000000', FRIEND, '0123'])).toEqual([
          { phone: '4917600000000', registered: false },
          { phone: FRIEND, registered: true },
          { phone: '0123', registered: false },
        ]);
      });

      it('queues statuses while the device is offline and emits them after connected', async () => {
        const network = await start({ ...FAST, deliveryDelayMs: 20 });
        const device = await pair(network, 1, DEVICE);
        await device.connection.sendMessage({ id: 'q', to: FRIEND, content: { type: 'chat', text: 'later' } });
        device.connection.close();
        await waitFor(async () => (await network.sandbox.getPhone(FRIEND)).inbox.length > 0);
        await sleep(10);
        const back = await reconnect(network, 1, device.session);
        await back.recorder.wait('message_status', (e) => e.id === 'q');
        expect(back.recorder.types()).toEqual(['connected', 'message_status']);
        expect(device.recorder.of('message_status')).toHaveLength(0);
      });

      it('delivers a phone-sent message as incoming to the paired device', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const { message_id } = await network.sandbox.sendFromPhone(FRIEND, DEVICE, 'hey');
        const incoming = await device.recorder.wait('incoming_message');
        expect(incoming).toMatchObject({ id: message_id, from: FRIEND, content: { type: 'chat', text: 'hey' } });
        expect(incoming.at).toBeInstanceOf(Date);
        await expect(network.sandbox.sendFromPhone(FRIEND, OTHER_DEVICE, 'x')).rejects.toMatchObject({
          status: 404,
          message: 'Device not found',
        });
      });

      it('delivers any incoming kind a phone sends, with the message it replies to', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const poll = { type: 'poll' as const, name: 'Lunch?', options: ['Rice', 'Soup'], selectableCount: 2 };
        const { message_id } = await network.sandbox.sendFromPhone(FRIEND, DEVICE, {
          content: poll,
          replyTo: { id: 'our-id', fromMe: true },
        });
        const incoming = await device.recorder.wait('incoming_message', (e) => e.id === message_id);
        expect(incoming).toMatchObject({
          from: FRIEND,
          content: poll,
          quoted: { networkId: 'our-id', sentId: 'our-id' },
        });
        const card = { type: 'contact' as const, contacts: [{ name: 'Ana', phones: ['6281111111111'] }] };
        const second = await network.sandbox.sendFromPhone(FRIEND, DEVICE, {
          content: card,
          replyTo: { id: message_id, fromMe: false },
        });
        const reply = await device.recorder.wait('incoming_message', (e) => e.id === second.message_id);
        expect(reply).toMatchObject({ content: card, quoted: { networkId: message_id } });
        expect((reply as { quoted: object }).quoted).not.toHaveProperty('sentId');
        await expect(
          network.sandbox.sendFromPhone(FRIEND, DEVICE, { content: { type: 'hologram' } } as never),
        ).rejects.toMatchObject({ status: 400, message: 'Invalid message' });
      });

      it('a phone calls the device: incoming_call, rejected on the network as the phone sees it; offline is 409', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const placed = await network.sandbox.callFromPhone(FRIEND, { video: true }, { session: device.session });
        expect(placed).toMatchObject({ to: DEVICE, video: true, status: 'ringing' });
        const heard = await device.recorder.wait('incoming_call', (e) => e.id === placed.id);
        expect(heard).toEqual({ type: 'incoming_call', id: placed.id, from: FRIEND, video: true });
        await device.connection.rejectCall({ id: placed.id, from: FRIEND, video: true });
        expect((await network.sandbox.getPhone(FRIEND)).calls).toEqual([{ ...placed, status: 'rejected' }]);
        // A call unknown to the network is no error.
        await device.connection.rejectCall({ id: 'NOPE', from: FRIEND, video: false });

        const group = await network.sandbox.callFromPhone(
          FRIEND,
          { group: '120363000000000042@g.us' },
          { session: device.session },
        );
        expect(await device.recorder.wait('incoming_call', (e) => e.id === group.id)).toMatchObject({
          video: false,
          group: '120363000000000042@g.us',
        });
        await expect(
          network.sandbox.callFromPhone(FRIEND, { video: 'yes' } as never, { session: device.session }),
        ).rejects.toMatchObject({ status: 400, message: 'Invalid call' });
        await expect(network.sandbox.callFromPhone(FRIEND, {}, { session: 'unknown' })).rejects.toMatchObject({
          status: 404,
        });
        device.connection.close();
        await expect(network.sandbox.callFromPhone(FRIEND, {}, { session: device.session })).rejects.toMatchObject({
          status: 409,
          message: 'Device not connected',
        });
      });

      it('archives, pins and mutes a chat for the device’s number; the number’s view shows it; unknown chats refused', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const until = new Date('2031-01-02T03:04:05.000Z');
        await device.connection.modifyChat(
          FRIEND,
          { archived: true, mutedUntil: until },
          { id: 'LAST1', fromMe: true, at: new Date() },
        );
        await device.connection.modifyChat(FRIEND, { pinned: true }, null);
        expect((await network.sandbox.getPhone(DEVICE)).chats).toEqual([
          {
            chat: FRIEND,
            archived: true,
            pinned: true,
            muted_until: until.toISOString(),
            last_message_id: null,
            changed_at: expect.any(String),
          },
        ]);
        await device.connection.modifyChat(FRIEND, { mutedUntil: null, archived: false }, null);
        expect((await network.sandbox.getPhone(DEVICE)).chats[0]).toMatchObject({ archived: false, muted_until: null });
        await expect(
          device.connection.modifyChat('120363000000000099@g.us', { pinned: true }, null),
        ).rejects.toBeInstanceOf(NetworkNotFoundError);
        await expect(device.connection.modifyChat('12', { pinned: true }, null)).rejects.toBeInstanceOf(
          NetworkNotFoundError,
        );
        device.connection.close();
        await expect(device.connection.modifyChat(FRIEND, { pinned: false }, null)).rejects.toBeInstanceOf(
          NetworkUnavailableError,
        );
      });

      it('the device’s own phone changes a chat: the device hears chat_changed (a mute as a time), queued while offline', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const until = new Date('2031-01-02T03:04:05.000Z');
        const settings = await network.sandbox.changeChatOnPhone(
          DEVICE,
          FRIEND,
          { archived: true, muted_until: until.toISOString() },
          { session: device.session },
        );
        expect(settings).toMatchObject({
          chat: FRIEND,
          archived: true,
          pinned: false,
          muted_until: until.toISOString(),
        });
        const heard = await device.recorder.wait('chat_changed', () => true);
        expect(heard).toEqual({ type: 'chat_changed', chat: FRIEND, change: { archived: true, mutedUntil: until } });
        expect(heard.change.mutedUntil).toBeInstanceOf(Date);
        await expect(
          network.sandbox.changeChatOnPhone(FRIEND, DEVICE, { pinned: true }, { session: device.session }),
        ).rejects.toMatchObject({ status: 404, message: 'Device not found' });
        await expect(
          network.sandbox.changeChatOnPhone(
            DEVICE,
            '120363000000000099@g.us',
            { pinned: true },
            { session: device.session },
          ),
        ).rejects.toMatchObject({ status: 404, message: 'Group not found' });

        device.connection.close();
        await network.sandbox.changeChatOnPhone(DEVICE, FRIEND, { pinned: true }, { session: device.session });
        const back = await reconnect(network, 1, device.session);
        expect(await back.recorder.wait('chat_changed', () => true)).toEqual({
          type: 'chat_changed',
          chat: FRIEND,
          change: { pinned: true },
        });
      });

      it('tells the device of a phone’s vote, and the phone shows the presence and chat states it was told', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const poll = { type: 'poll', name: 'Q?', options: ['A', 'B'], selectableCount: 1 } as const;
        await device.connection.sendMessage({ id: 'poll1', to: FRIEND, content: poll });
        await device.recorder.wait('message_status', (e) => e.id === 'poll1' && e.status === 'delivered');
        await network.sandbox.changeFromPhone(
          FRIEND,
          { target: { id: 'poll1', fromMe: true }, kind: 'vote', selected: ['B'] },
          { session: device.session },
        );
        const vote = await device.recorder.wait('poll_vote', () => true);
        expect(vote).toMatchObject({ target: { id: 'poll1', fromMe: true }, from: FRIEND, selected: ['B'] });
        expect(vote.at).toBeInstanceOf(Date);
        await expect(
          network.sandbox.changeFromPhone(
            FRIEND,
            { target: { id: 'poll1', fromMe: true }, kind: 'vote', selected: 'B' } as never,
            { session: device.session },
          ),
        ).rejects.toMatchObject({ status: 400, message: 'Invalid vote' });

        await device.connection.sendPresence('recording', FRIEND);
        await device.connection.sendPresence('available');
        await expect(device.connection.sendPresence('composing')).rejects.toThrow(/needs a chat/);
        await expect(device.connection.sendPresence('available', FRIEND)).rejects.toThrow(/not a chat state/);
        const seen = (await network.sandbox.getPhone(FRIEND)).presence;
        expect(seen.map(({ from, state }) => [from, state])).toEqual([
          [DEVICE, 'recording'],
          [DEVICE, 'available'],
        ]);
      });

      it('tells the device of a phone’s reaction, edit and delete, and refuses what the phone cannot do', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const recipient = { session: device.session };
        const { message_id } = await network.sandbox.sendFromPhone(FRIEND, DEVICE, 'typo');
        await network.sandbox.changeFromPhone(
          FRIEND,
          { target: { id: message_id, fromMe: false }, kind: 'edited', text: 'fixed' },
          recipient,
        );
        await device.connection.sendMessage({ id: 'ours', to: FRIEND, content: { type: 'chat', text: 'hi' } });
        await device.recorder.wait('message_status', (e) => e.id === 'ours' && e.status === 'delivered');
        await network.sandbox.changeFromPhone(
          FRIEND,
          { target: { id: 'ours', fromMe: true }, kind: 'reaction', emoji: '👍' },
          recipient,
        );
        await network.sandbox.changeFromPhone(
          FRIEND,
          { target: { id: message_id, fromMe: false }, kind: 'deleted' },
          recipient,
        );
        await device.recorder.wait('message_changed', (e) => e.change.kind === 'deleted');
        const changes = device.recorder.of('message_changed');
        expect(changes.map(({ target, from, change }) => ({ target, from, change }))).toEqual([
          { target: { id: message_id, fromMe: false }, from: FRIEND, change: { kind: 'edited', text: 'fixed' } },
          { target: { id: 'ours', fromMe: true }, from: FRIEND, change: { kind: 'reaction', emoji: '👍' } },
          { target: { id: message_id, fromMe: false }, from: FRIEND, change: { kind: 'deleted' } },
        ]);
        expect(changes[0]!.at).toBeInstanceOf(Date);
        // The incoming message came first: a change never overtakes it.
        expect(device.recorder.types().indexOf('incoming_message')).toBeLessThan(
          device.recorder.types().indexOf('message_changed'),
        );

        // A device's message only a phone it reached can react to; a malformed change or session is refused.
        await expect(
          network.sandbox.changeFromPhone(
            '4917600001111',
            { target: { id: 'ours', fromMe: true }, kind: 'reaction', emoji: '👍' },
            recipient,
          ),
        ).rejects.toMatchObject({ status: 404, message: 'Message not found' });
        await expect(
          network.sandbox.changeFromPhone(
            FRIEND,
            { target: { id: message_id, fromMe: false }, kind: 'edited', text: '' },
            recipient,
          ),
        ).rejects.toMatchObject({ status: 400, message: 'Invalid edit' });
        await expect(
          network.sandbox.changeFromPhone(
            FRIEND,
            { target: { id: message_id, fromMe: false }, kind: 'deleted' },
            {
              session: 'nope',
            },
          ),
        ).rejects.toMatchObject({ status: 404, message: 'Device not found' });
      });
    });

    describe('groups', () => {
      it('creates, lists, updates and notifies', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await network.sandbox.upsertPhone({ phone: FRIEND, name: 'Friend' });
        const group = await network.sandbox.createGroup('Team', [{ phone: DEVICE, admin: true }, { phone: FRIEND }]);
        expect(group.id).toMatch(/^120363\d{12}@g\.us$/);
        expect(group.participants).toEqual([
          { phone: DEVICE, role: 'superadmin' },
          { phone: FRIEND, name: 'Friend', role: null },
        ]);
        await device.recorder.wait('groups_changed', (e) => e.groupIds.includes(group.id));
        expect(await device.connection.listGroups()).toEqual([group]);
        const updated = await device.connection.updateGroup(group.id, { subject: 'Team 2', description: 'd' });
        expect(updated).toMatchObject({ subject: 'Team 2', description: 'd', capacity: 1024 });
        await device.recorder.wait('groups_changed', () => true, 1);

        const own = await device.connection.createGroup('Mine', [FRIEND, '4917600000000', 'bad']);
        expect(own.participants.map((p) => [p.phone, p.role])).toEqual([
          [DEVICE, 'superadmin'],
          [FRIEND, null],
        ]);
        expect(own.notAdded).toEqual([
          { phone: '4917600000000', code: 'USER_NOT_FOUND' },
          { phone: 'bad', code: 'INVALID_NUMBER' },
        ]);
        const { notAdded: _left, ...shown } = own;
        expect(await device.connection.getGroup(own.id)).toEqual(shown);

        await device.connection.sendMessage({ id: 'g1', to: group.id, content: { type: 'chat', text: 'all' } });
        await device.recorder.wait('message_status', (e) => e.id === 'g1');
        const inbox = (await network.sandbox.getPhone(FRIEND)).inbox;
        expect(inbox).toEqual([expect.objectContaining({ message_id: 'g1', group_id: group.id, from: DEVICE })]);
      });

      it('reports every add outcome and request-level errors', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await network.sandbox.upsertPhone({ phone: '4917611112222', privacy: 'nobody' });
        await network.sandbox.upsertPhone({ phone: '4917633334444', name: 'Ann' });
        const group = await device.connection.createGroup('G', []);
        const outcomes = await device.connection.addParticipants(group.id, [
          '12ab',
          '4917600000000',
          DEVICE,
          '4917600000001',
          '4917600000002',
          '4917611112222',
          '4917600000004',
          '4917633334444',
          '4917655556666',
        ]);
        expect(outcomes.map((o) => (o.ok ? 'OK' : o.code))).toEqual([
          'INVALID_NUMBER',
          'USER_NOT_FOUND',
          'ALREADY_MEMBER',
          'USER_BLOCKED',
          'PRIVACY_SETTINGS',
          'PRIVACY_SETTINGS',
          'RATE_LIMITED',
          'OK',
          'OK',
        ]);
        expect(outcomes[7]).toEqual({ phone: '4917633334444', ok: true, name: 'Ann' });
        for (const outcome of outcomes) if (!outcome.ok) expect(outcome.error).toEqual(expect.any(String));

        const notAdmin = await network.sandbox.createGroup('NoAdmin', [{ phone: DEVICE }, { phone: FRIEND }]);
        const forbidden = await rejection(device.connection.addParticipants(notAdmin.id, [OTHER_DEVICE]));
        expect(forbidden).toBeInstanceOf(NetworkForbiddenError);
        await expect(device.connection.updateGroup(notAdmin.id, { subject: 'x' })).rejects.toBeInstanceOf(
          NetworkForbiddenError,
        );
        const outsider = await network.sandbox.createGroup('Outside', [{ phone: FRIEND, admin: true }]);
        for (const id of [outsider.id, '120363000000000000@g.us']) {
          await expect(device.connection.getGroup(id)).rejects.toBeInstanceOf(NetworkNotFoundError);
          await expect(device.connection.addParticipants(id, [FRIEND])).rejects.toBeInstanceOf(NetworkNotFoundError);
        }
      });

      it('contacts and profiles: address book, a contact, blocking, own profile, contact_changed, a phone changing a group', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await network.sandbox.upsertPhone({ phone: FRIEND, name: 'Friend', about: 'Hi', is_business: true });
        expect(await device.connection.listContacts()).toEqual([
          { phone: FRIEND, name: 'Friend', notifyName: 'Friend', isBusiness: true },
        ]);
        expect(await device.connection.getContact(FRIEND)).toEqual({
          phone: FRIEND,
          name: 'Friend',
          about: 'Hi',
          pictureUrl: null,
          registered: true,
          blocked: false,
        });
        await device.connection.setBlocked(FRIEND, true);
        expect(await device.connection.listBlocked()).toEqual([FRIEND]);
        expect((await network.sandbox.getPhone(FRIEND)).blocked_by).toEqual([DEVICE]);
        await device.connection.setBlocked(FRIEND, false);
        expect(await device.connection.listBlocked()).toEqual([]);
        expect(await device.connection.updateProfile({ name: 'Me', about: 'Mine' })).toEqual({
          name: 'Me',
          about: 'Mine',
          pictureUrl: null,
        });
        expect(await device.connection.getProfile()).toMatchObject({ name: 'Me' });
        await network.sandbox.upsertPhone({ phone: FRIEND, picture_url: 'https://pics.example/f.jpg' });
        expect(await device.recorder.wait('contact_changed')).toEqual({
          type: 'contact_changed',
          phone: FRIEND,
          picture: true,
        });
        const group = await network.sandbox.createGroup('Changed', [{ phone: FRIEND, admin: true }, { phone: DEVICE }]);
        await network.sandbox.changeGroupFromPhone(FRIEND, group.id, { subject: 'Renamed' });
        expect(
          await device.recorder.wait('groups_changed', (e) => e.detail !== undefined && e.groupIds.includes(group.id)),
        ).toEqual({ type: 'groups_changed', groupIds: [group.id], detail: { by: FRIEND } });
        expect((await device.connection.getGroup(group.id)).subject).toBe('Renamed');
        expect(
          await rejection(device.connection.setGroupPicture(group.id, { mimetype: 'image/png', base64: 'iVBO' })),
        ).toBeInstanceOf(NetworkForbiddenError);
        expect(await rejection(network.sandbox.changeGroupFromPhone(DEVICE, group.id, { subject: 'x' }))).toMatchObject(
          {
            status: 400,
            message: 'Not allowed',
          },
        );
        expect(
          await rejection(network.sandbox.changeGroupFromPhone('4917600001111', group.id, { subject: 'x' })),
        ).toMatchObject({ status: 404, message: 'Group not found' });
      });

      it('administration: remove, promote, demote with outcomes; invite codes; join by code; leave', async () => {
        const network = await start();
        const admin = await pair(network, 1, DEVICE);
        const joiner = await pair(network, 2, OTHER_DEVICE);
        const group = await network.sandbox.createGroup('Admin', [{ phone: DEVICE, admin: true }, { phone: FRIEND }]);

        expect(await admin.connection.changeParticipants(group.id, [FRIEND, '4917655556666', 'x1'], 'promote')).toEqual(
          [
            { phone: FRIEND, ok: true },
            { phone: '4917655556666', ok: false, code: 'NOT_A_MEMBER' },
            { phone: 'x1', ok: false, code: 'INVALID_NUMBER' },
          ],
        );
        expect((await admin.connection.getGroup(group.id)).participants).toContainEqual({
          phone: FRIEND,
          role: 'admin',
        });
        expect(await admin.connection.changeParticipants(group.id, [FRIEND, DEVICE], 'demote')).toEqual([
          { phone: FRIEND, ok: true },
          { phone: DEVICE, ok: false, code: 'FORBIDDEN' },
        ]);
        await expect(joiner.connection.changeParticipants(group.id, [FRIEND], 'remove')).rejects.toBeInstanceOf(
          NetworkNotFoundError,
        );

        const code = await admin.connection.groupInvite(group.id, false);
        expect(code).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(await admin.connection.groupInvite(group.id, false)).toBe(code);
        const fresh = await admin.connection.groupInvite(group.id, true);
        expect(fresh).not.toBe(code);
        await expect(joiner.connection.joinGroup(code)).rejects.toBeInstanceOf(NetworkNotFoundError);
        const joined = await joiner.connection.joinGroup(fresh);
        expect(joined.participants).toContainEqual({ phone: OTHER_DEVICE, role: null });
        await admin.recorder.wait('groups_changed', (e) => e.groupIds.includes(group.id));
        // A member that is not an admin may not read the code.
        await expect(joiner.connection.groupInvite(group.id, false)).rejects.toBeInstanceOf(NetworkForbiddenError);

        expect(await admin.connection.changeParticipants(group.id, [OTHER_DEVICE], 'remove')).toEqual([
          { phone: OTHER_DEVICE, ok: true },
        ]);
        // The member taken out hears of it, and no longer sees the group.
        await joiner.recorder.wait('groups_changed', (e) => e.groupIds.includes(group.id));
        await expect(joiner.connection.getGroup(group.id)).rejects.toBeInstanceOf(NetworkNotFoundError);

        await admin.connection.leaveGroup(group.id);
        await expect(admin.connection.getGroup(group.id)).rejects.toBeInstanceOf(NetworkNotFoundError);
        await expect(admin.connection.leaveGroup(group.id)).rejects.toBeInstanceOf(NetworkNotFoundError);
      });

      it('settings: shown, changed in order, refusals carried with their class; admins-only groups refuse members', async () => {
        const network = await start();
        const admin = await pair(network, 1, DEVICE);
        const member = await pair(network, 2, OTHER_DEVICE);
        const group = await network.sandbox.createGroup('Rules', [
          { phone: DEVICE, admin: true },
          { phone: OTHER_DEVICE },
          { phone: FRIEND },
        ]);
        expect(group.settings).toEqual({ onlyAdminsCanSend: false, onlyAdminsCanEdit: true, disappearingSeconds: 0 });
        const changed = await admin.connection.updateGroup(group.id, {
          onlyAdminsCanSend: true,
          onlyAdminsCanEdit: false,
          disappearingSeconds: 604_800,
        });
        expect(changed.settings).toEqual({
          onlyAdminsCanSend: true,
          onlyAdminsCanEdit: false,
          disappearingSeconds: 604_800,
        });
        // A member may now edit the info, not who may post: stopped there, the subject went through.
        const refused = await rejection(
          member.connection.updateGroup(group.id, { subject: 'By a member', onlyAdminsCanSend: false }),
        );
        expect(refused).toBeInstanceOf(NetworkSettingRefusedError);
        expect(refused).toMatchObject({
          setting: 'onlyAdminsCanSend',
          applied: ['subject'],
          message: 'only an administrator of the group can change this',
        });
        expect((await member.connection.getGroup(group.id)).subject).toBe('By a member');
        // A timer the network does not offer.
        expect(await rejection(admin.connection.updateGroup(group.id, { disappearingSeconds: 5 }))).toMatchObject({
          name: 'NetworkSettingRefusedError',
          setting: 'disappearingSeconds',
          applied: [],
        });
        // Only admins post.
        const post = await rejection(
          member.connection.sendMessage({ id: 'm-post', to: group.id, content: { type: 'chat', text: 'hi' } }),
        );
        expect(post).toBeInstanceOf(NetworkSendError);
        expect(post).toMatchObject({
          kind: 'permanent',
          message: 'only administrators can send messages to this group',
        });
        await admin.connection.sendMessage({ id: 'a-post', to: group.id, content: { type: 'chat', text: 'hi' } });
        await admin.recorder.wait('message_status', (e) => e.id === 'a-post');
      });

      it('shows mentions and the quoted message in the inbox', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        await device.connection.sendMessage({
          id: 'reply',
          to: FRIEND,
          content: { type: 'chat', text: 'hi @4917612345678' },
          mentions: [FRIEND],
          quoted: { id: 'earlier', fromMe: true, chat: FRIEND, text: 'earlier text' },
        });
        await device.connection.sendMessage({
          id: 'answer',
          to: FRIEND,
          content: { type: 'chat', text: 'yes' },
          quoted: { id: 'NETWORK-ID', fromMe: false, chat: FRIEND, author: FRIEND },
        });
        await device.recorder.wait('message_status', (e) => e.id === 'answer');
        const inbox = (await network.sandbox.getPhone(FRIEND)).inbox;
        expect(inbox.find((e) => e.message_id === 'reply')).toMatchObject({
          mentions: [FRIEND],
          quoted: { message_id: 'earlier', from: DEVICE, text: 'earlier text' },
        });
        const answer = inbox.find((e) => e.message_id === 'answer')!;
        expect(answer.quoted).toEqual({ message_id: 'NETWORK-ID', from: FRIEND });
        expect(answer.mentions).toBeUndefined();
      });

      it('fills up at 1024 members (GROUP_FULL)', async () => {
        const network = await start();
        const device = await pair(network, 1, DEVICE);
        const members = [{ phone: DEVICE, admin: true }];
        for (let i = 0; i < 1022; i++) members.push({ phone: `4915100${5000 + i}`, admin: false });
        const group = await network.sandbox.createGroup('Big', members);
        expect(group.participants).toHaveLength(1023);
        const outcomes = await device.connection.addParticipants(group.id, ['4917700005555', '4917700006666']);
        expect(outcomes.map((o) => (o.ok ? 'OK' : o.code))).toEqual(['OK', 'GROUP_FULL']);
        expect((await device.connection.getGroup(group.id)).participants).toHaveLength(1024);
      });
    });
  });
}
