/**
 * Message actions accepted in batches (docs/internals.md, Message actions): every action whose transaction would
 * start while a commit is in flight joins the next shared commit (store/batcher.ts), as sends do (acceptance.ts), so
 * a batch of reactions costs one commit (one fsync on SQLite), not one each.
 *
 * Owns: running each action's work in a savepoint of the shared transaction, in arrival order, so an action refused
 * with an ApiError (not editable, not deletable, ...) leaves nothing of its own behind (its key's claim included)
 * and its neighbours still commit; handing the refusal back to its caller once the batch is over.
 * Must never: answer an action before its batch commits, or keep a refused action's writes. Any other error (the
 * store's) is the batch's: the Committer rolls it back and runs each item alone.
 */
import { sql, type Transaction } from 'kysely';
import { ApiError } from '../errors.js';
import type { Committer } from '../store/batcher.js';
import type { Database } from '../store/schema.js';

type Job = (trx: Transaction<Database>) => Promise<unknown>;
type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: ApiError };

export class ActionBatches {
  private readonly submit: (job: Job) => Promise<Result>;

  constructor(committer: Committer) {
    this.submit = committer.channel<Job, Result>(async (trx, jobs) => {
      const results: Result[] = [];
      for (const job of jobs) results.push(await inSavepoint(trx, job));
      return results;
    });
  }

  /** Runs `job` in the next shared transaction; its answer (or its refusal) once that transaction has committed. */
  async run<T>(job: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
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
