/**
 * Group commit: many concurrent writers share one transaction, so durable
 * commits (an fsync each on SQLite with synchronous=FULL) do not cost one
 * fsync per request.
 *
 * Owns: collecting jobs while a commit is in flight, running them in order in
 * the next transaction, and answering each job once that transaction has
 * committed. A job reports business outcomes as return values; if a job throws,
 * the transaction is rolled back and every job of the batch is run again in a
 * transaction of its own, so one bad job cannot fail its neighbours.
 * Must never: resolve a job before its transaction commits.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Job<T> = {
  work: (trx: Transaction<Database>) => Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
};

export class WriteBatcher {
  private queue: Job<unknown>[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Job<unknown>);
      if (!this.running) {
        this.running = true;
        // Let the other requests of this turn of the event loop join the batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      await this.commit(batch);
    }
    this.running = false;
  }

  private async commit(batch: Job<unknown>[]): Promise<void> {
    try {
      const results = await this.db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const job of batch) out.push(await job.work(trx));
        return out;
      });
      batch.forEach((job, i) => job.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const job of batch) await this.alone(job);
    }
  }

  private async alone(job: Job<unknown>): Promise<void> {
    try {
      job.resolve(await this.db.transaction().execute((trx) => job.work(trx)));
    } catch (error) {
      job.reject(error);
    }
  }
}
