/**
 * One device's dispatch lane (dispatcher.ts): a cursor into the device's queue, the messages read ahead, its pacing,
 * the decision of what the lane does with the head of the queue, and which heads it sends together (a run).
 *
 * Owns: the lane's bookkeeping and its decisions, which are pure (given the head, the time, the guard's answer).
 * Must never: read the store, call the network or read a clock (the dispatcher hands it the time).
 */
import type { MessageRow } from '../messages/repository.js';
import type { WakeLoop } from '../wake-loop.js';

export interface Lane {
  /** Runs the lane's drive one at a time, on a notify or when its wait is over. */
  readonly loop: WakeLoop;
  /**
   * Something may be in the store that the buffer does not hold: set by every
   * notify, by a full read (more may follow) and by a retry. Without it the
   * lane does not read the queue again, which halves the reads when messages
   * trickle in one at a time.
   */
  stale: boolean;
  /** seq of the last message this lane finished with (sent or failed). */
  cursor: number;
  buffer: MessageRow[];
  /** Clock time of the lane's last send. */
  lastSentAt: number;
  /** The device's send interval, read once and again after the device changed. */
  intervalMs: number | null;
}

export function newLane(loop: WakeLoop): Lane {
  return { loop, stale: true, cursor: 0, buffer: [], lastSentAt: 0, intervalMs: null };
}

/** What was read is no longer to be trusted (a retry was scheduled, the pairing ended): read again. */
export function forgetRead(lane: Lane): void {
  lane.buffer = [];
  lane.stale = true;
}

/** The device left this node: the lane forgets its place and its wait. */
export function resetLane(lane: Lane): void {
  lane.loop.quiet();
  forgetRead(lane);
  lane.cursor = 0;
}

/** The head's outcome is stored: the lane moves past it. */
export function passHead(lane: Lane, head: MessageRow): void {
  lane.buffer.shift();
  lane.cursor = head.seq;
}

/**
 * The heads the lane sends together, claimed in one statement and their outcomes committed together: the head (due,
 * past the guard) and, when the device sends with no interval, the messages after it that are due too, up to `max`.
 * A message that shows typing first ends the run after it, or starts a run of its own: its claim would otherwise
 * hold the messages behind it from a cancel for seconds.
 */
export function runOf(lane: Lane, now: number, max: number): MessageRow[] {
  const run = lane.buffer.slice(0, 1);
  if (lane.intervalMs !== 0 || run[0]?.simulate_typing === 1) return run;
  for (const row of lane.buffer.slice(1, max)) {
    if (row.next_attempt_at > now || row.simulate_typing === 1) break;
    run.push(row);
  }
  return run;
}

/** Typing shown before a message grows with its text: 50 ms a character, between 1 and 5 s. */
export function typingDurationMs(text: string | null): number {
  return Math.min(5000, Math.max(1000, 50 * [...(text ?? '')].length));
}

/** The guard's answer for the head: the same sender, a suspended device, or why the message can never be sent. */
export type Sender = 'same' | 'suspended' | (string & {});

/** What the lane does with its head. */
export type HeadStep =
  | { readonly kind: 'wait'; readonly until: number }
  | { readonly kind: 'send' }
  | { readonly kind: 'end'; readonly reason: string };

/** When the head may go by the clock (its retry time, the device's send interval), or null: now. */
export function dueAt(lane: Lane, head: MessageRow, now: number): number | null {
  const at = Math.max(head.next_attempt_at, lane.lastSentAt + (lane.intervalMs ?? 0));
  return at > now ? at : null;
}

export interface GuardRules {
  /** How long a message may stay queued (24 h). */
  readonly maxQueuedMs: number;
  /** How often a suspended device's lane looks whether it was made active again. */
  readonly suspendedRecheckMs: number;
  /** `failed_reason` of a message that waited on a suspended device past `maxQueuedMs`. */
  readonly suspendedTooLong: string;
}

/** The head, due by the clock, after the send-time guard answered `sender`. */
export function afterGuard(sender: Sender, head: MessageRow, now: number, rules: GuardRules): HeadStep {
  if (sender === 'same') return { kind: 'send' };
  // Accepted for a sender this device no longer is: it ends here, never leaves from another number.
  if (sender !== 'suspended') return { kind: 'end', reason: sender };
  // A suspended device's queue waits, but no longer than any queued message may (docs/internals.md, Sending).
  if (now - head.created_at < rules.maxQueuedMs) return { kind: 'wait', until: now + rules.suspendedRecheckMs };
  return { kind: 'end', reason: rules.suspendedTooLong };
}
