// The history sync at pairing through the WhatsApp stand-in (issue 27, DECISIONS 16; docs/standin.md): the phone
// offers its new device 20,000 messages over 200 chats in RECENT chunks (and 100 more sent 30 days ago), as WhatsApp
// sends history-sync notifications. The built gateway stores the 20,000 within GATEWAY_HISTORY_DAYS (7) with
// `source: "history"` while its heap stays within a bound (the batches are stored as they come, never held whole),
// raises no `message.incoming`, and one `device.history_synced {chats: 200, messages: 20000}`. SQLite only
// (vitest.config.ts), like every file of test/e2e.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { startStandinWorld, type StandinWorld } from './standin-harness.js';

const ME = '15553470001';
const MESSAGES = 20_000;
const CHATS = 200;
const OLD = 100;
/** Heap growth allowed while the history is stored (the messages held whole would take several times more). */
const HEAP_BOUND = 96 * 1024 * 1024;
const LONG = { timeoutMs: 120_000, intervalMs: 250 };

let world: StandinWorld;

beforeAll(async () => {
  world = await startStandinWorld(11);
  await world.startGateway();
});

afterAll(async () => {
  await world?.stop();
});

/** The gateway process's heap in use, from its Prometheus metrics. */
async function heapUsed(): Promise<number> {
  const res = await world.api('GET', '/metrics');
  expect(res.status).toBe(200);
  const line = String(res.body)
    .split('\n')
    .find((l) => l.startsWith('gateway_nodejs_heap_size_used_bytes '));
  expect(line, 'heap metric').toBeDefined();
  return Number(line!.split(' ')[1]);
}

describe('history sync at pairing through the WhatsApp stand-in', () => {
  it('stores 20,000 history messages in bounded memory, raises no message.incoming, and announces it once', async () => {
    const given = await world.standin.call('POST', `/control/phones/${ME}/history`, {
      messages: MESSAGES,
      chats: CHATS,
      old: OLD,
    });
    expect(given.status, JSON.stringify(given.body)).toBe(200);
    expect(given.body).toEqual({ messages: MESSAGES, chats: CHATS, old: OLD });

    const baseline = await heapUsed();
    let peak = baseline;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await heapUsed());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const id = await world.pairedDevice('history', ME);
    const synced = await waitFor(
      () => world.hooks.events().filter((e) => e.type === 'device.history_synced'),
      (events) => events.length > 0,
      { ...LONG, what: 'device.history_synced' },
    );
    sampling = false;
    await sampler;
    expect(synced).toHaveLength(1);
    expect(synced[0]).toMatchObject({ device: { id, phone: ME }, data: { chats: CHATS, messages: MESSAGES } });
    const growth = peak - baseline;
    console.info(`history sync: heap ${Math.round(baseline / 2 ** 20)} MB, peak +${Math.round(growth / 2 ** 20)} MB`);
    expect(growth).toBeLessThan(HEAP_BOUND);

    // Stored as the phone had them, both directions, marked as history; none older than the days limit.
    const page = await world.api('GET', `/messages?device=${ME}&limit=100`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.data).toHaveLength(100);
    for (const m of page.body.data) {
      const n = Number(/^history (\d+)$/.exec(m.message)?.[1]);
      expect(n, m.message).toBeLessThan(MESSAGES);
      const chat = `1999${String(n % CHATS).padStart(7, '0')}`;
      expect(m).toMatchObject({ source: 'history', type: 'chat', device: ME });
      if (n % 2 === 1) expect(m).toMatchObject({ direction: 'outgoing', sender: null, receiver: chat, status: 'sent' });
      else expect(m).toMatchObject({ direction: 'incoming', sender: chat, receiver: ME, status: 'delivered' });
      // Sent n+1 seconds before the sync: its timestamp says so (within the run's few minutes).
      expect(Date.now() - Date.parse(m.timestamp)).toBeGreaterThanOrEqual((n + 1) * 1000);
      expect(Date.now() - Date.parse(m.timestamp)).toBeLessThan((n + 1) * 1000 + 600_000);
    }
    expect(world.hooks.events().filter((e) => e.type === 'message.incoming')).toEqual([]);

    // A drop and reconnect announces nothing more.
    const dropped = await world.standin.call('POST', '/control/drop', {});
    expect(dropped.body.dropped).toBe(1);
    await waitFor(
      () => world.device(id),
      (d) => d.connected === true,
      { ...LONG, what: 'reconnected' },
    );
    const live = await world.standin.call('POST', '/control/phones/19990000005/messages', { to: ME, text: 'live' });
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    await waitFor(
      () => world.hooks.events().filter((e) => e.type === 'message.incoming'),
      (events) => events.length === 1,
      { ...LONG, what: 'the live message.incoming' },
    );
    expect(world.hooks.events().filter((e) => e.type === 'device.history_synced')).toHaveLength(1);
  });
});
