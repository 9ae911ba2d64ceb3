/**
 * Group commit: many concurrent writers share one transaction, so durable
 * commits (an fsync each on SQLite with synchronous=FULL) do not cost one
 * fsync per request.
 *
 * Owns: collecting items while a commit is in flight, handing the next batch
 * to a processor inside one transaction, and answering each item once that
 * transaction has committed. A processor reports business outcomes as values;
 * if it throws, the transaction is rolled back and every item of the batch is
 * processed again in a transaction of its own, so one bad item cannot fail its
 * neighbours.
 * Must never: answer an item before its transaction commits.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Processor<I, O> = (trx: Transaction<Database>, items: I[]) => Promise<O[]>;

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly process: Processor<I, O>,
    private readonly maxBatch = 512,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        // Let the other requests of this turn of the event loop join the batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.commit(this.queue.splice(0, this.maxBatch));
    this.running = false;
  }

  private async commit(batch: Pending<I, O>[]): Promise<void> {
    try {
      const results = await this.db.transaction().execute((trx) =>
        this.process(
          trx,
          batch.map((p) => p.item),
        ),
      );
      batch.forEach((pending, i) => pending.resolve(results[i] as O));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const pending of batch) await this.commit([pending]);
    }
  }
}

type Job<T> = (trx: Transaction<Database>) => Promise<T>;

/** Group commit of independent jobs, run one after another in the shared transaction. */
export class WriteBatcher {
  private readonly group: GroupCommit<Job<unknown>, unknown>;

  constructor(db: Kysely<Database>, maxBatch = 256) {
    this.group = new GroupCommit(
      db,
      async (trx, jobs) => {
        const out: unknown[] = [];
        for (const job of jobs) out.push(await job(trx));
        return out;
      },
      maxBatch,
    );
  }

  run<T>(job: Job<T>): Promise<T> {
    return this.group.submit(job) as Promise<T>;
  }
}
