/**
 * Finding a sending device by its number, on the hot path of every send.
 *
 * Owns: a short-lived in-memory cache of (account, number) → device row.
 * Changes made through this process clear it at once; changes made elsewhere
 * (the CLI, another node) are seen within TTL_MS. Whether a device can send
 * right now is never taken from here: that is the live connection's answer.
 * Must never: cache a miss (a device created a moment ago must be found).
 */
import type { Store } from '../store/store.js';
import { devicesRepository, type DeviceRow } from './repository.js';

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

export class DeviceDirectory {
  private readonly cache = new Map<string, { row: DeviceRow; at: number }>();

  constructor(private readonly store: Store) {}

  async findByPhone(accountId: number, phone: string): Promise<DeviceRow | undefined> {
    const key = `${accountId}:${phone}`;
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit !== undefined && now - hit.at < TTL_MS) return hit.row;
    const row = await devicesRepository.findByPhone(this.store.db, accountId, phone);
    if (row === undefined) {
      this.cache.delete(key);
      return undefined;
    }
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { row, at: now });
    return row;
  }

  /** A device changed (settings, status, pairing, deletion): forget what is known. Rare, so all of it. */
  invalidate(): void {
    this.cache.clear();
  }
}
