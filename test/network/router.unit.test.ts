// docs/internals.md, WhatsApp and sandbox accounts, and docs/networks-per-device.md: the
// network router sends each device's connection to the sandbox or to the
// configured network, decided once per connection by asking where the device
// belongs (telling whether it is a pairing), and passes calls and events
// through unchanged. A device on a network the gateway does not run is held
// unconnected, never logged out. Here the sandbox is the real in-process one and the
// "real network" a recording fake.
import { afterEach, describe, expect, it } from 'vitest';
import {
  NetworkUnavailableError,
  type ConnectOptions,
  type Network,
  type NetworkConnection,
  type NetworkEventHandler,
} from '../../src/network/network.js';
import { createNetworkRouter } from '../../src/network/router.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { Recorder, sleep } from './helpers.js';

interface FakeConnection {
  readonly options: ConnectOptions;
  readonly emit: NetworkEventHandler;
  readonly calls: string[];
  closed: boolean;
}

/** A network that records every connection and call, and lets the test emit events on a connection. */
function recordingNetwork(closeFails = false) {
  const connections: FakeConnection[] = [];
  let closed = false;
  const network: Network = {
    description: 'recording network',
    connect(options, onEvent) {
      const record: FakeConnection = { options, emit: onEvent, calls: [], closed: false };
      connections.push(record);
      const call =
        (name: string) =>
        async (...args: unknown[]): Promise<any> => {
          record.calls.push(`${name} ${JSON.stringify(args)}`);
          return name === 'requestPairingCode' ? 'ABCD-EFGH' : name === 'checkNumbers' ? [] : undefined;
        };
      const connection: NetworkConnection = {
        capabilities: { interactive: 'text' },
        sendMessage: call('sendMessage'),
        sendTyping: call('sendTyping'),
        sendPresence: call('sendPresence'),
        listGroups: call('listGroups'),
        getGroup: call('getGroup'),
        createGroup: call('createGroup'),
        addParticipants: call('addParticipants'),
        updateGroup: call('updateGroup'),
        changeParticipants: call('changeParticipants'),
        groupInvite: call('groupInvite'),
        joinGroup: call('joinGroup'),
        leaveGroup: call('leaveGroup'),
        modifyChat: call('modifyChat'),
        rejectCall: call('rejectCall'),
        checkNumbers: call('checkNumbers'),
        requestPairingCode: call('requestPairingCode'),
        logout: call('logout'),
        close: () => {
          record.closed = true;
        },
      };
      return connection;
    },
    close: async () => {
      closed = true;
      if (closeFails) throw new Error('primary would not close');
    },
  };
  return { network, connections, isClosed: () => closed };
}

