// The dispatch lane's decisions (src/dispatch/lane.ts): when the head may go, and what the send-time guard's answer
// means for it. Pure: the time is handed in.
import { describe, expect, it } from 'vitest';
import { afterGuard, dueAt, newLane, runOf, type GuardRules } from '../../src/dispatch/lane.js';
import type { MessageRow } from '../../src/messages/repository.js';
import type { WakeLoop } from '../../src/wake-loop.js';

const rules: GuardRules = { maxQueuedMs: 86_400_000, suspendedRecheckMs: 1_000, suspendedTooLong: 'too long' };
const head = (fields: Partial<MessageRow>) => ({ seq: 1, next_attempt_at: 0, created_at: 0, ...fields }) as MessageRow;
const lane = (lastSentAt: number, intervalMs: number) => ({
  ...newLane({} as WakeLoop),
  lastSentAt,
  intervalMs,
});

describe('dueAt', () => {
  it('is null once both the retry time and the send interval have passed', () => {
    expect(dueAt(lane(1_000, 500), head({ next_attempt_at: 1_200 }), 1_500)).toBeNull();
  });
  it('is the later of the retry time and the end of the send interval', () => {
    expect(dueAt(lane(1_000, 500), head({ next_attempt_at: 1_700 }), 1_200)).toBe(1_700);
    expect(dueAt(lane(1_000, 500), head({ next_attempt_at: 1_100 }), 1_200)).toBe(1_500);
  });
});

describe('afterGuard', () => {
  it('sends for the same sender, ends the message for another or a deleted device', () => {
    expect(afterGuard('same', head({}), 10, rules)).toEqual({ kind: 'send' });
    expect(afterGuard('the device logged out', head({}), 10, rules)).toEqual({
      kind: 'end',
      reason: 'the device logged out',
    });
  });
  it('lets a suspended device’s message wait, rechecking, until it has been queued too long', () => {
    expect(afterGuard('suspended', head({ created_at: 0 }), 5_000, rules)).toEqual({ kind: 'wait', until: 6_000 });
    expect(afterGuard('suspended', head({ created_at: 0 }), 86_400_000, rules)).toEqual({
      kind: 'end',
      reason: 'too long',
    });
  });
});

describe('runOf', () => {
  const rows = (...fields: Array<Partial<MessageRow>>) =>
    fields.map((f, i) => head({ seq: i + 1, simulate_typing: 0, ...f }));
  const withBuffer = (intervalMs: number, buffer: MessageRow[]) => ({ ...lane(0, intervalMs), buffer });
  it('is the head alone when the device has a send interval', () => {
    expect(runOf(withBuffer(500, rows({}, {}, {})), 10, 100).map((r) => r.seq)).toEqual([1]);
  });
  it('with no interval, takes the due messages after the head, up to the limit', () => {
    expect(runOf(withBuffer(0, rows({}, {}, {}, {})), 10, 3).map((r) => r.seq)).toEqual([1, 2, 3]);
  });
  it('stops before a message waiting for its retry, and at one that shows typing first', () => {
    expect(runOf(withBuffer(0, rows({}, {}, { next_attempt_at: 11 }, {})), 10, 100).map((r) => r.seq)).toEqual([1, 2]);
    expect(runOf(withBuffer(0, rows({}, { simulate_typing: 1 }, {})), 10, 100).map((r) => r.seq)).toEqual([1]);
    expect(runOf(withBuffer(0, rows({ simulate_typing: 1 }, {})), 10, 100).map((r) => r.seq)).toEqual([1]);
  });
});
