// A restart's next socket reads the session's keys only after the closed socket's key writes have settled: one whose
// COMMIT met the close is undone after it (network-state.ts), and a socket that read before the undo would decrypt
// with the state it replaced. Over the scripted socket and the real store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Network } from '../../../src/network/network.js';
import { RefusedNetworkStateError } from '../../../src/network/state.js';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { Recorder } from '../helpers.js';
import { SLOW, type WhatsAppHarness } from './harness.js';
import { openHeldNetwork, type HeldNetwork, type HeldWrites } from './held-writes.js';

describe.skipIf(noStoreAvailable)("a restart and the closed socket's key writes", () => {
  let held: HeldNetwork;
  let h: WhatsAppHarness;
  let states: HeldWrites;
  let network: Network;

  beforeEach(async () => {
    held = await openHeldNetwork((changes) => changes.live !== undefined);
    ({ h, states, network } = held);
  });

  afterEach(() => held.close());

  it('the next socket opens once the key write under way when the stream closed has settled', async () => {
    const rec = new Recorder();
    network.connect({ deviceId: 1, session: null }, rec.handler);
    const first = await h.wa.socket(0);
    first.connection({ qr: 'qr-1' });
    first.pairSuccess('4915100000002:7@s.whatsapp.net');
    first.close(515, 'Stream Errored (restart required)');
    const second = await h.wa.socket(1);
    second.connection({ connection: 'open' });
    await rec.wait('connected', undefined, 0, SLOW);

    // A key write of the open socket (a decrypt's) is under way when the network asks for a restart.
    states.hold = true;
    const write = Promise.resolve(
      second.auth.keys.set({ tctoken: { chat: { token: Buffer.from('t'), timestamp: '1' } } }),
    );
    write.catch(() => undefined);
    await waitFor(
      async () => states.held,
      (n) => n > 0,
      { timeoutMs: SLOW, intervalMs: 5, what: 'the key write under way' },
    );
    second.streamOpen = false;
    second.close(515, 'Stream Errored (restart required)');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.wa.sockets.length).toBe(2);
    states.release();
    // The write meets the closed stream: refused; only then does the next socket open.
    await expect(write).rejects.toBeInstanceOf(RefusedNetworkStateError);
    await h.wa.socket(2);
  });
});
