/**
 * One read of the event log for every follower of this process that asks for the same rows at the same moment:
 * the streams (log-follow.ts) and the brokers (src/destinations/) are woken together by one ring and most of them
 * stand at the same cursor, so each used to run the same query (and on PostgreSQL its horizon query) on its own.
 *
 * A read is shared only within one generation: `ring` starts a new one, and it is called before the followers are
 * woken. A read of the current generation began after the last ring, so it sees every event committed before that
 * ring, which is all a follower woken by it (or waking by itself since) may count on seeing; an event committed
 * later rings again, and the next read is a new one. The rows of a shared read are the same rows for every
 * follower, and none may change them.
 *
 * Owns: the reads in flight and the generation.
 * Must never: answer a read of one key with another key's rows, or with a read begun before the last ring.
 */
export class SharedReads<T> {
  private generation = 0;
  private readonly inFlight = new Map<string, Promise<T>>();

  /** Events may have been appended: reads begun before this are not shared any more. */
  ring(): void {
    this.generation += 1;
    this.inFlight.clear();
  }

  /** `read()`'s answer, or that of the same key's read begun since the last ring and still in flight. */
  read(key: string, read: () => Promise<T>): Promise<T> {
    const shared = this.inFlight.get(key);
    if (shared !== undefined) return shared;
    const generation = this.generation;
    const started = read();
    this.inFlight.set(key, started);
    const done = () => {
      if (this.generation === generation && this.inFlight.get(key) === started) this.inFlight.delete(key);
    };
    started.then(done, done);
    return started;
  }
}
