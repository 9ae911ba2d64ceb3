/**
 * When a dropped paired device connects again, and what the operator hears about it (docs/internals.md, Devices
 * and pairing; WhatsApp and sandbox accounts): exponential backoff with equal jitter under a ceiling, floors for
 * drops that need longer (another client replaced the session, a refused protocol version, a network this
 * gateway does not run), a warning once per run of drops in a loop, and the once-per-device error logs.
 *
 * Owns: the delay arithmetic and the reconnect logs. Must never: set timers, read the time but from the injected
 * clock (the one the manager's reconnect timers run on), change a device's state or write the store; the
 * connection manager schedules with the delay it answers.
 */
import type { FastifyBaseLogger } from 'fastify';
import { doubling, jitter } from '../backoff.js';
import type { Clock } from '../clock.js';
import type { ReconnectHint } from '../network/network.js';
import type { Retry } from './connection-state.js';

/** A connection that stayed open this long was stable: the next drop starts the backoff again from the base. */
export const STABLE_MS = 30_000;
/** This many drops within LOOP_WINDOW_MS is a device reconnecting in a loop (warned once per such run). */
const LOOP_DROPS = 5;
const LOOP_WINDOW_MS = 5 * 60_000;

export interface ReconnectPolicyOptions {
  readonly logger: FastifyBaseLogger;
  /** The time drops are counted in (the same clock the reconnect timers run on). */
  readonly clock: Clock;
  /** Uniform numbers in [0, 1) for the jitter (default Math.random); a test fixes them to know each wait exactly. */
  readonly reconnectJitter?: () => number;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
  readonly replacedRetryMs?: number;
  readonly outdatedRetryMs?: number;
}

export class ReconnectPolicy {
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly floorMs: Readonly<Record<ReconnectHint, number>>;
  private readonly random: () => number;
  /** Devices whose refused protocol version was already logged: once per device, not per retry. */
  private readonly outdatedLogged = new Set<number>();
  /** Devices whose network this gateway does not run, already warned about: once per device. */
  private readonly absentLogged = new Set<number>();

  constructor(private readonly options: ReconnectPolicyOptions) {
    this.baseMs = options.reconnectBaseMs ?? 1_000;
    this.maxMs = options.reconnectMaxMs ?? 60_000;
    this.random = options.reconnectJitter ?? Math.random;
    this.floorMs = {
      backoff: 0,
      replaced: options.replacedRetryMs ?? 60_000,
      outdated: options.outdatedRetryMs ?? 600_000,
      absent: options.outdatedRetryMs ?? 600_000,
    };
  }

  /** Counts one more failure and answers the wait before the next attempt, no sooner than `hint` allows. */
  nextDelay(retry: Retry, hint: ReconnectHint = 'backoff'): number {
    retry.failures += 1;
    // Equal jitter: half fixed, half random, so a fleet that dropped together does not return together.
    const delay = jitter(doubling(this.baseMs, this.maxMs, retry.failures), this.random);
    return Math.max(delay, this.floorMs[hint]);
  }

  /** The device connected: its refused protocol version is logged again should it come back. */
  connected(deviceId: number): void {
    this.outdatedLogged.delete(deviceId);
  }

  /** Operators hear once per run of LOOP_DROPS drops within LOOP_WINDOW_MS, not on every drop. */
  warnIfLooping(deviceId: number, retry: Retry): void {
    const now = this.options.clock.now();
    retry.drops.push(now);
    if (retry.drops.length > LOOP_DROPS) retry.drops.shift();
    if (retry.drops.length < LOOP_DROPS || now - retry.drops[0]! > LOOP_WINDOW_MS) return;
    this.options.logger.warn(
      { deviceId, drops: retry.drops.length, withinMs: now - retry.drops[0]!, attempt: retry.failures },
      'device reconnecting in a loop',
    );
    retry.drops = [];
  }

  /** Drops that need more than the usual backoff are told to the operator. */
  logDrop(deviceId: number, reason: string, hint: ReconnectHint): void {
    const { logger } = this.options;
    if (hint === 'replaced') {
      logger.warn(
        { deviceId, reason, retryInMs: this.floorMs.replaced },
        'another client replaced the device session; reconnecting later',
      );
    } else if (hint === 'absent' && !this.absentLogged.has(deviceId)) {
      this.absentLogged.add(deviceId);
      logger.warn(
        { deviceId, reason, retryInMs: this.floorMs.absent },
        'the device is paired on a network this gateway does not run; it stays paired there',
      );
    } else if (hint === 'outdated' && !this.outdatedLogged.has(deviceId)) {
      this.outdatedLogged.add(deviceId);
      logger.error(
        { deviceId, reason, retryInMs: this.floorMs.outdated },
        'the network refused the client protocol version; the network library needs an upgrade',
      );
    }
  }
}
