// docs/internals.md, Webhooks: the retry schedule (about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h) with jitter,
// and giving up 24 h after the event was created.
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_AGE_MS, DEFAULT_RETRY_SCHEDULE_MS, afterFailure } from '../../src/events/retry.js';

const policy = { scheduleMs: DEFAULT_RETRY_SCHEDULE_MS, maxAgeMs: DEFAULT_MAX_AGE_MS };
const MIN = 60_000;
const created = Date.UTC(2026, 0, 1);

describe('webhook retry schedule', () => {
  it('waits about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then 2 h each time', () => {
    const expected = [5_000, 30_000, 2 * MIN, 10 * MIN, 30 * MIN, 60 * MIN, 120 * MIN, 120 * MIN, 120 * MIN];
    expected.forEach((wait, i) => {
      const now = created + 1000;
      const middle = afterFailure(policy, i + 1, created, now, () => 0.5);
      expect(middle).toEqual({ retryAt: now + wait });
      const low = afterFailure(policy, i + 1, created, now, () => 0);
      const high = afterFailure(policy, i + 1, created, now, () => 0.999999);
      expect('retryAt' in low && low.retryAt).toBe(now + Math.round(wait * 0.8));
      expect('retryAt' in high && high.retryAt).toBeCloseTo(now + wait * 1.2, -2);
    });
  });

  it('makes the last try at the 24 h mark, and gives up from then on', () => {
    const almost = created + DEFAULT_MAX_AGE_MS - 60_000;
    expect(afterFailure(policy, 12, created, almost, () => 0.5)).toEqual({ retryAt: created + DEFAULT_MAX_AGE_MS });
    expect(afterFailure(policy, 13, created, created + DEFAULT_MAX_AGE_MS)).toEqual({ giveUp: true });
    expect(afterFailure(policy, 1, created, created + DEFAULT_MAX_AGE_MS + 5)).toEqual({ giveUp: true });
  });

  it('spreads receivers that failed together', () => {
    const times = new Set(Array.from({ length: 50 }, () => JSON.stringify(afterFailure(policy, 3, created, created))));
    expect(times.size).toBeGreaterThan(40);
  });
});
