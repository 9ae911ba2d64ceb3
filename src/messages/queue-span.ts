/**
 * Where a run of messages lies in its device's queue: the first and last `seq` of the run. The statements that change
 * a run of `pending` messages name it besides the ids, so PostgreSQL finds the run through an index whatever its
 * statistics say (docs/internals.md, The queue's statements and the planner).
 *
 * Owns: that span.
 * Must never: be what decides which messages change (the ids and the statements' conditions do).
 */

/** A message of a device's queue, by id and by its place in the queue. */
export interface QueuedMessage {
  readonly id: string;
  readonly seq: number;
}

/** The first and last place in the queue of these messages (at least one). */
export function queueSpan(messages: readonly QueuedMessage[]): { first: number; last: number } {
  let first = Infinity;
  let last = -Infinity;
  for (const { seq } of messages) {
    if (seq < first) first = seq;
    if (seq > last) last = seq;
  }
  return { first, last };
}
