// src/network/whatsapp/session-writes.ts: which session writes are still under way, and waiting for them.
import { describe, expect, it } from 'vitest';
import { SessionWrites } from '../../../src/network/whatsapp/session-writes.js';

function deferred(): { promise: Promise<void>; resolve(): void; reject(error: Error): void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('SessionWrites', () => {
  it('settled() waits for the writes of its session only, failed ones included, and keeps nothing after', async () => {
    const writes = new SessionWrites();
    const a = deferred();
    const b = deferred();
    writes.track('s1', a.promise);
    writes.track('s2', b.promise).catch(() => undefined);
    let s1 = false;
    let s2 = false;
    const waiting1 = writes.settled('s1').then(() => (s1 = true));
    const waiting2 = writes.settled('s2').then(() => (s2 = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect([s1, s2]).toEqual([false, false]);
    b.reject(new Error('the store said no'));
    await waiting2;
    expect([s1, s2]).toEqual([false, true]);
    expect(writes.size).toBe(1);
    a.resolve();
    await waiting1;
    expect(writes.size).toBe(0);
  });

  it('settled() also waits for a write started while it waits', async () => {
    const writes = new SessionWrites();
    const first = deferred();
    const second = deferred();
    writes.track('s', first.promise);
    let done = false;
    const waiting = writes.settled('s').then(() => (done = true));
    writes.track('s', second.promise);
    first.resolve();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(done).toBe(false);
    second.resolve();
    await waiting;
    expect(writes.size).toBe(0);
  });

  it('settled() of a session with nothing under way resolves at once', async () => {
    await new SessionWrites().settled('idle');
  });

  it('track() hands the write back unchanged', async () => {
    const writes = new SessionWrites();
    await expect(writes.track('s', Promise.resolve(7))).resolves.toBe(7);
    await expect(writes.track('s', Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(writes.size).toBe(0);
  });
});
