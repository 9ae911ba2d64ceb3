// Which scan a webhook claim makes (src/events/scan-policy.ts): on a store this process owns, a full scan (past the
// lanes at their bound) only when a scan of the first due rows left lanes waiting and did not see every due row, and
// then at most every period; on a shared store always. Rings while lanes are at their bound are spaced out.
import { describe, expect, it } from 'vitest';
import { RING_EVERY_MS, ScanPolicy, ringAnsweredAt } from '../../src/events/scan-policy.js';

describe('ScanPolicy', () => {
  it('starts with a full scan, then scans the first due rows until one leaves lanes waiting behind more rows', () => {
    const scans = new ScanPolicy(100, false);
    expect(scans.cycle(1_000)).toBe(true);
    expect(scans.cycle(1_500)).toBe(false);
    // Lanes at their bound but every due row seen, or more rows but no lane at its bound: nothing is wanted.
    expect(scans.afterClaim(true, false)).toBeNull();
    expect(scans.afterClaim(false, true)).toBeNull();
    expect(scans.cycle(1_600)).toBe(false);
    // Both: a full scan 100 ms after the last one.
    expect(scans.afterClaim(true, true)).toBe(1_100);
    expect(scans.cycle(1_601)).toBe(true);
    expect(scans.cycle(1_602)).toBe(false);
  });

  it('waits out the period after the last full scan', () => {
    const scans = new ScanPolicy(100, false);
    expect(scans.cycle(1_000)).toBe(true);
    expect(scans.afterClaim(true, true)).toBe(1_100);
    expect(scans.cycle(1_050)).toBe(false);
    expect(scans.cycle(1_099)).toBe(false);
    expect(scans.cycle(1_100)).toBe(true);
  });

  it('always scans in full on a store shared with other processes', () => {
    const scans = new ScanPolicy(100, true);
    for (const now of [1_000, 1_001, 1_002]) expect(scans.cycle(now)).toBe(true);
  });
});

describe('ringAnsweredAt', () => {
  it('answers at once unless lanes are at their bound and a claim ran within the spacing', () => {
    expect(ringAnsweredAt(1_000, false, 995)).toBeNull();
    expect(ringAnsweredAt(1_000, true, 1_000 - RING_EVERY_MS)).toBeNull();
    expect(ringAnsweredAt(1_000, true, 995)).toBe(995 + RING_EVERY_MS);
  });
});
