// SharedReads (src/events/shared-reads.ts): followers asking for the same rows after the same ring share one read;
// a ring (events may have been appended) starts reads afresh, so no follower is answered with rows read before it.
import { describe, expect, it } from 'vitest';
import { SharedReads } from '../../src/events/shared-reads.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SharedReads', () => {
  it('shares a read in flight for the same key, not for another key', async () => {
    const reads = new SharedReads<string>();
    let calls = 0;
    const pending = deferred<string>();
    const read = () => {
      calls += 1;
      return pending.promise;
    };
    const a = reads.read('k', read);
    const b = reads.read('k', read);
    const other = reads.read('j', () => Promise.resolve('j'));
    expect(calls).toBe(1);
    pending.resolve('rows');
    expect(await a).toBe('rows');
    expect(await b).toBe('rows');
    expect(await other).toBe('j');
  });

  it('does not share a read begun before a ring', async () => {
    const reads = new SharedReads<number>();
    const first = deferred<number>();
    let calls = 0;
    const a = reads.read('k', () => {
      calls += 1;
      return first.promise;
    });
    reads.ring();
    const b = reads.read('k', () => {
      calls += 1;
      return Promise.resolve(2);
    });
    // A third asker after the ring shares the second read, not the first.
    const c = reads.read('k', () => Promise.resolve(3));
    expect(calls).toBe(2);
    first.resolve(1);
    expect([await a, await b, await c]).toEqual([1, 2, 2]);
  });

  it('reads again once a read has ended, and shares a failure only with those who asked meanwhile', async () => {
    const reads = new SharedReads<number>();
    const failing = deferred<number>();
    const a = reads.read('k', () => failing.promise.then(() => Promise.reject(new Error('store down'))));
    const b = reads.read('k', () => Promise.resolve(0));
    failing.resolve(0);
    await expect(a).rejects.toThrow('store down');
    await expect(b).rejects.toThrow('store down');
    expect(await reads.read('k', () => Promise.resolve(7))).toBe(7);
  });
});
