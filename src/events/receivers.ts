/**
 * The health of each webhook receiver (a device's own webhook_url, or an account webhook), as this process has seen it
 * (issue 10, items 15 and 17): a receiver that keeps failing is backed off as
 * a whole, so its backlog stops being tried event by event (and stops filling
 * the deliverer's claims) while it is down.
 *
 * Owns: the receivers' keys (`receiverKey`), counting consecutive failed attempts per receiver, the pause that
 * follows PAUSE_AFTER of them (growing along the retry schedule with each
 * failed probe), and when an operator must be warned (failing for an hour,
 * again every hour). Pure bookkeeping: time comes in as arguments.
 * Must never: touch the store, log, or keep more than MAX_TRACKED receivers
 * (a success forgets a receiver; the oldest failing ones are forgotten first).
 */

/** A receiver: `d<device id>` for a device's own webhook_url, `w<webhook id>` for an account webhook. */
export type ReceiverKey = string;

/** The receiver a delivery goes to. */
export function receiverKey(delivery: { readonly device_id: number; readonly webhook_id: string | null }): ReceiverKey {
  return delivery.webhook_id === null ? `d${delivery.device_id}` : `w${delivery.webhook_id}`;
}

/** What a receiver key names: a device's own webhook_url, or an account webhook. */
export function receiverOf(key: ReceiverKey): { readonly deviceId: number } | { readonly webhookId: string } {
  return key.startsWith('d') ? { deviceId: Number(key.slice(1)) } : { webhookId: key.slice(1) };
}

/** Consecutive failed attempts after which the receiver is paused. */
export const PAUSE_AFTER = 3;
/** A receiver failing this long is worth a warning in the operator's log, and again after as long. */
export const WARN_AFTER_MS = 60 * 60_000;
const MAX_TRACKED = 10_000;

interface Health {
  failures: number;
  /** How many pauses this run of failures has caused (the next pause is longer). */
  pauses: number;
  firstFailureAt: number;
  pausedUntil: number;
  warnedAt: number | null;
}

export interface FailureVerdict {
  /** The receiver is paused until then (0: not paused). Deliveries of the device wait at least as long. */
  readonly pausedUntil: number;
  /** This failure started a new pause: the device's waiting backlog should be moved past it. */
  readonly newlyPaused: boolean;
  /** Set when the operator should be warned now: failing since then. */
  readonly warnFailingSince: number | null;
  readonly failures: number;
}

export class ReceiverHealth {
  private readonly devices = new Map<ReceiverKey, Health>();

  constructor(private readonly scheduleMs: readonly number[]) {}

  /** An attempt to the device's receiver failed at `now`. */
  failed(deviceId: ReceiverKey, now: number): FailureVerdict {
    let health = this.devices.get(deviceId);
    if (health === undefined) {
      if (this.devices.size >= MAX_TRACKED) this.devices.delete(this.devices.keys().next().value as ReceiverKey);
      health = { failures: 0, pauses: 0, firstFailureAt: now, pausedUntil: 0, warnedAt: null };
      this.devices.set(deviceId, health);
    }
    health.failures++;
    let newlyPaused = false;
    // Attempts already in flight when the pause began fail inside it: they do not lengthen it.
    if (health.failures >= PAUSE_AFTER && now >= health.pausedUntil) {
      const step = this.scheduleMs[Math.min(health.pauses, this.scheduleMs.length - 1)] ?? 0;
      health.pauses++;
      health.pausedUntil = now + step;
      newlyPaused = true;
    }
    let warnFailingSince: number | null = null;
    if (
      now - health.firstFailureAt >= WARN_AFTER_MS &&
      (health.warnedAt === null || now - health.warnedAt >= WARN_AFTER_MS)
    ) {
      health.warnedAt = now;
      warnFailingSince = health.firstFailureAt;
    }
    return { pausedUntil: health.pausedUntil, newlyPaused, warnFailingSince, failures: health.failures };
  }

  /** An attempt succeeded: the receiver is healthy again. Answers whether it had been failing. */
  succeeded(deviceId: ReceiverKey): boolean {
    return this.devices.delete(deviceId);
  }

  /** When the device's receiver may be tried again (0: now). */
  pausedUntil(deviceId: ReceiverKey): number {
    return this.devices.get(deviceId)?.pausedUntil ?? 0;
  }

  /** Devices paused at `now`, at most `max` of them (the claim leaves them out). */
  paused(now: number, max: number): ReceiverKey[] {
    const out: ReceiverKey[] = [];
    for (const [deviceId, health] of this.devices) {
      if (health.pausedUntil > now) out.push(deviceId);
      if (out.length >= max) break;
    }
    return out;
  }

  /** Someone asked for an attempt now (a manual retry): the pause ends, the failure count stays. */
  resume(deviceId: ReceiverKey): void {
    const health = this.devices.get(deviceId);
    if (health !== undefined) health.pausedUntil = 0;
  }
}
