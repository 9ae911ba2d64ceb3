/**
 * The cap on the restarts the network asks one connection for (stream error 515; docs/whatsapp.md, Restarts).
 *
 * WhatsApp asks for one restart right after pairing, and may ask again later; each is followed at once, with no
 * backoff, since it is part of the protocol. A network (or a fault) that keeps asking would make that a tight loop
 * of logins, so past RESTART_CAP restarts within RESTART_WINDOW_MS the connection stops following them and ends as
 * a drop: the gateway then reconnects with its backoff, as for any other drop.
 *
 * Owns: counting one connection's restarts within the window. Pure: the time is passed in.
 * Must never: decide what happens past the cap (the connection does) or count anything but restarts the
 * network asked for (a new pairing socket when QR codes run out is bounded by the pairing window instead).
 */

/** Restarts one connection follows within RESTART_WINDOW_MS; the next one within it ends the connection. */
export const RESTART_CAP = 3;
export const RESTART_WINDOW_MS = 60_000;

export class RestartBudget {
  private readonly times: number[] = [];

  constructor(
    private readonly cap = RESTART_CAP,
    private readonly windowMs = RESTART_WINDOW_MS,
  ) {}

  /** Records a restart asked for at `now`: true while it is within the cap, false once it is one too many. */
  take(now: number): boolean {
    while (this.times.length > 0 && now - this.times[0]! >= this.windowMs) this.times.shift();
    this.times.push(now);
    return this.times.length <= this.cap;
  }

  /** Why the connection ended, for the device's reason and the log. */
  reason(): string {
    return `the network asked for a restart more than ${this.cap} times within ${Math.round(this.windowMs / 1000)} s`;
  }
}
