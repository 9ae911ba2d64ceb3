/**
 * The dispatcher's reads of the store outside its commits, gathered: the head of a device's queue, the send-time
 * guard's view of the device, and the device row its status writes announce with. Lanes woken together (a group commit announces many devices at once; their reads then finish together)
 * ask in the same tick, and each kind of read goes to the store once for all of them (DataLoader), not once a lane.
 * On PostgreSQL that is one round trip instead of one per device; on SQLite the reads stay one per device.
 *
 * Owns: gathering and splitting those reads.
 * Must never: answer from a cache (every answer is read after it was asked for: the guard must see a suspension
 * made a moment ago by another process); mix the answers of two devices.
 */
import DataLoader from 'dataloader';
import { devicesRepository, type DeviceRow, type SenderState } from '../devices/repository.js';
import { messagesRepository, type MessageRow } from '../messages/repository.js';
import type { Db } from '../store/schema.js';

/** At most this many devices in one statement; a larger gathering is split. */
const MAX_DEVICES_PER_READ = 500;

interface QueueHead {
  readonly deviceId: number;
  readonly afterSeq: number;
}

export class QueueReads {
  private readonly heads: DataLoader<QueueHead, MessageRow[], string>;
  private readonly senders: DataLoader<number, SenderState | undefined>;
  private readonly rows: DataLoader<number, DeviceRow | undefined>;

  constructor(db: Db, limit: number) {
    this.heads = new DataLoader(
      async (asked) => {
        // One device at one cursor per statement: a lane reads its queue once at a time, but be exact regardless.
        const distinct = [...new Map(asked.map((head) => [`${head.deviceId}:${head.afterSeq}`, head])).values()];
        const found = new Map<string, MessageRow[]>();
        for (const part of partsOf(distinct)) {
          const byDevice = await messagesRepository.pendingAfterMany(db, part, limit);
          for (const head of part) found.set(`${head.deviceId}:${head.afterSeq}`, byDevice.get(head.deviceId) ?? []);
        }
        return asked.map((head) => found.get(`${head.deviceId}:${head.afterSeq}`) ?? []);
      },
      { cache: false, maxBatchSize: MAX_DEVICES_PER_READ },
    );
    this.senders = new DataLoader(
      async (ids) => {
        const states = await devicesRepository.senderStates(db, [...new Set(ids)]);
        return ids.map((id) => states.get(id));
      },
      { cache: false, maxBatchSize: MAX_DEVICES_PER_READ },
    );
    this.rows = new DataLoader(
      async (ids) => {
        const rows = await devicesRepository.findByIds(db, [...new Set(ids)]);
        return ids.map((id) => rows.get(id));
      },
      // Sends and receipts end in callbacks of their own: gathered over one turn of the event loop, not one tick.
      { cache: false, maxBatchSize: MAX_DEVICES_PER_READ, batchScheduleFn: (run) => setImmediate(run) },
    );
  }

  /** The device's next pending messages after `afterSeq`, in order (at most the limit). */
  pendingAfter(deviceId: number, afterSeq: number): Promise<MessageRow[]> {
    return this.heads.load({ deviceId, afterSeq });
  }

  /** The device's row, read now (undefined: no such device). */
  device(deviceId: number): Promise<DeviceRow | undefined> {
    return this.rows.load(deviceId);
  }

  /** What the send-time guard needs of the device, read now (undefined: no such device). */
  senderState(deviceId: number): Promise<SenderState | undefined> {
    return this.senders.load(deviceId);
  }
}

/** The heads split so that each part names a device once: a device's second cursor (never from the lanes) goes in the next part. */
function partsOf(heads: readonly QueueHead[]): QueueHead[][] {
  const parts: QueueHead[][] = [];
  const seen = new Map<number, number>();
  for (const head of heads) {
    const index = seen.get(head.deviceId) ?? 0;
    seen.set(head.deviceId, index + 1);
    (parts[index] ??= []).push(head);
  }
  return parts;
}
