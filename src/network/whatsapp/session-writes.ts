/**
 * The store writes of WhatsApp sessions still under way in this process, by session.
 *
 * Owns: knowing which writes (credentials, signal keys) a session's connections started and have not finished, so
 * that a connection being closed, and the next connection of the same session, can wait for them. A connection that
 * read the session while its predecessor's write was in flight would go on with the state of before that write.
 * Must never: hold anything of a session once its writes are done (no entry per idle session), or fail a write.
 */
export class SessionWrites {
  private readonly pending = new Map<string, Set<Promise<unknown>>>();

  /** Tracks `write` under `session` until it settles; returns it unchanged. */
  track<T>(session: string, write: Promise<T>): Promise<T> {
    let writes = this.pending.get(session);
    if (writes === undefined) this.pending.set(session, (writes = new Set()));
    writes.add(write);
    const done = (): void => {
      writes.delete(write);
      if (writes.size === 0 && this.pending.get(session) === writes) this.pending.delete(session);
    };
    write.then(done, done);
    return write;
  }

  /** Resolves once no write of `session` is under way (writes started while waiting are waited for too). */
  async settled(session: string): Promise<void> {
    for (let writes = this.pending.get(session); writes !== undefined; writes = this.pending.get(session)) {
      await Promise.allSettled([...writes]);
    }
  }

  /** Sessions with writes under way (for tests: nothing is kept once they are done). */
  get size(): number {
    return this.pending.size;
  }
}
