/**
 * Writes made for a device under its lease epoch, group-committed with the
 * rest of the hot path, fenced all at once (docs/internals.md, Clusters).
 *
 * Each write of a group commit used to check its device's lease with a
 * statement of its own (one per device per commit). Here the writes waiting
 * in one commit are fenced together, in one statement for all their devices
 * (PostgreSQL); a write whose lease moved on is refused (LeaseLostError) and
 * its neighbours, including other devices' writes, commit as usual.
 *
 * Writes may also hand rows to a collector (`BatchCollector`) that stores
 * everything collected in the batch at once, after the last write of the
 * batch and in the same transaction (the webhook events of many status
 * changes in one multi-row insert).
 *
 * Owns: the commit channel of fenced writes and its collectors.
 * Must never: run a write whose lease was refused, or run one before its
 * lease is fenced in the same transaction.
 */
import type { Committer } from '../store/batcher.js';
import type { Db } from '../store/schema.js';
import { LeaseLostError, leaseKey, type DeviceHoldings } from './holdings.js';

/** Stores what the writes of one batch collected, once, at the end of the batch (in its transaction). */
export interface BatchCollector<T> {
  flush(trx: Db, items: T[]): Promise<void>;
}

/** What a write may do beside its own statements. */
export interface WriteBatch {
  /** Hands `item` to `collector`, which stores it with the rest of the batch's before the commit. */
  collect<T>(collector: BatchCollector<T>, item: T): void;
}

type Job<T> = (trx: Db, batch: WriteBatch) => Promise<T>;

interface FencedWrite {
  readonly deviceId: number;
  readonly epoch: number;
  readonly job: Job<unknown>;
}

const REFUSED: unique symbol = Symbol('refused');

export class FencedWrites {
  private readonly submit: (write: FencedWrite) => Promise<unknown>;

  constructor(committer: Committer, holdings: DeviceHoldings) {
    this.submit = committer.channel<FencedWrite, unknown>(async (trx, writes) => {
      const refused = await holdings.fenceAll(trx, writes);
      const collected = new Map<BatchCollector<unknown>, unknown[]>();
      const batch: WriteBatch = {
        collect: (collector, item) => {
          const items = collected.get(collector as BatchCollector<unknown>);
          if (items === undefined) collected.set(collector as BatchCollector<unknown>, [item]);
          else items.push(item);
        },
      };
      const out: unknown[] = [];
      for (const write of writes) {
        out.push(refused.has(leaseKey(write.deviceId, write.epoch)) ? REFUSED : await write.job(trx, batch));
      }
      for (const [collector, items] of collected) await collector.flush(trx, items);
      return out;
    });
  }

  /** Runs `job` in the next group commit if the device is still held here under `epoch`; else LeaseLostError. */
  async run<T>(deviceId: number, epoch: number, job: Job<T>): Promise<T> {
    const result = await this.submit({ deviceId, epoch, job });
    if (result === REFUSED) throw new LeaseLostError(deviceId, epoch);
    return result as T;
  }
}
