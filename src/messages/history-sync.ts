/**
 * The history sync at pairing, as the gateway hears it (DECISIONS 16; docs/api.md, History sync): each batch the
 * network offers is stored (history.ts) before the network is told it was taken, so it sends the next one only
 * then (never more than a batch per device held here); its end is announced with one `device.history_synced
 * {chats, messages}` per pairing.
 *
 * Owns: each device's history queue (one batch at a time, in order), its running counts, and the once-per-pairing
 * rule: `devices.history_synced_at` is set with the event, in one transaction, and cleared by a new pairing
 * (devices/repository.ts markPaired); while it is set, history the network offers again (a reconnect) is not stored.
 * Must never: raise `message.incoming` or any message event, hold more than the batch being stored, or leave a
 * batch untaken (the network would wait for ever).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { DeviceNetworkListener } from '../devices/connections.js';
import { devicesRepository } from '../devices/repository.js';
import { recordEvent } from '../events/record.js';
import type { HistoryEvent } from '../network/network.js';
import type { Store } from '../store/store.js';
import { storeHistory } from './history.js';

export interface HistorySyncOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly connections: { onEvent(listener: DeviceNetworkListener): () => void };
  readonly logger: FastifyBaseLogger;
  /** `GATEWAY_HISTORY_DAYS`: messages sent within this many days are kept; 0 keeps none and announces nothing. */
  readonly days: number;
}

/** One device's sync under way: its queue and what it stored so far. */
interface DeviceSync {
  chain: Promise<void>;
  messages: number;
  readonly chats: Set<string>;
}

export class HistorySync {
  private readonly syncs = new Map<number, DeviceSync>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: HistorySyncOptions) {}

  start(): void {
    this.unsubscribe ??= this.options.connections.onEvent((deviceId, event) => {
      if (event.type === 'history_messages' || event.type === 'history_synced') this.hear(deviceId, event);
    });
  }

  /** Stops listening and waits for the batches being stored (a sync not ended yet stays unannounced). */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    // Nothing joins a queue once unsubscribed: what is queued now is all there is to wait for.
    await Promise.allSettled([...this.syncs.values()].map((sync) => sync.chain));
  }

  private hear(deviceId: number, event: HistoryEvent): void {
    let sync = this.syncs.get(deviceId);
    if (sync === undefined) {
      sync = { chain: Promise.resolve(), messages: 0, chats: new Set() };
      this.syncs.set(deviceId, sync);
    }
    const own = sync;
    const work = async () => {
      try {
        if (event.type === 'history_messages') await this.store(deviceId, own, event);
        else await this.finish(deviceId, own);
      } catch (error) {
        this.options.logger.error({ err: error, deviceId }, 'a history batch could not be stored');
      } finally {
        if (event.type === 'history_messages') event.taken();
      }
    };
    const chain = own.chain.then(work);
    own.chain = chain;
    void chain.then(() => {
      // The last piece of work of a finished sync lets the device's entry go.
      if (this.syncs.get(deviceId) === own && own.chain === chain && event.type === 'history_synced') {
        this.syncs.delete(deviceId);
      }
    });
  }

  private async device(deviceId: number) {
    const device = await devicesRepository.findById(this.options.store.db, deviceId);
    if (device === undefined || device.deleted_at !== null || device.phone === null) return null;
    // Announced already for this pairing: what the network offers again is not stored again.
    if (device.history_synced_at !== null) return null;
    return { ...device, phone: device.phone };
  }

  private async store(
    deviceId: number,
    sync: DeviceSync,
    event: Extract<HistoryEvent, { type: 'history_messages' }>,
  ): Promise<void> {
    const { store, clock, days } = this.options;
    if (days === 0 || event.messages.length === 0) return;
    const device = await this.device(deviceId);
    if (device === null) return;
    const stored = await store.db
      .transaction()
      .execute((trx) => storeHistory(trx, device, event.messages, days, clock.now()));
    sync.messages += stored.messages;
    for (const chat of stored.chats) sync.chats.add(chat);
  }

  private async finish(deviceId: number, sync: DeviceSync): Promise<void> {
    const { store, clock, days } = this.options;
    if (days === 0) return;
    const device = await this.device(deviceId);
    if (device === null) return;
    const now = clock.now();
    await store.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('devices')
        .set({ history_synced_at: now })
        .where('id', '=', deviceId)
        .where('history_synced_at', 'is', null)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return;
      const data = { chats: sync.chats.size, messages: sync.messages };
      await recordEvent(trx, device, 'device.history_synced', data, now);
    });
    this.options.logger.info(
      { deviceId, chats: sync.chats.size, messages: sync.messages },
      'history sync at pairing stored',
    );
  }
}
