/**
 * Group commit: many concurrent writers share one transaction, so durable
 * commits (an fsync each on SQLite with synchronous=FULL, which also blocks
 * the event loop while it lasts) are paid once per batch, not per request.
 *
 * Owns: one queue of pending work per purpose ("channel": acceptance, status
 * changes, ...), and a single commit loop that takes what every channel has
 * pending into the same transaction, then answers each item once it has
 * committed. A channel's processor reports business outcomes as values; if
 * any processor throws, the transaction is rolled back and every item is
 * processed again in a transaction of its own, so one bad item cannot fail
 * its neighbours. A store fault (the database down, frozen or unable to
 * write) fails the batch and everything queued behind it at once: retrying
 * item by item would only wait out the same fault once per item.
 * Must never: answer an item before its transaction commits.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { storeFault } from './faults.js';

type Processor<I, O> = (trx: Transaction<Database>, items: I[]) => Promise<O[]>;

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

interface Channel<I, O> {
  readonly process: Processor<I, O>;
  queue: Pending<I, O>[];
}

type Taken = Array<{ channel: Channel<unknown, unknown>; batch: Pending<unknown, unknown>[] }>;

export class Committer {
  private readonly channels: Channel<unknown, unknown>[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatch = 512,
  ) {}

  /** A queue whose items are written by `process`, in commits shared with the other channels. */
  channel<I, O>(process: Processor<I, O>): (item: I) => Promise<O> {
    const channel: Channel<I, O> = { process, queue: [] };
    this.channels.push(channel as Channel<unknown, unknown>);
    return (item) =>
      new Promise<O>((resolve, reject) => {
        channel.queue.push({ item, resolve, reject });
        if (!this.running) {
          this.running = true;
          // Let the other requests of this turn of the event loop join the batch.
          setImmediate(() => void this.drain());
        }
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const taken: Taken = this.channels
        .filter((channel) => channel.queue.length > 0)
        .map((channel) => ({ channel, batch: channel.queue.splice(0, this.maxBatch) }));
      if (taken.length === 0) break;
      await this.commit(taken);
    }
    this.running = false;
  }

  private async commit(taken: Taken): Promise<void> {
    try {
      const results = await this.db.transaction().execute(async (trx) => {
        const out: unknown[][] = [];
        for (const { channel, batch } of taken)
          out.push(
            await channel.process(
              trx,
              batch.map((p) => p.item),
            ),
          );
        return out;
      });
      taken.forEach(({ batch }, c) => batch.forEach((pending, i) => pending.resolve(results[c]![i])));
    } catch (error) {
      if (storeFault(error) !== null) {
        // The store is out of service: no item can commit now. Everything waiting fails at once (an item
        // queued behind a frozen server would otherwise wait for its own timeout after this one's).
        for (const { batch } of taken) for (const pending of batch) pending.reject(error);
        for (const channel of this.channels) for (const pending of channel.queue.splice(0)) pending.reject(error);
        return;
      }
      const single = taken.length === 1 && taken[0]!.batch.length === 1;
      if (single) {
        taken[0]!.batch[0]!.reject(error);
        return;
      }
      for (const { channel, batch } of taken) {
        for (const pending of batch) await this.commit([{ channel, batch: [pending] }]);
      }
    }
  }
}

type Job<T> = (trx: Transaction<Database>) => Promise<T>;

/** Independent jobs, run one after another in the shared transaction. */
export class WriteBatcher {
  private readonly submit: (job: Job<unknown>) => Promise<unknown>;

  constructor(committer: Committer) {
    this.submit = committer.channel<Job<unknown>, unknown>(async (trx, jobs) => {
      const out: unknown[] = [];
      for (const job of jobs) out.push(await job(trx));
      return out;
    });
  }

  run<T>(job: Job<T>): Promise<T> {
    return this.submit(job) as Promise<T>;
  }
}
