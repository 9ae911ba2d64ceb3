/**
 * An in-process doorbell between the store and the event log's followers (the
 * deliverer, the log's watch): "events were committed, look now".
 *
 * Owns: fanning one cheap, synchronous call out to the listeners. The store
 * rings it once a commit that appended events has ended (store/appends.ts;
 * ringing before would let the deliverer look before the row is visible on a
 * store with several connections), so no writer of events rings it itself.
 * Must never: carry the events themselves or be needed for correctness: the
 * store holds the queue, and the deliverer also polls, so a lost ring only
 * costs latency (and events recorded by another process are found that way).
 */
export class EventSignal {
  private readonly listeners = new Set<() => void>();

  /** Events were committed. Cheap enough to call once per committed batch. */
  readonly ring = (): void => {
    for (const listener of this.listeners) listener();
  };

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
