/**
 * Issue 22, item 4, in the sandbox itself: each view (the gateway names one per account) has its
 * own settings of a virtual phone. Run in-process and over the WebSocket protocol (the sandbox as
 * its own process, shared by several gateway nodes), and across a restart from the state file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NetworkSendError } from '../../src/network/network.js';
import { connectSandboxNetwork, createSandboxNetwork, startSandboxServer } from '../../src/network/sandbox/index.js';
import type { SandboxOptions } from '../../src/network/sandbox/state.js';
import { pair, reconnect, type SandboxNetwork } from './helpers.js';

const A_DEVICE = '4915112345671';
const B_DEVICE = '4915112345672';
const FRIEND = '4917612345671'; // no magic ending (docs/internals.md, The network seam and the sandbox): a plain phone
const FAST: SandboxOptions = { qrRotateMs: 5000, deliveryDelayMs: 2, readDelayMs: 2 };

type Make = () => Promise<{ network: SandboxNetwork; close(): Promise<void> }>;

const transports: Array<[string, Make]> = [
  [
    'in-process',
    async () => {
      const network = createSandboxNetwork(FAST);
      return { network, close: () => network.close() };
    },
  ],
  [
    'websocket',
    async () => {
      const server = await startSandboxServer({ ...FAST, host: '127.0.0.1', port: 0 });
      const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`);
      return {
        network,
        close: async () => {
          await network.close();
          await server.close();
        },
      };
    },
  ],
];

describe.each(transports)('phone views (%s)', (_label, make) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function start(): Promise<SandboxNetwork> {
    const made = await make();
    cleanups.push(() => made.close());
    return made.network;
  }

  it('a setting in one view changes neither what the other view’s devices meet nor what it is shown', async () => {
    const network = await start();
    const a = await pair(network, 1, A_DEVICE, '1');
    const b = await pair(network, 2, B_DEVICE, '2');
    await network.sandbox.upsertPhone({ phone: FRIEND, registered: false, name: 'B’s friend', auto_read: true }, '2');

    await a.connection.sendMessage({ id: 'a1', to: FRIEND, content: { type: 'chat', text: 'from a' } });
    await a.recorder.wait('message_status', (e) => e.id === 'a1' && e.status === 'delivered');
    const error = await b.connection
      .sendMessage({ id: 'b1', to: FRIEND, content: { type: 'chat', text: 'from b' } })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(NetworkSendError);

    expect(await a.connection.checkNumbers([FRIEND])).toEqual([{ phone: FRIEND, registered: true }]);
    expect(await b.connection.checkNumbers([FRIEND])).toEqual([{ phone: FRIEND, registered: false }]);

    const seenByA = await network.sandbox.getPhone(FRIEND, '1');
    expect(seenByA).toMatchObject({ registered: true, name: null, auto_read: false });
    expect(seenByA.inbox.map((e) => e.message_id)).toEqual(['a1']);
    const seenByB = await network.sandbox.getPhone(FRIEND, '2');
    expect(seenByB).toMatchObject({ registered: false, name: 'B’s friend', auto_read: true });
    expect(seenByB.inbox).toEqual([]);
    // B cannot read A's message either: in B's view it is not in the inbox.
    await expect(network.sandbox.readMessage(FRIEND, 'a1', '2')).rejects.toMatchObject({ status: 404 });
    // auto_read is B's: A's message stays unread.
    expect(a.recorder.of('message_status').filter((e) => e.id === 'a1' && e.status === 'read')).toEqual([]);
  });

  it('groups: names and refusals follow the view of whoever asks', async () => {
    const network = await start();
    const a = await pair(network, 1, A_DEVICE, '1');
    const b = await pair(network, 2, B_DEVICE, '2');
    await network.sandbox.upsertPhone({ phone: FRIEND, privacy: 'nobody', name: 'Hidden' }, '2');
    const created = await a.connection.createGroup('A’s group', [FRIEND, B_DEVICE]);
    expect(created.notAdded).toEqual([]);
    expect(created.participants.find((p) => p.phone === FRIEND)).toEqual({ phone: FRIEND, role: null });
    const byB = await b.connection.createGroup('B’s group', [FRIEND]);
    expect(byB.notAdded).toEqual([{ phone: FRIEND, code: 'PRIVACY_SETTINGS' }]);
    const [groupSeenByB] = (await b.connection.listGroups()).filter((g) => g.id === created.id);
    expect(groupSeenByB?.participants.find((p) => p.phone === FRIEND)).toEqual({
      phone: FRIEND,
      name: 'Hidden',
      role: null,
    });
  });
});

describe('phone views in the state file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-views-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each view’s settings apart across a restart; settings saved before views are the shared view’s', async () => {
    const statePath = join(dir, 'state.json');
    const first = createSandboxNetwork({ ...FAST, statePath });
    const a = await pair(first, 1, A_DEVICE, '1');
    await first.sandbox.upsertPhone({ phone: FRIEND, online: false, name: 'A’s' }, '1');
    await first.sandbox.upsertPhone({ phone: FRIEND, name: 'B’s' }, '2');
    await first.close();
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { phones: unknown[] };
    expect(saved.phones).toEqual(
      expect.arrayContaining([
        { phone: FRIEND, online: false, name: 'A’s', view: '1' },
        { phone: FRIEND, name: 'B’s', view: '2' },
      ]),
    );
    // A file written before views: its one entry per phone is the shared view's.
    writeFileSync(
      statePath,
      JSON.stringify({ ...saved, phones: [...saved.phones, { phone: '4917612345699', name: 'Old' }] }),
    );

    const second = createSandboxNetwork({ ...FAST, statePath });
    try {
      await reconnect(second, 1, a.session);
      expect(await second.sandbox.getPhone(FRIEND, '1')).toMatchObject({ name: 'A’s', online: false });
      expect(await second.sandbox.getPhone(FRIEND, '2')).toMatchObject({ name: 'B’s', online: true });
      expect(await second.sandbox.getPhone('4917612345699')).toMatchObject({ name: 'Old' });
      expect(await second.sandbox.getPhone('4917612345699', '1')).toMatchObject({ name: null });
    } finally {
      await second.close();
    }
  });
});
