// A claim of webhook deliveries whose answer is lost after the server committed it (PostgreSQL frozen past
// the client's wait, then thawed) leased rows nobody attempts. Those leases counted against the device's
// deliveries in flight, so the device's other deliveries waited until the lease ran out (a minute by
// default): the outage test saw hundreds of incoming messages unannounced for that long. The deliverer now
// hands back whatever a failed claim may have leased before it claims again.
//
// PostgreSQL only: on SQLite the store is in this process and a claim either commits with its answer or not
// at all. The lost answer is played by writing the claim on its own connection (it commits) and then failing
// the claim's transaction with the timeout the store raises when a server stops answering.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { eventsRepository } from '../../src/events/repository.js';
import { StoreTimeoutError } from '../../src/store/faults.js';
import { noStoreAvailable, storeKind } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { sendChat, startHookedGateway, waitForEvent } from './helpers.js';

const PHONE = '6287400000072';

describe.runIf(storeKind === 'postgres' && !noStoreAvailable)('a claim whose answer is lost', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    vi.restoreAllMocks();
    for (const thing of open.reverse()) await thing.close();
  });

  it('leaves nothing leased: the claimed deliveries and the rest of the device go out at once', async () => {
    // The default lease (60 s) is what the lost claim's rows would otherwise wait out.
    const { gw, hooks } = await startHookedGateway(PHONE);
    open.push(gw, hooks);
    await waitForEvent(hooks, 'device.paired');

    const realClaim = eventsRepository.claim;
    // Nothing is claimed until every message.sent is recorded, so the one lost claim takes the first of them.
    let holding = true;
    let lost = 0;
    const claim = vi.spyOn(eventsRepository, 'claim').mockImplementation(async (trx, params) => {
      if (holding) return [];
      if (lost > 0) return realClaim(trx, params);
      // Committed on a connection of its own, as the server commits a transaction whose answer never arrives.
      const leased = await realClaim(gw.app.store.db, params);
      if (leased.length === 0) return leased;
      lost = leased.length;
      throw new StoreTimeoutError('a statement', 6_000);
    });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await sendChat(gw, PHONE, '6287499990072', `lost ${i}`));
    await waitFor(
      () => gw.app.store.db.selectFrom('webhook_events').select(['id']).where('type', '=', 'message.sent').execute(),
      (rows) => rows.length === ids.length,
      { what: 'every message.sent recorded', timeoutMs: 5_000 },
    );
    holding = false; // the poll (50 ms here) claims them
    for (const id of ids) await waitForEvent(hooks, 'message.sent', (event) => event.data.id === id, 5_000);
    expect(claim).toHaveBeenCalled();
    expect(lost).toBeGreaterThan(0);
    await waitFor(
      () =>
        gw.app.store.db.selectFrom('webhook_events').select(['status']).where('type', '=', 'message.sent').execute(),
      (rows) => rows.length === ids.length && rows.every((row) => row.status === 'delivered'),
      { what: 'every message.sent recorded as delivered', timeoutMs: 5_000 },
    );
  });
});
