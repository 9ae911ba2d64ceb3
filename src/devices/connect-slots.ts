/**
 * The cap on simultaneous connects of this node's devices (docs/internals.md, Devices and pairing): a fleet that
 * reconnects after a restart opens at most `limit` connections at a time, the rest wait their turn in order.
 *
 * Owns: the count of slots in use and the queue of waiting connects. Must never: know devices or connections,
 * or start a waiting connect once closed.
 */
import type { Slot } from './connection-state.js';

export class ConnectSlots {
  private inUse = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;

  constructor(private readonly limit: number) {}

  /** Runs `run` with a slot now when one is free, or when one is given back. */
  acquire(run: (slot: Slot) => void): void {
    if (this.inUse < this.limit) this.grant(run);
    else this.waiting.push(() => this.grant(run));
  }

  /** Waiting connects are not started any more (slots given back after this start nothing). */
  close(): void {
    this.closed = true;
  }

  private grant(run: (slot: Slot) => void): void {
    this.inUse += 1;
    let held = true;
    run({
      release: () => {
        if (!held) return;
        held = false;
        this.inUse -= 1;
        const next = this.waiting.shift();
        if (next !== undefined && !this.closed) next();
      },
    });
  }
}
