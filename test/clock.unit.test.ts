// The fake clock tests move instead of waiting: its timers run only as the test moves time past them, in due order.
import { describe, expect, it } from 'vitest';
import { FakeClock, sleep } from '../src/clock.js';

describe('FakeClock', () => {
  it('runs timers in due order as time passes them, each at its own time, never before', () => {
    const clock = new FakeClock(1_000);
    const seen: Array<[string, number]> = [];
    clock.after(300, () => seen.push(['c', clock.now()]));
    clock.after(100, () => seen.push(['a', clock.now()]));
    clock.after(100, () => seen.push(['b', clock.now()]));
    expect(clock.dueTimes).toEqual([1_100, 1_100, 1_300]);
    clock.advance(99);
    expect(seen).toEqual([]);
    clock.advance(150);
    expect(seen).toEqual([
      ['a', 1_100],
      ['b', 1_100],
    ]);
    expect(clock.now()).toBe(1_249);
    clock.set(1_300);
    expect(seen).toHaveLength(3);
    expect(seen[2]).toEqual(['c', 1_300]);
    expect(clock.pending).toBe(0);
    expect(clock.dueTimes).toEqual([]);
  });

  it('runs a timer set by a callback within the same span; a cancelled one never runs', () => {
    const clock = new FakeClock(0);
    const seen: number[] = [];
    clock.after(10, () => clock.after(10, () => seen.push(clock.now())));
    const cancelled = clock.after(15, () => seen.push(-1));
    cancelled.cancel();
    expect(clock.dueTimes).toEqual([10]);
    clock.advance(25);
    expect(seen).toEqual([20]);
    expect(clock.now()).toBe(25);
  });

  it('sleep resolves once the clock has moved far enough', async () => {
    const clock = new FakeClock(0);
    let woke = false;
    const slept = sleep(clock, 5_000).then(() => (woke = true));
    clock.advance(4_999);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await slept;
    expect(woke).toBe(true);
  });
});
