/**
 * The dispatcher's reads of the store outside its commits, gathered: the head of a device's queue, and the device's
 * row, read for the send-time guard and for the status writes that announce with it (one repository read for both).
 * Lanes woken together (a group commit announces many devices at once; their reads then finish together) ask at the
 * same moment, and each kind of read goes to the store once for all of them (DataLoader), not once a lane. On
 * PostgreSQL that is one round trip instead of one per device; on SQLite the reads stay one per device.
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
  private readonly rows: DataLoader<number, DeviceRow | undefined>;
  private readonly guards: DataLoader<number, SenderState | undefined>;

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
    const rowsOf = async (ids: readonly number[]) => {
      const rows = await devicesRepository.findByIds(db, [...new Set(ids)]);
      return ids.map((id) => rows.get(id));
    };
    // The guard is asked by lanes woken together, in one tick: read at once, never a turn later (a lane sends one
    // message at a time, so a delay here is a delay per message).
    this.guards = new DataLoader(
      async (ids: readonly number[]) => {
        const states = await devicesRepository.senderStates(db, [...new Set(ids)]);
        return ids.map((id) => states.get(id));
      },
      { cache: false, maxBatchSize: MAX_DEVICES_PER_READ },
    );
    // Sends and receipts end in callbacks of their own: gathered over one turn of the event loop, not one tick.
    this.rows = new DataLoader(rowsOf, {
      cache: false,
      maxBatchSize: MAX_DEVICES_PER_READ,
      batchScheduleFn: (run) => setImmediate(run),
    });
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
    return this.guards.load(deviceId);
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
