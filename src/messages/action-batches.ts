/**
 * Message actions accepted in batches on SQLite (docs/internals.md, Message actions): every edit, delete and read
 * mark whose transaction would start while a commit is in flight joins the next shared commit (store/batcher.ts), as
 * sends do (acceptance.ts), so a burst of them costs one commit (one fsync, on the store's only writer), not one
 * each. Reactions have their own batched writer with multi-row statements, on both stores (reaction-writer.ts).
 * On PostgreSQL each action stays a transaction of its own: an action is several statements, a batch would run them
 * one after another on one connection, and the pool running them side by side measured faster (bench/README.md,
 * Message actions).
 *
 * Owns: running each action's work in a savepoint of the shared transaction, in arrival order, so an action refused
 * with an ApiError (not editable, not deletable, ...) leaves nothing of its own behind (its key's claim included)
 * and its neighbours still commit; handing the refusal back to its caller once the batch is over.
 * Must never: answer an action before its transaction commits, keep a refused action's writes, or make an action's
 * outcome depend on the store (only how it is committed differs). Any other error (the store's) is the batch's: the
 * Committer rolls it back and runs each item alone.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { ApiError } from '../errors.js';
import type { Committer } from '../store/batcher.js';
import { onPostgres } from '../store/dialect.js';
import type { Database } from '../store/schema.js';

type Job = (trx: Transaction<Database>) => Promise<unknown>;
type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: ApiError };

export class ActionBatches {
  private readonly submit: (job: Job) => Promise<Result>;
  private readonly shared: boolean;

  constructor(
    committer: Committer,
    private readonly db: Kysely<Database>,
  ) {
    this.shared = !onPostgres(db);
    this.submit = committer.channel<Job, Result>(async (trx, jobs) => {
      const results: Result[] = [];
      for (const job of jobs) results.push(await inSavepoint(trx, job));
      return results;
    });
  }

  /** Runs `job` in the next shared transaction (its own on PostgreSQL); its answer or refusal once that has committed. */
  async run<T>(job: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    if (!this.shared) return this.db.transaction().execute(job);
    const result = await this.submit(job);
    if (!result.ok) throw result.error;
    return result.value as T;
  }
}

async function inSavepoint(trx: Transaction<Database>, job: Job): Promise<Result> {
  await sql`savepoint message_action`.execute(trx);
  try {
    const value = await job(trx);
    await sql`release savepoint message_action`.execute(trx);
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // Undoes what this action wrote; the savepoint stays after a rollback to it, so it is released as well.
    await sql`rollback to savepoint message_action`.execute(trx);
    await sql`release savepoint message_action`.execute(trx);
    return { ok: false, error };
  }
}
