// Issue 27 (DECISIONS 16): the gateway's side of the history sync (src/messages/history-sync.ts), fed history events
// directly, on the store of a running gateway: every batch is taken once stored (or refused), a message is stored once
// however often it is offered, the end is announced once per pairing (history_synced_at), history offered after that
// is taken and not stored, and a shutdown does not wait for a sync whose end never came.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { DeviceNetworkListener } from '../../src/devices/connections.js';
import { HistorySync } from '../../src/messages/history-sync.js';
import type { HistoryMessage, NetworkEvent } from '../../src/network/network.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const PHONE = '6283399200001';
const FRIEND = '6283311200001';

/** A HistorySync listening to a hand-fed event source. */
function sync(gw: TestGateway, days = 7) {
  const listeners = new Set<DeviceNetworkListener>();
  const history = new HistorySync({
    store: gw.app.store,
    clock: systemClock,
    connections: {
      onEvent: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    logger: pino({ level: 'silent' }),
    days,
  });
  history.start();
  const tell = (deviceId: number, event: NetworkEvent) => {
    for (const listener of listeners) listener(deviceId, event);
  };
  /** Offers a batch; resolves once it was taken. */
  const offer = (deviceId: number, messages: HistoryMessage[]) =>
    new Promise<void>((taken) => tell(deviceId, { type: 'history_messages', messages, taken }));
  return { history, tell, offer };
}

const text = (id: string, ago: number, fromMe = false): HistoryMessage => ({
  id,
  fromMe,
  chat: FRIEND,
  ...(fromMe ? {} : { from: FRIEND }),
  content: { type: 'chat', text: `text ${id}` },
  at: new Date(Date.now() - ago),
});

describe.skipIf(noStoreAvailable)('storing the history sync', () => {
  let gw: TestGateway;
  let deviceId: number;
  beforeAll(async () => {
    gw = await startGateway();
    deviceId = (await createPairedDevice(gw, PHONE)).id;
    const hooked = await gw.request('PATCH', `/devices/${deviceId}`, {
      webhook_url: 'https://hooks.example.invalid/h',
    });
    expect(hooked.status).toBe(200);
  });
  afterAll(() => gw?.close());

  const rows = () =>
    gw.app.store.db
      .selectFrom('messages')
      .select(['message', 'direction', 'source'])
      .where('device_id', '=', deviceId)
      .where('source', '=', 'history')
      .orderBy('message')
      .execute();
  const synced = async () =>
    (
      await gw.app.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('device_id', '=', deviceId)
        .where('type', '=', 'device.history_synced')
        .execute()
    ).map((row) => JSON.parse(row.payload).data);

  it('stores each offered message once and takes every batch; a shutdown does not wait for the end', async () => {
    const first = sync(gw);
    await first.offer(deviceId, [text('A1', 60_000), text('A2', 30_000, true), text('A1', 60_000)]);
    await first.offer(deviceId, [text('A1', 60_000), text('A3', 1_000)]);
    expect(await rows()).toEqual([
      { message: 'text A1', direction: 'incoming', source: 'history' },
      { message: 'text A2', direction: 'outgoing', source: 'history' },
      { message: 'text A3', direction: 'incoming', source: 'history' },
    ]);
    // No end was heard: closing answers at once all the same.
    await first.history.close();
    expect(await synced()).toEqual([]);
  });

  it('announces the end once per pairing, and then stores nothing more it is offered', async () => {
    const second = sync(gw);
    await second.offer(deviceId, [text('B1', 2_000)]);
    second.tell(deviceId, { type: 'history_synced' });
    await waitFor(synced, (events) => events.length === 1, { what: 'device.history_synced' });
    expect(await synced()).toEqual([{ chats: 1, messages: 1 }]);
    await second.offer(deviceId, [text('B2', 1_000)]);
    second.tell(deviceId, { type: 'history_synced' });
    await second.history.close();
    expect(await synced()).toHaveLength(1);
    expect((await rows()).map((r) => r.message)).not.toContain('text B2');
    const device = await gw.app.store.db
      .selectFrom('devices')
      .select('history_synced_at')
      .where('id', '=', deviceId)
      .executeTakeFirstOrThrow();
    expect(device.history_synced_at).not.toBeNull();
  });

  it('takes but stores nothing with 0 days', async () => {
    const none = sync(gw, 0);
    await none.offer(deviceId, [text('C1', 1_000)]);
    await none.history.close();
    expect((await rows()).map((r) => r.message)).not.toContain('text C1');
  });
});
