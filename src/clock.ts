/**
 * The source of time for every rule that depends on it (windows, expiry,
 * backoff, waits between runs), so tests can move time instead of sleeping.
 *
 * Owns: reading the time and waiting for it (`after`). Every timer whose due time is computed from `now()` is set
 * through the same clock, so the two never disagree.
 * Must never: be read around (a `Date.now()` or `setTimeout` beside an injected clock is a second clock).
 */

/** A wait set with `Clock.after`. */
export interface Timer {
  /** The callback will not run (a no-op once it ran). */
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once `ms` of this clock's time have passed. */
  after(ms: number, fn: () => void): Timer;
}

function realTimer(ms: number, fn: () => void): Timer {
  const handle = setTimeout(fn, Math.max(0, ms));
  return { cancel: () => clearTimeout(handle) };
}

export const systemClock: Clock = { now: () => Date.now(), after: realTimer };

/** Resolves once `ms` of the clock's time have passed. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.after(ms, resolve));
}

/**
 * A clock whose time a test sets by hand, while its timers wait real time (the delay asked for): for tests that
 * move the time rules read but let the workers' waits run as they would.
 */
export class ManualClock implements Clock {
  constructor(protected current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
  after(ms: number, fn: () => void): Timer {
    return realTimer(ms, fn);
  }
}

interface FakeTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A clock that moves only when a test moves it: its timers run, in due order, as `advance` or `set` passes their
 * time (each seeing `now()` at its own due time), never by themselves.
 */
export class FakeClock extends ManualClock {
  private timers: FakeTimer[] = [];
  private seq = 0;

  override after(ms: number, fn: () => void): Timer {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return {
      cancel: () => {
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  /** Timers set and not yet run nor cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** When those timers are due (this clock's epoch ms), ascending: a test reads what a worker scheduled. */
  get dueTimes(): number[] {
    return this.timers.map((t) => t.at).sort((a, b) => a - b);
  }

  override advance(ms: number): void {
    this.set(this.current + ms);
  }

  override set(ms: number): void {
    const until = Math.max(ms, this.current);
    // A timer a callback sets within the span runs too.
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = ms;
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
