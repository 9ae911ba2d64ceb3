/**
 * The WhatsApp connector over the scripted fake socket and the real store
 * (the project's: SQLite or PostgreSQL), with pairing and reconnecting done
 * the way WhatsApp does them (QR, pair-success, the 515 restart, open).
 * Not a test file itself.
 */
import { BufferJSON, proto, type WAMessage } from 'baileys';
import pino from 'pino';
import { systemClock } from '../../../src/clock.js';
import { SqlNetworkStateStore } from '../../../src/devices/network-state.js';
import type { Network, NetworkConnection } from '../../../src/network/network.js';
import { createWhatsAppNetwork, type WhatsAppNetworkOptions } from '../../../src/network/whatsapp/index.js';
import { Sealer } from '../../../src/network/whatsapp/seal.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { newStoreLocation, type StoreLocation } from '../../helpers/gateway.js';
import { Recorder } from '../helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { FakeWhatsApp, type FakeSocket } from './fake-socket.js';

export const KEYS = { current: Buffer.alloc(32, 0x42), previous: [] };
/** Events here follow store round trips, on a shared and loaded machine: generous deadlines, never tight ones. */
export const SLOW = 10_000;
/**
 * Pre-keys made at each pairing over the scripted socket, which uploads none: the library's 812 took three
 * quarters of the connector tests' time. pre-keys.test.ts asks for the library's count.
 */
export const SCRIPTED_PRE_KEYS = 8;

/**
 * Waits until the session's stored credentials name the paired account. A pairing connection stores them a moment
 * after `connected` (the library's creds update is written in the background); a test that opens the session again
 * sooner, on a loaded machine, would read the fresh credentials of before the scan.
 */
export async function identityStored(store: Store, session: string): Promise<void> {
  const sealer = new Sealer(KEYS);
  await waitFor(
    async () => {
      const row = await store.db
        .selectFrom('network_auth')
        .select('creds')
        .where('session_id', '=', session)
        .executeTakeFirst();
      if (row?.creds == null) return false;
      const plain = sealer.open(Buffer.from(row.creds), { session, kind: 'creds', id: '' }).plain;
      const creds = JSON.parse(plain.toString('utf8'), BufferJSON.reviver) as { me?: { id?: string } };
      return creds.me?.id !== undefined;
    },
    (stored) => stored,
    { timeoutMs: SLOW, what: 'the paired credentials stored' },
  );
}

export interface OverFake {
  readonly connection: NetworkConnection;
  readonly recorder: Recorder;
  readonly socket: FakeSocket;
  readonly session: string;
  readonly phone: string;
}

type NetworkOptions = Partial<Omit<WhatsAppNetworkOptions, 'states' | 'factory' | 'logger'>>;

export class WhatsAppHarness {
  readonly wa = new FakeWhatsApp();
  network: Network;

  private constructor(
    readonly location: StoreLocation,
    readonly store: Store,
    private options: NetworkOptions,
  ) {
    this.network = this.make();
  }

  static async open(options: NetworkOptions = {}): Promise<WhatsAppHarness> {
    const location = await newStoreLocation();
    const store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    return new WhatsAppHarness(location, store, options);
  }

  private make(): Network {
    return createWhatsAppNetwork({
      states: new SqlNetworkStateStore(this.store, systemClock),
      keys: KEYS,
      logger: pino({ level: 'silent' }),
      factory: this.wa.factory,
      ackTimeoutMs: 300,
      preKeysAtPairing: SCRIPTED_PRE_KEYS,
      ...this.options,
    });
  }

  /** Closes the network and starts a new one on the same store, as a gateway restart does. */
  async restart(options: NetworkOptions = this.options): Promise<Network> {
    await this.network.close();
    this.options = options;
    this.network = this.make();
    return this.network;
  }

  /** Pairs a device: QR → pair-success → the 515 restart → open; the connection on its second socket. */
  async pair(deviceId = 1, phone = '4915100000001', expectedPhone?: string): Promise<OverFake> {
    const recorder = new Recorder();
    const base = this.wa.sockets.length;
    const connection = this.network.connect(
      { deviceId, session: null, ...(expectedPhone === undefined ? {} : { expectedPhone }) },
      recorder.handler,
    );
    const first = await this.wa.socket(base);
    first.connection({ qr: 'https://wa.me/settings/linked_devices#ref,noise,identity,adv,platform' });
    first.pairSuccess(`${phone}:7@s.whatsapp.net`);
    first.close(515, 'Stream Errored (restart required)');
    const socket = await this.wa.socket(base + 1);
    socket.connection({ connection: 'open' });
    await recorder.wait('connected', undefined, 0, SLOW);
    const session = recorder.of('paired')[0]!.session;
    await identityStored(this.store, session);
    return { connection, recorder, socket, session, phone };
  }

  /** Reconnects with a stored session; the socket opens and the connection is `connected`. */
  async reconnect(session: string, deviceId = 1): Promise<OverFake> {
    const recorder = new Recorder();
    const before = this.wa.sockets.length;
    const connection = this.network.connect({ deviceId, session }, recorder.handler);
    const socket = await this.wa.socket(before);
    socket.connection({ connection: 'open' });
    const connected = await recorder.wait('connected', undefined, 0, SLOW);
    return { connection, recorder, socket, session, phone: connected.phone };
  }

  async close(): Promise<void> {
    await this.network.close();
    await this.store.close();
    await this.location.drop();
  }
}

/** The server acknowledges every send of this socket right after it, as WhatsApp does. */
export function ackEverySend(socket: FakeSocket): void {
  socket.onSend = async (_jid, _content, options) => {
    setImmediate(() => socket.ack(options.messageId!));
  };
}

/** An upserted message as Baileys hands it over (real protobuf), with Baileys' alternative ids on the key. */
export function upsert(message: { key: Record<string, unknown> } & Record<string, unknown>): WAMessage {
  const built = proto.WebMessageInfo.fromObject({ messageTimestamp: 1_760_000_000, ...message }) as WAMessage;
  const { remoteJidAlt, participantAlt } = message.key;
  Object.assign(built.key, {
    ...(remoteJidAlt === undefined ? {} : { remoteJidAlt }),
    ...(participantAlt === undefined ? {} : { participantAlt }),
  });
  return built;
}

/** A phone sends a text to the device (optionally in a group). */
export function textFrom(socket: FakeSocket, id: string, from: string, text: string, group?: string): void {
  const key =
    group === undefined
      ? { remoteJid: `${from}@s.whatsapp.net`, id }
      : { remoteJid: group, participant: `${from}@s.whatsapp.net`, id };
  socket.ev.emit('messages.upsert', { type: 'notify', messages: [upsert({ key, message: { conversation: text } })] });
}
