// The webhook deliverer reads where each claimed delivery goes (its device's
// URL, format and secrets) in the claim's own transaction. Read afterwards, a
// failed read left the claimed deliveries leased and unattempted until the
// lease ran out (a minute by default); now the claim is rolled back with it
// and the deliveries are claimed again at once.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { eventsRepository } from '../../src/events/repository.js';
import { noStoreAvailable } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { sendChat, startHookedGateway, waitForEvent } from './helpers.js';

const PHONE = '6287400000071';

describe.skipIf(noStoreAvailable)('claiming webhook deliveries', () => {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterAll(async () => {
    vi.restoreAllMocks();
    for (const thing of open.reverse()) await thing.close();
  });

  it('a claim whose targets cannot be read leaves nothing leased: the delivery goes out at once', async () => {
    // The default lease (60 s) is what a claim left behind would wait out.
    const { gw, hooks } = await startHookedGateway(PHONE);
    open.push(gw, hooks);
    await waitForEvent(hooks, 'device.paired');

    const targets = vi.spyOn(eventsRepository, 'targets').mockRejectedValueOnce(new Error('the read failed'));
    const id = await sendChat(gw, PHONE, '6287499990071');
    await waitForEvent(hooks, 'message.sent', (event) => event.data.id === id, 5_000);
    expect(targets).toHaveBeenCalled();
    // The outcome is written once the receiver has answered.
    await waitFor(
      () =>
        gw.app.store.db
          .selectFrom('webhook_events')
          .select(['status', 'attempts'])
          .where('type', '=', 'message.sent')
          .execute(),
      (rows) => rows.length === 1 && rows[0]!.status === 'delivered',
      { what: 'message.sent recorded as delivered', timeoutMs: 5_000 },
    );
  });
});
