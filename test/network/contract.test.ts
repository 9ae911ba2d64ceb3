// Issue 12: the seam's contract, one suite over every implementation: the
// parts of the sandbox network's behaviour that need none of its controls run
// against the sandbox and against the WhatsApp connector over its scripted
// socket (and the real store, SQLite or PostgreSQL). What the outside world
// does (a phone scans, delivers, reads, writes, logs the device out) is done
// by each implementation's driver; what the gateway sees must not differ.
import { proto } from 'baileys';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NetworkNotFoundError,
  NetworkUnavailableError,
  type Network,
  type NetworkConnection,
} from '../../src/network/network.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { toNetworkId } from '../../src/network/whatsapp/ids.js';
import { noStoreAvailable } from '../helpers/gateway.js';
import { pair as sandboxPair, reconnect as sandboxReconnect, Recorder, sleep, type SandboxNetwork } from './helpers.js';
import type { FakeSocket } from './whatsapp/fake-socket.js';
import { SLOW, WhatsAppHarness, ackEverySend, textFrom } from './whatsapp/harness.js';

const DEVICE = '4915112345678';
const FRIEND = '4917612345678';
/** Unregistered on both: a magic number of the sandbox, and left out of the scripted socket's answers. */
const NOBODY = '4917600000000';
const ids = Array.from({ length: 6 }, (_, i) => `01JQZ3Y8N5S7T9V1W3X5Y7Z9D${i}`);

interface Device {
  readonly connection: NetworkConnection;
  readonly recorder: Recorder;
  readonly session: string;
}

/** What the outside world does to a device, per implementation. */
interface Driver {
  readonly network: () => Network;
  /** A phone pairs the device: qr, paired, connected. */
  pair(deviceId: number, phone: string): Promise<Device>;
  reconnect(deviceId: number, session: string): Promise<Device>;
  /** Connects with no session and waits for the first QR. */
  startPairing(deviceId: number): Promise<Device>;
  /** Times the recipient was handed the message with this id. */
  timesSent(id: string, to: string): Promise<number>;
  /** The recipient's phone got the message and read it. */
  deliverAndRead(deviceId: number, id: string, to: string): Promise<void>;
  /** A phone writes to the device; answers the network's id of the message. */
  phoneWrites(deviceId: number, from: string, text: string): Promise<string>;
  logoutFromPhone(deviceId: number): Promise<void>;
  dropConnection(deviceId: number): Promise<void>;
  /** The network knows these numbers as registered (the sandbox: all but its magic ones). */
  registered(deviceId: number, phones: string[]): void;
  close(): Promise<void>;
}

async function sandboxDriver(): Promise<Driver> {
  const network: SandboxNetwork = createSandboxNetwork({ qrRotateMs: 5000, deliveryDelayMs: 3, readDelayMs: 3 });
  const timesSent = async (id: string, to: string) => {
    const inbox = await network.sandbox.getPhone(to).then(
      (phone) => phone.inbox,
      () => [],
    );
    return inbox.filter((entry) => entry.message_id === id).length;
  };
  return {
    network: () => network,
    pair: (deviceId, phone) => sandboxPair(network, deviceId, phone),
    reconnect: (deviceId, session) => sandboxReconnect(network, deviceId, session),
    async startPairing(deviceId) {
      const recorder = new Recorder();
      const connection = network.connect({ deviceId, session: null }, recorder.handler);
      await recorder.wait('qr');
      return { connection, recorder, session: '' };
    },
    timesSent,
    async deliverAndRead(_deviceId, id, to) {
      // The sandbox delivers by itself; the phone then reads.
      const deadline = Date.now() + SLOW;
      while ((await timesSent(id, to)) === 0 && Date.now() < deadline) await sleep(5);
      await network.sandbox.readMessage(to, id);
    },
    async phoneWrites(_deviceId, from, text) {
      return (await network.sandbox.sendFromPhone(from, DEVICE, text)).message_id;
    },
    logoutFromPhone: (deviceId) => network.sandbox.disconnectDevice(deviceId, { logout: true }),
    dropConnection: (deviceId) => network.sandbox.disconnectDevice(deviceId, { logout: false }),
    registered: () => undefined,
    close: () => network.close(),
  };
}

