// loadOnce (src/load-once.ts): one load however many ask, also while it is in flight; a failed load is not kept.
import { describe, expect, it } from 'vitest';
import { loadOnce } from '../src/load-once.js';

describe('loadOnce', () => {
  it('loads once for every caller, also callers that ask while the load is in flight', async () => {
    let loads = 0;
    const get = loadOnce(async () => {
      loads++;
      await new Promise((resolve) => setImmediate(resolve));
      return { value: 42 };
    });
    const [a, b] = await Promise.all([get(), get()]);
    const c = await get();
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
  });

  it('tries again after a failed load, and keeps the one that worked', async () => {
    let loads = 0;
    const get = loadOnce(async () => {
      loads++;
      if (loads === 1) throw new Error('not there yet');
      return 'loaded';
    });
    await expect(get()).rejects.toThrow('not there yet');
    expect(await get()).toBe('loaded');
    expect(await get()).toBe('loaded');
    expect(loads).toBe(2);
  });
});
