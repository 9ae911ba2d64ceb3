// docs/internals.md, WhatsApp and sandbox accounts: what a session offered in a chat (the choices of a list or
// template sent as text) is kept through the network-state port, one offer a
// chat, read back within its window, fenced like every other write, scanned
// for re-sealing, pruned after its window and deleted with the session.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { SqlNetworkStateStore } from '../../src/devices/network-state.js';
import { StaleNetworkStateError, type NetworkStateWriter } from '../../src/network/state.js';
import { openStore, type Store } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';

const A = '6281111111111';
const B = '6282222222222';

describe.skipIf(noStoreAvailable)('offers through the network-state port', () => {
  let location: StoreLocation;
  let store: Store;
  let states: SqlNetworkStateStore;
  let writer: NetworkStateWriter;

  beforeEach(async () => {
    location = await newStoreLocation();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    states = new SqlNetworkStateStore(store, systemClock);
    writer = (await states.claim('wa1.one', { create: true }))!;
  });
  afterEach(async () => {
    await store.close();
    await location.drop();
  });

  it('one offer a chat: read back within the window, replaced by a newer one, apart per chat and session', async () => {
    await writer.recordOffer(A, Buffer.from('first'), 1_000);
    await writer.recordOffer(B, Buffer.from('other chat'), 1_000);
    const offer = await writer.readOffer(A, 1_000);
    expect(offer).toEqual({ chat: A, payload: expect.anything(), createdAt: 1_000 });
    expect(Buffer.from(offer!.payload).toString()).toBe('first');
    // Made before the window starts: gone for the reader.
    expect(await writer.readOffer(A, 1_001)).toBeNull();
    await writer.recordOffer(A, Buffer.from('second'), 2_000);
    expect(Buffer.from((await writer.readOffer(A, 1_500))!.payload).toString()).toBe('second');
    expect(Buffer.from((await writer.readOffer(B, 0))!.payload).toString()).toBe('other chat');
    const other = (await states.claim('wa1.two', { create: true }))!;
    expect(await other.readOffer(A, 0)).toBeNull();
    expect(await store.db.selectFrom('network_offers').selectAll().execute()).toHaveLength(2);
  });

  it('a writer that lost its claim records nothing', async () => {
    await writer.recordOffer(A, Buffer.from('kept'), 1_000);
    const newer = (await states.claim('wa1.one', { create: false }))!;
    await expect(writer.recordOffer(A, Buffer.from('stale'), 2_000)).rejects.toBeInstanceOf(StaleNetworkStateError);
    expect(Buffer.from((await newer.readOffer(A, 0))!.payload).toString()).toBe('kept');
  });

  it('scans offers and sent records in order, page by page', async () => {
    for (const chat of [B, A, '6283333333333']) await writer.recordOffer(chat, Buffer.from(chat), 5);
    const first = await writer.scanOffers(null, 2);
    expect(first.map((o) => o.chat)).toEqual([A, B]);
    expect(first[0]).toMatchObject({ createdAt: 5 });
    expect((await writer.scanOffers(B, 2)).map((o) => o.chat)).toEqual(['6283333333333']);
    for (const id of ['M2', 'M1', 'M3']) await writer.recordSent(id, Buffer.from(id), 5);
    expect((await writer.scanSent(null, 2)).map((r) => r.id)).toEqual(['M1', 'M2']);
    const rest = await writer.scanSent('M2', 2);
    expect(rest.map((r) => [r.id, Buffer.from(r.payload).toString()])).toEqual([['M3', 'M3']]);
  });

  it('prunes offers made before a time, in batches, and deletes them with the session', async () => {
    const now = Date.now();
    await writer.recordOffer(A, Buffer.of(1), now - 25 * 3_600_000);
    await writer.recordOffer(B, Buffer.of(2), now - 24 * 3_600_000 - 1);
    await writer.recordOffer('6283333333333', Buffer.of(3), now);
    expect(await states.pruneOffers(now - 24 * 3_600_000, 1)).toBe(1);
    expect(await states.pruneOffers(now - 24 * 3_600_000, 10)).toBe(1);
    expect(await states.pruneOffers(now - 24 * 3_600_000, 10)).toBe(0);
    expect((await writer.scanOffers(null, 10)).map((o) => o.chat)).toEqual(['6283333333333']);
    await states.discard('wa1.one');
    expect(await store.db.selectFrom('network_offers').selectAll().execute()).toEqual([]);
  });
});
