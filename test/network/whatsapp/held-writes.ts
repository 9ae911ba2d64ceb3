// The store behind a scripted WhatsApp network, with some session writes held until the test lets them go: what
// the crash-window tests need to stop a write half way (test/network/whatsapp/pairing-crash.test.ts holds the
// credentials writes, restart-key-writes.test.ts a closed socket's key writes).
import pino from 'pino';
import { systemClock } from '../../../src/clock.js';
import { SqlNetworkStateStore } from '../../../src/devices/network-state.js';
import type { Network } from '../../../src/network/network.js';
import type { NetworkStateStore, NetworkStateWriter } from '../../../src/network/state.js';
import { createWhatsAppNetwork } from '../../../src/network/whatsapp/index.js';
import { KEYS, WhatsAppHarness, SCRIPTED_PRE_KEYS } from './harness.js';

type Changes = Parameters<NetworkStateWriter['write']>[0];

/** The store, with every write that `held` picks held until `release()` once `hold` is set. */
export class HeldWrites implements NetworkStateStore {
  hold = false;
  /** How many writes were held so far. */
  held = 0;
  private waiting: Array<() => void> = [];

  constructor(
    private readonly inner: NetworkStateStore,
    private readonly picks: (changes: Changes) => boolean,
  ) {}

  release(): void {
    this.hold = false;
    for (const go of this.waiting.splice(0)) go();
  }

  async claim(session: string, options: { readonly create: boolean }): Promise<NetworkStateWriter | null> {
    const writer = await this.inner.claim(session, options);
    if (writer === null) return null;
    return Object.assign(Object.create(writer) as NetworkStateWriter, {
      write: async (changes: Changes) => {
        if (this.hold && this.picks(changes)) {
          this.held += 1;
          await new Promise<void>((resolve) => this.waiting.push(resolve));
        }
        return writer.write(changes);
      },
    });
  }

  discard(session: string) {
    return this.inner.discard(session);
  }
  pruneSent(before: number, limit: number) {
    return this.inner.pruneSent(before, limit);
  }
  pruneOffers(before: number, limit: number) {
    return this.inner.pruneOffers(before, limit);
  }
}

export interface HeldNetwork {
  readonly h: WhatsAppHarness;
  readonly states: HeldWrites;
  readonly network: Network;
  close(): Promise<void>;
}

/** A scripted WhatsApp network over the real store, with the writes `picks` chooses held on request. */
export async function openHeldNetwork(picks: (changes: Changes) => boolean): Promise<HeldNetwork> {
  const h = await WhatsAppHarness.open();
  const states = new HeldWrites(new SqlNetworkStateStore(h.store, systemClock), picks);
  const network = createWhatsAppNetwork({
    states,
    keys: KEYS,
    logger: pino({ level: 'silent' }),
    factory: h.wa.factory,
    ackTimeoutMs: 300,
    preKeysAtPairing: SCRIPTED_PRE_KEYS,
  });
  return {
    h,
    states,
    network,
    close: async () => {
      await network.close();
      await h.close();
    },
  };
}