/** A lookup the test answers by hand, to control when the network is known. */
function deferredLookup() {
  const asked: number[] = [];
  const pending: Array<{ resolve(onSandbox: boolean): void; reject(error: Error): void }> = [];
  const lookup = (deviceId: number) => {
    asked.push(deviceId);
    return new Promise<boolean>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { lookup, asked, pending };
}

describe('network router', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0)) await close();
  });

  function build(
    onSandbox: (deviceId: number, pairing: boolean) => Promise<boolean>,
    closeFails = false,
    whatsappRuns = true,
  ) {
    const primary = recordingNetwork(closeFails);
    const sandbox = createSandboxNetwork({ deliveryDelayMs: 1, readDelayMs: 1 });
    const router = createNetworkRouter({
      sandbox,
      whatsapp: whatsappRuns ? primary.network : null,
      networkOf: async (deviceId, pairing) => ((await onSandbox(deviceId, pairing)) ? 'sandbox' : 'whatsapp'),
    });
    cleanup.push(() => router.close().catch(() => undefined));
    return { router, primary, sandbox };
  }

  it('puts a sandbox account’s device on the sandbox: it pairs, sends and gets receipts there', async () => {
    const { router, primary } = build(async (deviceId) => deviceId === 1);
    const recorder = new Recorder();
    const connection = router.connect({ deviceId: 1, session: null }, recorder.handler);
    const { qr } = await recorder.wait('qr');
    // The router's control API is the sandbox's: the phone scans the QR this connection showed.
    await router.sandbox.scan(qr, '6281250000001');
    const paired = await recorder.wait('paired');
    expect(paired.phone).toBe('6281250000001');
    await recorder.wait('connected');
    await connection.sendMessage({ id: 'm-1', to: '6281250000002', content: { type: 'chat', text: 'hi' } });
    await recorder.wait('message_status', (e) => e.id === 'm-1' && e.status === 'delivered');
    const phone = await router.sandbox.getPhone('6281250000002');
    expect(phone.inbox.map((entry) => entry.message_id)).toEqual(['m-1']);
    expect(primary.connections).toEqual([]);
    connection.close();
  });

  it('puts any other device on the configured network, with the same options, calls and events', async () => {
    const { router, primary } = build(async () => false);
    const recorder = new Recorder();
    const options = { deviceId: 7, session: 'stored-session', expectedPhone: '6281250000007' };
    const connection = router.connect(options, recorder.handler);
    await connection.sendMessage({ id: 'm-7', to: '6281250000002', content: { type: 'chat', text: 'x' } });
    expect(primary.connections).toHaveLength(1);
    const [fake] = primary.connections;
    expect(fake!.options).toEqual(options);
    await connection.sendTyping('6281250000002', 1000);
    await connection.listGroups();
    await connection.getGroup('g@g.us');
    await connection.createGroup('team', ['6281250000002']);
    await connection.addParticipants('g@g.us', ['6281250000003']);
    await connection.updateGroup('g@g.us', { subject: 's' });
    expect(await connection.checkNumbers(['6281250000002'])).toEqual([]);
    expect(await connection.requestPairingCode('6281250000007')).toBe('ABCD-EFGH');
    await connection.logout();
    expect(fake!.calls.map((c) => c.split(' ')[0])).toEqual([
      'sendMessage',
      'sendTyping',
      'listGroups',
      'getGroup',
      'createGroup',
      'addParticipants',
      'updateGroup',
      'checkNumbers',
      'requestPairingCode',
      'logout',
    ]);
    expect(fake!.calls[0]).toBe(
      `sendMessage ${JSON.stringify([{ id: 'm-7', to: '6281250000002', content: { type: 'chat', text: 'x' } }])}`,
    );
    // Events reach the gateway's handler as the network sent them, the very same objects.
    const event = { type: 'connected', phone: '6281250000007' } as const;
    fake!.emit(event);
    expect(recorder.events).toEqual([event]);
    expect(recorder.events[0]).toBe(event);
    connection.close();
    expect(fake!.closed).toBe(true);
  });

  it("passes on the chosen connection's capabilities (how it delivers lists and templates)", async () => {
    const { lookup, pending } = deferredLookup();
    const { router } = build(lookup);
    const real = router.connect({ deviceId: 7, session: 'stored-session' }, () => undefined);
    const sandboxed = router.connect({ deviceId: 1, session: null }, () => undefined);
    expect(real.capabilities).toBeUndefined();
    pending[0]!.resolve(false);
    pending[1]!.resolve(true);
    await real.sendMessage({ id: 'm-7', to: '6281250000002', content: { type: 'chat', text: 'x' } });
    expect(real.capabilities).toEqual({ interactive: 'text' });
    // The sandbox shows them as sent: no capability to report.
    await sleep(5);
    expect(sandboxed.capabilities).toBeUndefined();
    real.close();
    sandboxed.close();
  });

  it('asks once per connection, and calls made before the answer wait for it', async () => {
    const { lookup, asked, pending } = deferredLookup();
    const { router, primary } = build(lookup);
    const connection = router.connect({ deviceId: 3, session: 's' }, () => undefined);
    const sent = connection.sendMessage({ id: 'm-3', to: '6281250000002', content: { type: 'chat', text: 'x' } });
    // Not answered yet: no network has been asked to connect.
    expect(primary.connections).toEqual([]);
    pending[0]!.resolve(false);
    await sent;
    await connection.checkNumbers(['6281250000002']);
    expect(asked).toEqual([3]);
    expect(primary.connections[0]!.calls.map((c) => c.split(' ')[0])).toEqual(['sendMessage', 'checkNumbers']);
    connection.close();
  });

  it('a connection closed before the answer never opens on either network and says nothing', async () => {
    const { lookup, pending } = deferredLookup();
    const { router, primary } = build(lookup);
    const recorder = new Recorder();
    const toPrimary = router.connect({ deviceId: 4, session: 's' }, recorder.handler);
    const toSandbox = router.connect({ deviceId: 5, session: null }, recorder.handler);
    toPrimary.close();
    toSandbox.close();
    pending[0]!.resolve(false);
    pending[1]!.resolve(true);
    await expect(toPrimary.logout()).rejects.toBeInstanceOf(NetworkUnavailableError);
    await expect(toSandbox.listGroups()).rejects.toBeInstanceOf(NetworkUnavailableError);
    expect(primary.connections).toEqual([]);
    // A sandbox pairing attempt shows its first QR at once; give it the time to, were it running.
    await sleep(20);
    expect(recorder.events).toEqual([]);
  });

  it('a failed lookup ends the attempt as a drop (retried by the gateway) and calls are refused', async () => {
    const { router, primary } = build(async () => {
      throw new Error('store unreachable');
    });
    const recorder = new Recorder();
    const connection = router.connect({ deviceId: 6, session: 's' }, recorder.handler);
    const dropped = await recorder.wait('disconnected');
    expect(dropped).toEqual({
      type: 'disconnected',
      reason: 'could not tell which network the device is on: store unreachable',
    });
    await expect(
      connection.sendMessage({ id: 'm-6', to: '6281250000002', content: { type: 'chat', text: 'x' } }),
    ).rejects.toBeInstanceOf(NetworkUnavailableError);
    expect(primary.connections).toEqual([]);
    expect(recorder.events).toHaveLength(1);
    connection.close();
  });

  it('names both networks, and closes both even when one fails', async () => {
    const { router, primary } = build(async () => false, true);
    expect(router.description).toBe(
      'recording network; sandbox accounts and devices paired on the sandbox on sandbox (simulated network, in-process)',
    );
    await expect(router.close()).rejects.toThrow('primary would not close');
    expect(primary.isClosed()).toBe(true);
  });

  it('tells the lookup whether the connection is a pairing (no session) or a stored session', async () => {
    const asked: Array<[number, boolean]> = [];
    const { router } = build(async (deviceId, pairing) => {
      asked.push([deviceId, pairing]);
      return false;
    });
    const pairing = router.connect({ deviceId: 8, session: null }, () => undefined);
    const session = router.connect({ deviceId: 9, session: 'stored' }, () => undefined);
    await pairing.listGroups();
    await session.listGroups();
    expect(asked).toEqual([
      [8, true],
      [9, false],
    ]);
    pairing.close();
    session.close();
  });

  it('holds a device on a network the gateway does not run unconnected: one drop, retried rarely, never a logout', async () => {
    const { router, primary } = build(async () => false, false, false);
    const recorder = new Recorder();
    const connection = router.connect({ deviceId: 10, session: 'wa1.stored' }, recorder.handler);
    const dropped = await recorder.wait('disconnected');
    expect(dropped).toEqual({
      type: 'disconnected',
      reason: 'paired on whatsapp, which this gateway does not run (see GATEWAY_NETWORK)',
      retry: 'absent',
    });
    await expect(
      connection.sendMessage({ id: 'm-10', to: '6281250000002', content: { type: 'chat', text: 'x' } }),
    ).rejects.toBeInstanceOf(NetworkUnavailableError);
    await expect(connection.logout()).rejects.toBeInstanceOf(NetworkUnavailableError);
    await sleep(10);
    expect(recorder.events).toEqual([dropped]);
    expect(primary.connections).toEqual([]);
    expect(router.description).toBe('sandbox (simulated network, in-process)');
    connection.close();
  });
});
