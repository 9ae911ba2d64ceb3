// The arithmetic of the members-add limits (spec 8, docs/internals.md, Groups): the sliding minute, the UTC day, Retry-After.
import { describe, expect, it } from 'vitest';
import { admit, nextUtcMidnight, retryAfterSeconds, utcDay } from '../../src/groups/limits.js';

const noon = Date.UTC(2026, 0, 15, 12);

describe('members-add limits', () => {
  it('admits while fewer than 10 requests are in the window, reserving what the day has left', () => {
    expect(admit({ now: noon, requestsInWindow: 9, oldestInWindow: noon - 1000, usedToday: 0, wanted: 20 })).toEqual({
      admitted: true,
      reserved: 20,
    });
    expect(admit({ now: noon, requestsInWindow: 0, oldestInWindow: null, usedToday: 490, wanted: 20 })).toEqual({
      admitted: true,
      reserved: 10,
    });
    expect(admit({ now: noon, requestsInWindow: 0, oldestInWindow: null, usedToday: 499, wanted: 0 })).toEqual({
      admitted: true,
      reserved: 0,
    });
  });

  it('refuses the 11th request until the oldest one leaves the window', () => {
    expect(admit({ now: noon, requestsInWindow: 10, oldestInWindow: noon - 10_000, usedToday: 0, wanted: 1 })).toEqual({
      admitted: false,
      reason: 'minute',
      retryAfterS: 50,
    });
    expect(admit({ now: noon, requestsInWindow: 10, oldestInWindow: noon - 59_999, usedToday: 0, wanted: 1 })).toEqual({
      admitted: false,
      reason: 'minute',
      retryAfterS: 1,
    });
  });

  it('refuses a request when nothing is left of the day, until the next UTC midnight', () => {
    const late = Date.UTC(2026, 0, 15, 23, 59, 30);
    expect(admit({ now: late, requestsInWindow: 0, oldestInWindow: null, usedToday: 500, wanted: 1 })).toEqual({
      admitted: false,
      reason: 'day',
      retryAfterS: 30,
    });
    expect(admit({ now: late, requestsInWindow: 0, oldestInWindow: null, usedToday: 500, wanted: 0 }).admitted).toBe(
      false,
    );
  });

  it('counts days in UTC', () => {
    expect(utcDay(Date.UTC(2026, 0, 15, 23, 59, 59, 999))).toBe(utcDay(Date.UTC(2026, 0, 15)));
    expect(utcDay(Date.UTC(2026, 0, 16))).toBe(utcDay(Date.UTC(2026, 0, 15)) + 1);
    expect(nextUtcMidnight(noon)).toBe(Date.UTC(2026, 0, 16));
    expect(nextUtcMidnight(Date.UTC(2026, 0, 16))).toBe(Date.UTC(2026, 0, 17));
  });

  it('never tells a client to retry in less than a second', () => {
    expect(retryAfterSeconds(noon, noon)).toBe(1);
    expect(retryAfterSeconds(noon, noon + 1)).toBe(1);
    expect(retryAfterSeconds(noon, noon + 1001)).toBe(2);
  });
});
