/**
 * The dispatcher's device rows, kept briefly: every status change needs the device's webhook URL, and reading it
 * per message was a large share of the dispatch cost. Changes through this process clear it at once (`forget`).
 *
 * Owns: the cache and how long an entry is trusted (by the dispatcher's clock).
 * Must never: answer the send-time guard (that is read fresh, queue-reads.ts senderState), or write.
 */
import type { Clock } from '../clock.js';
import { devicesRepository, type DeviceRow } from '../devices/repository.js';
import type { Db } from '../store/schema.js';
import type { QueueReads } from './queue-reads.js';

const DEVICE_CACHE_MS = 1000;

export class DeviceCache {
  private readonly rows = new Map<number, { row: DeviceRow; at: number }>();

  constructor(
    private readonly reads: QueueReads,
    private readonly clock: Clock,
  ) {}

  async get(db: Db, deviceId: number): Promise<DeviceRow | undefined> {
    const now = this.clock.now();
    const hit = this.rows.get(deviceId);
    if (hit !== undefined && now - hit.at < DEVICE_CACHE_MS) return hit.row;
    // Outside a transaction, misses of lanes reading at once share one statement.
    const row = db.isTransaction ? await devicesRepository.findById(db, deviceId) : await this.reads.device(deviceId);
    if (row !== undefined) this.rows.set(deviceId, { row, at: now });
    return row;
  }

  forget(deviceId: number): void {
    this.rows.delete(deviceId);
  }
}
