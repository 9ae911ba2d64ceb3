// A clock for tests whose time runs on in real time (retries and waits stay real) and that jump it forward when a
// rule needs days or minutes to pass (media expiry, the 15-minute edit window).
import { ManualClock } from '../../src/clock.js';

export class ShiftedClock extends ManualClock {
  private offset = 0;

  override now(): number {
    return Date.now() + this.offset;
  }

  /** Moves this clock's time `ms` ahead of real time (further each call). */
  override advance(ms: number): void {
    this.offset += ms;
  }
}