async function whatsappDriver(): Promise<Driver> {
  const h = await WhatsAppHarness.open();
  const sockets = new Map<number, FakeSocket>();
  const numbers: Array<{ jid: string; exists: boolean }> = [];
  const use = (deviceId: number, socket: FakeSocket) => {
    ackEverySend(socket);
    socket.numbers = numbers;
    sockets.set(deviceId, socket);
  };
  const socketOf = (deviceId: number) => sockets.get(deviceId)!;
  let incoming = 0;
  return {
    network: () => h.network,
    async pair(deviceId, phone) {
      const device = await h.pair(deviceId, phone);
      use(deviceId, device.socket);
      return device;
    },
    async reconnect(deviceId, session) {
      const device = await h.reconnect(session, deviceId);
      use(deviceId, device.socket);
      return device;
    },
    async startPairing(deviceId) {
      const recorder = new Recorder();
      const before = h.wa.sockets.length;
      const connection = h.network.connect({ deviceId, session: null }, recorder.handler);
      (await h.wa.socket(before)).connection({ qr: '2@ref,noise,identity,adv' });
      await recorder.wait('qr', undefined, 0, SLOW);
      return { connection, recorder, session: '' };
    },
    async timesSent(id) {
      const networkId = toNetworkId(id);
      return h.wa.sockets
        .flatMap((socket) => socket.calls)
        .filter((c) => c.method === 'sendMessage' && (c.args[2] as { messageId?: string }).messageId === networkId)
        .length;
    },
    async deliverAndRead(deviceId, id, to) {
      const key = { remoteJid: `${to}@s.whatsapp.net`, fromMe: true, id: toNetworkId(id) };
      const socket = socketOf(deviceId);
      socket.ev.emit('messages.update', [{ key, update: { status: proto.WebMessageInfo.Status.DELIVERY_ACK } }]);
      socket.ev.emit('messages.update', [{ key, update: { status: proto.WebMessageInfo.Status.READ } }]);
    },
    async phoneWrites(deviceId, from, text) {
      const id = `3A${String((incoming += 1)).padStart(18, '0')}`;
      textFrom(socketOf(deviceId), id, from, text);
      return id;
    },
    async logoutFromPhone(deviceId) {
      socketOf(deviceId).close(401, 'Connection Failure');
    },
    async dropConnection(deviceId) {
      socketOf(deviceId).close(428, 'Connection Closed');
    },
    registered(_deviceId, phones) {
      numbers.splice(0, numbers.length, ...phones.map((p) => ({ jid: `${p}@s.whatsapp.net`, exists: true })));
    },
    close: () => h.close(),
  };
}

