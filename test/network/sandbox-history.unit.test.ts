// Issue 27 (DECISIONS 16): the sandbox's history sync at pairing (src/network/sandbox/history.ts), in process and as
// its own process over the wire: a seeded history and what the number's devices sent to phones are offered in
// batches of 500, oldest first, then one `history_synced`; in process each batch only once the last was taken (over
// the wire the server counts a batch taken once sent); another view, a reconnect and a number without history get
// nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_BATCH, type NetworkEvent } from '../../src/network/network.js';
import { connectSandboxNetwork, createSandboxNetwork, startSandboxServer } from '../../src/network/sandbox/index.js';
import { pair, reconnect } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const DEVICE = '4915112345001';
const FRIEND = '4917612345001';
const VIEW = '7';
const FAST = { qrRotateMs: 5000, deliveryDelayMs: 1, readDelayMs: 1 };

type Network = ReturnType<typeof createSandboxNetwork>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function inProcess(): Promise<Network> {
  const network = createSandboxNetwork(FAST);
  cleanups.push(() => network.close());
  return network;
}

async function overTheWire(): Promise<Network> {
  const server = await startSandboxServer({ ...FAST, host: '127.0.0.1', port: 0 });
  const network = connectSandboxNetwork(`ws://127.0.0.1:${server.port}`) as Network;
  cleanups.push(async () => {
    await network.close();
    await server.close();
  });
  return network;
}

/** Seeds `count` messages of FRIEND with DEVICE's number, the oldest first, a minute apart. */
async function seed(network: Network, count: number, view = VIEW) {
  const start = Date.now() - count * 60_000;
  for (let from = 0; from < count; from += 1000) {
    const messages = Array.from({ length: Math.min(1000, count - from) }, (_, i) => ({
      text: `seeded ${from + i}`,
      from_me: (from + i) % 2 === 1,
      at: new Date(start + (from + i) * 60_000).toISOString(),
    }));
    await expect(network.sandbox.seedHistory(FRIEND, DEVICE, messages, view)).resolves.toEqual({
      seeded: messages.length,
    });
  }
}

const batches = (events: NetworkEvent[]) =>
  events.filter((e): e is Extract<NetworkEvent, { type: 'history_messages' }> => e.type === 'history_messages');

describe.each([
  ['in process', inProcess],
  ['over the wire', overTheWire],
])('sandbox history sync (%s)', (label, make) => {
  it('offers the seeded history in batches, oldest first, then its end once', async () => {
    const network = await make();
    await seed(network, 1200);
    const { recorder } = await pair(network, 1, DEVICE, VIEW);
    await waitFor(
      () => batches(recorder.events).length,
      (n) => n >= 1,
      { what: 'a first batch' },
    );
    if (label === 'in process') {
      // The next batch waits until this one is taken.
      expect(batches(recorder.events)).toHaveLength(1);
      expect(recorder.events.some((e) => e.type === 'history_synced')).toBe(false);
    }
    for (let i = 0; i < 3; i++) {
      await waitFor(
        () => batches(recorder.events).length,
        (n) => n > i,
        { what: `batch ${i}` },
      );
      batches(recorder.events)[i]!.taken();
    }
    await recorder.wait('history_synced');
    const all = batches(recorder.events);
    expect(all.map((b) => b.messages.length)).toEqual([HISTORY_BATCH, HISTORY_BATCH, 200]);
    const messages = all.flatMap((b) => b.messages);
    expect(messages.map((m) => m.content)).toEqual(
      Array.from({ length: 1200 }, (_, i) => ({ type: 'chat', text: `seeded ${i}` })),
    );
    expect(messages[0]).toMatchObject({ fromMe: false, chat: FRIEND, from: FRIEND });
    expect(messages[1]).toMatchObject({ fromMe: true, chat: FRIEND });
    expect(messages[1]).not.toHaveProperty('from');
    expect(messages[0]!.at).toBeInstanceOf(Date);
    expect(recorder.of('history_synced')).toHaveLength(1);
  });

  it('offers nothing to another view, to a number without history, or on a reconnect', async () => {
    const network = await make();
    await seed(network, 3, 'another view');
    const paired = await pair(network, 1, DEVICE, VIEW);
    const none = await pair(network, 2, '4915112345002', VIEW);
    // A live message after the pairing arrives behind anything the pairing would have offered.
    await network.sandbox.sendFromPhone(FRIEND, DEVICE, 'live', undefined, VIEW);
    await paired.recorder.wait('incoming_message');
    paired.connection.close();
    const again = await reconnect(network, 1, paired.session);
    await network.sandbox.sendFromPhone(FRIEND, DEVICE, 'live again', undefined, VIEW);
    await again.recorder.wait('incoming_message');
    for (const { recorder } of [paired, none, again]) {
      expect(recorder.events.filter((e) => e.type === 'history_messages' || e.type === 'history_synced')).toEqual([]);
    }
  });
});
