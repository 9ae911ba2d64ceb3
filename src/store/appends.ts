/**
 * "Events were appended to the log": said by the store itself once a commit that inserted into the `events` table
 * has ended (or, outside a transaction, once such a statement has), so every follower of the log (the webhook
 * deliverer, the streams, the brokers) looks at once, whichever writer recorded the events. A writer cannot forget
 * to say it: no writer says it at all (docs/internals.md, Webhooks).
 *
 * Owns: recognising a statement that appends to the log (every one is built by events/record.ts, with Kysely's
 * `insert into "events" (…)` on both dialects), and the listeners told after the commit.
 * Must never: tell before the rows are committed (a follower on another connection would not see them yet), tell
 * for a rolled-back transaction, or be needed for correctness: a follower also polls, so a missed ring only costs
 * latency.
 */

const APPEND = 'insert into "events" (';

/** Whether `sql` appends to the event log. */
export function appendsToLog(sql: string): boolean {
  return sql.startsWith(APPEND);
}

export class LogAppends {
  private readonly listeners = new Set<() => void>();

  /** `listener` runs (synchronously) after each commit that appended events; the returned function stops that. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A commit (or a statement outside a transaction) that appended events has ended. */
  committed(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A listener's fault is its own: the commit stands, and the others are still told.
      }
    }
  }
}
