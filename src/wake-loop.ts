/**
 * The wake-up loop shared by the workers (the webhook deliverer, the cluster node's rounds, each dispatch lane):
 * one run at a time, started by a wake-up or by a timer, repeated once when woken during a run, stopped cleanly.
 *
 *   idle ──wake()──▶ running ──run resolves with a time──▶ armed (a timer for that time) ──it fires──▶ running
 *   running ──wake()──▶ running, marked: the run is repeated once as soon as it ends (any number of wake-ups)
 *   running ──run throws──▶ armed after a backoff (the error goes to `onError`)
 *   armed ──wake()──▶ running (the timer is dropped: a run decides again when to run next)
 *   armed ──wakeAt(sooner)──▶ armed for the sooner time (a later time never replaces a sooner one)
 *   any ──stop()──▶ stopped, once the run in flight (if any) has ended; nothing runs after it
 *
 * Owns: the run in flight, the repeat mark, the one timer, the count of failures in a row.
 * Must never: run twice at once, run after stop() resolved, lose a wake-up, or leave a timer behind a stop; wait
 * except through the clock it is given (a test moves that clock instead of waiting).
 */
import type { Clock, Timer } from './clock.js';

/** When the next run is due by itself (epoch ms), or null: only a wake-up (or an armed timer) runs it. */
export type NextRun = number | null;

export interface WakeLoopOptions {
  /** One run. Returns when the next is due by itself; a timer armed meanwhile with wakeAt stays if sooner. */
  readonly run: () => Promise<NextRun>;
  /** A run threw; `failures` counts the runs in a row that did. */
  readonly onError: (error: unknown, failures: number) => void;
  /** The wait before the run after the `failures`-th failure in a row. */
  readonly afterErrorMs: (failures: number) => number;
  /** The time runs return and the loop's timer waits for. */
  readonly clock: Clock;
}

export class WakeLoop {
  private current: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: Timer | null = null;
  private timerAt = Infinity;
  private failures = 0;

  constructor(private readonly options: WakeLoopOptions) {}

  /** Whether a run is in flight. */
  get running(): boolean {
    return this.current !== null;
  }

  /** Run now, or once more as soon as the run in flight ends. */
  wake(): void {
    if (this.stopped) return;
    if (this.current !== null) {
      this.again = true;
      return;
    }
    this.current = this.loop().finally(() => {
      this.current = null;
      // Woken after the loop's last look but before it let go: that wake-up runs now rather than being lost.
      if (this.again) this.wake();
    });
  }

  /** Run at `at` (epoch ms) at the latest: arms the timer unless one is armed for sooner. */
  wakeAt(at: number): void {
    if (this.stopped || !(at < this.timerAt)) return;
    this.cancelTimer();
    this.timerAt = at;
    const { clock } = this.options;
    this.timer = clock.after(Math.max(0, Math.ceil(at - clock.now())), () => {
      this.timer = null;
      this.timerAt = Infinity;
      this.wake();
    });
  }

  /** Forgets the armed timer and a pending repeat; a run in flight goes on. */
  quiet(): void {
    this.cancelTimer();
    this.again = false;
  }

  /** Resolves once no run is in flight (repeats included). */
  async settled(): Promise<void> {
    while (this.current !== null) await this.current;
  }

  /** No run starts any more; resolves once the run in flight has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.quiet();
    await this.settled();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      // The run decides afresh when the next one is due.
      this.cancelTimer();
      let next: NextRun;
      try {
        next = await this.options.run();
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        this.options.onError(error, this.failures);
        next = this.options.clock.now() + this.options.afterErrorMs(this.failures);
      }
      if (this.stopped) return;
      if (!this.again && next !== null) this.wakeAt(next);
    } while (this.again && !this.stopped);
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = null;
    this.timerAt = Infinity;
  }
}
