/**
 * Finding a sending device by its number, on the hot path of every send.
 *
 * Owns: a short-lived in-memory cache of (account, number) → device row, and
 * gathering the look-ups that miss it over one turn of the event loop into one
 * statement (requests parsed together ask together; one round trip for all).
 * Changes made through this process clear it at once; changes made elsewhere
 * (the CLI, another node) are seen within TTL_MS. Whether a device can send
 * right now is never taken from here: that is the live connection's answer.
 * Must never: cache a miss (a device created a moment ago must be found).
 */
import DataLoader from 'dataloader';
import type { Db } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { devicesRepository, type DeviceRow } from './repository.js';

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

export class DeviceDirectory {
  private readonly cache = new Map<string, { row: DeviceRow; at: number }>();

  private readonly lookups: DataLoader<{ accountId: number; phone: string }, DeviceRow | undefined>;

  constructor(store: Store) {
    this.lookups = new DataLoader((asked) => devicesRepository.findByPhones(store.db, asked), {
      // Never answered from DataLoader's own cache: a miss must reach the store every time.
      cache: false,
      maxBatchSize: 500,
      batchScheduleFn: (run) => setImmediate(run),
    });
  }

  async findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined> {
    const key = `${accountId}:${phone}`;
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit !== undefined && now - hit.at < TTL_MS) return hit.row;
    const row = await this.lookups.load({ accountId, phone });
    this.remember(key, row, now);
    return row;
  }

  /**
   * As findByPhone, from inside a transaction (`db`): a miss is read through it, alone, and remembered as any other.
   * On SQLite the store's one connection is the transaction's, so the gathered read outside it would wait for it.
   */
  async findByPhoneIn(db: Db, accountId: number, phone: string): Promise<DeviceRow | undefined> {
    const key = `${accountId}:${phone}`;
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit !== undefined && now - hit.at < TTL_MS) return hit.row;
    const row = await devicesRepository.findByPhone(db, accountId, phone);
    this.remember(key, row, now);
    return row;
  }

  private remember(key: string, row: DeviceRow | undefined, now: number): void {
    if (row === undefined) {
      this.cache.delete(key);
      return;
    }
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { row, at: now });
  }

  /** A device changed (settings, status, pairing, deletion): forget what is known. Rare, so all of it. */
  invalidate(): void {
    this.cache.clear();
  }
}
