// The window between "the phone confirmed the pairing" and "its credentials are stored" (docs/whatsapp.md, A crash
// while pairing), over the scripted socket and the real store: `paired` (which makes the gateway record the device
// PAIRED with the session) is told only once the credentials naming the account are stored, so a crash at any
// moment leaves either a session that logs in or none; and a session stored without them (a half state left by a
// crash before this order) ends logged out, its state deleted, instead of asking for a QR it cannot use.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Network } from '../../../src/network/network.js';
import { loadSessionAuth } from '../../../src/network/whatsapp/auth-state.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import { noStoreAvailable } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';
import { Recorder } from '../helpers.js';
import { identityStored, KEYS, SLOW, type WhatsAppHarness } from './harness.js';
import { openHeldNetwork, type HeldNetwork, type HeldWrites } from './held-writes.js';

describe.skipIf(noStoreAvailable)('a crash between the pairing and its stored credentials', () => {
  let held: HeldNetwork;
  let h: WhatsAppHarness;
  let states: HeldWrites;
  let network: Network;

  beforeEach(async () => {
    held = await openHeldNetwork((changes) => changes.creds !== undefined);
    ({ h, states, network } = held);
  });

  afterEach(() => held.close());

  it('tells `paired` only after the credentials naming the account are stored', async () => {
    const rec = new Recorder();
    network.connect({ deviceId: 1, session: null }, rec.handler);
    const first = await h.wa.socket(0);
    first.connection({ qr: 'qr-1' });
    await rec.wait('qr', undefined, 0, SLOW);
    states.hold = true;
    first.pairSuccess('4915100000002:7@s.whatsapp.net');
    // The credentials write is under way and held: a crash now must not find the device recorded as paired.
    expect(rec.types()).toEqual(['qr']);
    await waitFor(
      async () => states.held,
      (n) => n > 0,
      { timeoutMs: SLOW, intervalMs: 5, what: 'the credentials write under way' },
    );
    // The restart WhatsApp asks for next, and the socket after it opening, do not tell it either.
    first.close(515, 'Stream Errored (restart required)');
    const second = await h.wa.socket(1);
    second.connection({ connection: 'open' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(rec.types()).toEqual(['qr']);
    states.release();
    const paired = await rec.wait('paired', undefined, 0, SLOW);
    await rec.wait('connected', undefined, 0, SLOW);
    expect(rec.types()).toEqual(['qr', 'paired', 'connected']);
    // By then the stored credentials name the account: the session logs in after a restart.
    await identityStored(h.store, paired.session);
  });

  it('a session stored without the account (a half state) ends logged out, its state deleted, no socket opened', async () => {
    // What a crash right after the device was recorded PAIRED, before its credentials were written, used to leave:
    // a session whose stored credentials are the fresh ones of the pairing attempt.
    const session = 'wa1.half-paired';
    const writer = await states.claim(session, { create: true });
    await loadSessionAuth(writer!, new Sealer(KEYS), { fresh: true });
    const rec = new Recorder();
    network.connect({ deviceId: 1, session }, rec.handler);
    const ended = await rec.wait('logged_out', undefined, 0, SLOW);
    expect(ended.reason).toBe('the stored session was never completed (pairing interrupted)');
    expect(rec.types()).toEqual(['logged_out']);
    expect(h.wa.sockets.length).toBe(0);
    const rows = await h.store.db.selectFrom('network_auth').select('session_id').execute();
    expect(rows).toEqual([]);
  });
});
