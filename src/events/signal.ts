/**
 * An in-process doorbell between the code that records webhook events and the
 * deliverer: "events were committed, look now".
 *
 * Owns: fanning one cheap, synchronous call out to the listeners. Callers ring
 * it after the transaction that recorded an event has committed (ringing
 * before would let the deliverer look before the row is visible on a store
 * with several connections).
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