describe.skipIf(noStoreAvailable).each([
  ['the sandbox', sandboxDriver],
  ['WhatsApp over the scripted socket', whatsappDriver],
])('the network seam: %s', (_label, makeDriver) => {
  let driver: Driver;
  beforeEach(async () => {
    driver = await makeDriver();
  });
  afterEach(async () => {
    await driver.close();
  });

  describe('connecting', () => {
    it('pairing: nothing inside connect(), then qr → paired (with a session) → connected with the phone', async () => {
      const recorder = new Recorder();
      const connection = driver.network().connect({ deviceId: 9, session: null }, recorder.handler);
      expect(recorder.events).toEqual([]);
      connection.close();
      const device = await driver.pair(1, DEVICE);
      expect(device.recorder.types()).toEqual(['qr', 'paired', 'connected']);
      expect(device.recorder.of('paired')[0]).toMatchObject({ phone: DEVICE, session: expect.any(String) });
      expect(device.recorder.of('connected')[0]).toEqual({ type: 'connected', phone: DEVICE });
    });

    it('a stored session connects again without a QR; an unknown one is logged out', async () => {
      const first = await driver.pair(1, DEVICE);
      first.connection.close();
      const again = await driver.reconnect(1, first.session);
      expect(again.recorder.types()).toEqual(['connected']);
      const unknown = new Recorder();
      driver.network().connect({ deviceId: 2, session: 'not-a-session' }, unknown.handler);
      await unknown.wait('logged_out', undefined, 0, SLOW);
      expect(unknown.types()).toEqual(['logged_out']);
    });

    it('a pairing code while pairing (two groups of four), none once paired', async () => {
      const pairing = await driver.startPairing(1);
      expect(await pairing.connection.requestPairingCode(DEVICE)).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
      pairing.connection.close();
      const device = await driver.pair(2, DEVICE);
      await expect(device.connection.requestPairingCode(DEVICE)).rejects.toBeInstanceOf(NetworkUnavailableError);
    });

    it('close() is quiet and leaves a connection that refuses work', async () => {
      const device = await driver.pair(1, DEVICE);
      const before = device.recorder.events.length;
      device.connection.close();
      await sleep(30);
      expect(device.recorder.events).toHaveLength(before);
      await expect(
        device.connection.sendMessage({ id: ids[0]!, to: FRIEND, content: { type: 'chat', text: 'x' } }),
      ).rejects.toBeInstanceOf(NetworkUnavailableError);
      await expect(device.connection.listGroups()).rejects.toBeInstanceOf(NetworkUnavailableError);
    });

    it('logout ends the session: logged_out, work refused, the session no longer connects', async () => {
      const device = await driver.pair(1, DEVICE);
      await device.connection.logout();
      await device.recorder.wait('logged_out', undefined, 0, SLOW);
      await expect(device.connection.checkNumbers([FRIEND])).rejects.toBeInstanceOf(NetworkUnavailableError);
      const after = new Recorder();
      driver.network().connect({ deviceId: 1, session: device.session }, after.handler);
      await after.wait('logged_out', undefined, 0, SLOW);
    });

    it('the phone logging the device out is logged_out; a dropped connection is disconnected and comes back', async () => {
      const device = await driver.pair(1, DEVICE);
      await driver.dropConnection(1);
      await device.recorder.wait('disconnected', undefined, 0, SLOW);
      const back = await driver.reconnect(1, device.session);
      await driver.logoutFromPhone(1);
      await back.recorder.wait('logged_out', undefined, 0, SLOW);
      expect(back.recorder.types()).toEqual(['connected', 'logged_out']);
    });
  });

  describe('messages', () => {
    it('sends, once per id, and hears it delivered and read under our id', async () => {
      const device = await driver.pair(1, DEVICE);
      await device.connection.sendTyping(FRIEND, 50);
      const message = { id: ids[0]!, to: FRIEND, content: { type: 'chat', text: 'hello' } } as const;
      await device.connection.sendMessage(message);
      await device.connection.sendMessage(message);
      await driver.deliverAndRead(1, ids[0]!, FRIEND);
      await device.recorder.wait('message_status', (e) => e.status === 'read', 0, SLOW);
      // The same id once more, after it arrived: still shown once.
      await device.connection.sendMessage(message);
      expect(await driver.timesSent(ids[0]!, FRIEND)).toBe(1);
      const statuses = device.recorder.of('message_status');
      expect(new Set(statuses.map((e) => e.id))).toEqual(new Set([ids[0]]));
      expect([...new Set(statuses.map((e) => e.status))]).toEqual(['delivered', 'read']);
      for (const status of statuses) expect(status.at).toBeInstanceOf(Date);
    });

    it("hears a phone's message with its id, sender, content and time", async () => {
      const device = await driver.pair(1, DEVICE);
      const id = await driver.phoneWrites(1, FRIEND, 'hey');
      const incoming = await device.recorder.wait('incoming_message', undefined, 0, SLOW);
      expect(incoming).toMatchObject({ id, from: FRIEND, content: { type: 'chat', text: 'hey' } });
      expect(incoming.group).toBeUndefined();
      expect(incoming.at).toBeInstanceOf(Date);
    });

    it('checks numbers, answering in the order asked', async () => {
      const device = await driver.pair(1, DEVICE);
      driver.registered(1, [FRIEND]);
      expect(await device.connection.checkNumbers([NOBODY, FRIEND])).toEqual([
        { phone: NOBODY, registered: false },
        { phone: FRIEND, registered: true },
      ]);
    });
  });

  describe('groups', () => {
    it('creates, reads back, lists and renames a group; an unknown group is not found', async () => {
      const device = await driver.pair(1, DEVICE);
      const created = await device.connection.createGroup('Team', [FRIEND]);
      expect(created).toMatchObject({ subject: 'Team', capacity: 1024, notAdded: [] });
      expect(created.participants.map((p) => p.phone)).toContain(FRIEND);
      const { notAdded: _notAdded, ...group } = created;
      expect(await device.connection.getGroup(created.id)).toEqual(group);
      expect((await device.connection.listGroups()).map((g) => g.id)).toContain(created.id);
      expect(await device.connection.updateGroup(created.id, { subject: 'Team 2' })).toMatchObject({
        id: created.id,
        subject: 'Team 2',
      });
      await expect(device.connection.getGroup('120363000000000000@g.us')).rejects.toBeInstanceOf(NetworkNotFoundError);
    });
  });
});
