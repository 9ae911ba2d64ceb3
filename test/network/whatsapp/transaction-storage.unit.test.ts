// The library's per-socket transaction storages live in one shared AsyncLocalStorage (transaction-storage.ts): on
// Node.js 20 every enabled AsyncLocalStorage writes a slot on every async resource the process creates, so a storage
// per socket made every promise dearer with each socket. Tested on the library's own transactional key store,
// unmodified: transactions behave as the library's, each socket sees only its own, and a promise carries one slot
// however many sockets there are.
import { AsyncLocalStorage, executionAsyncResource } from 'node:async_hooks';
import { addTransactionCapability, type SignalDataSet, type SignalKeyStore } from 'baileys';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { shareTransactionStorage } from '../../../src/network/whatsapp/transaction-storage.js';

function memoryKeys(share = true) {
  const data = new Map<string, unknown>();
  const writes: SignalDataSet[] = [];
  const store: SignalKeyStore = {
    get: async (type, ids) =>
      Object.fromEntries(
        ids.flatMap((id) => (data.has(`${type}/${id}`) ? [[id, data.get(`${type}/${id}`)]] : [])),
      ) as never,
    set: async (set) => {
      writes.push(set);
      for (const [type, values] of Object.entries(set))
        for (const [id, value] of Object.entries(values ?? {})) data.set(`${type}/${id}`, value);
    },
  };
  const keys = addTransactionCapability(store, pino({ level: 'silent' }), {
    maxCommitRetries: 1,
    delayBetweenTriesMs: 1,
  });
  if (share) shareTransactionStorage(keys);
  const written = () => writes.flatMap((w) => Object.keys(w.session ?? {})).sort();
  return { keys, writes, written };
}

const session = (id: string) => ({ session: { [id]: new Uint8Array([1, 2, 3]) } }) as SignalDataSet;

/** How many storage slots an async resource created now carries (Node.js 20 writes one per enabled storage). */
function slotsOnANewResource(): Promise<number> {
  return new Promise((resolve) =>
    setImmediate(() => resolve(Object.getOwnPropertySymbols(executionAsyncResource()).length)),
  );
}

describe("the library's transaction storages, kept in one shared storage", () => {
  it('a transaction commits its writes once, at its end, and sees itself inside', async () => {
    const { keys, writes, written } = memoryKeys();
    for (const id of ['a', 'b']) {
      const inside = await keys.transaction(async () => {
        await keys.set(session(`${id}1`));
        await keys.set(session(`${id}2`));
        expect(writes).toHaveLength(id === 'a' ? 0 : 1); // nothing written before the end
        return keys.isInTransaction();
      }, 'k');
      expect(inside).toBe(true);
      expect(keys.isInTransaction()).toBe(false);
    }
    expect(writes).toHaveLength(2);
    expect(written()).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('a nested transaction commits with the one it runs in; two at once on other keys commit each', async () => {
    const { keys, writes, written } = memoryKeys();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = keys.transaction(async () => {
      await keys.set(session('a'));
      await held;
      return keys.isInTransaction();
    }, 'first');
    const second = keys.transaction(async () => {
      await keys.transaction(async () => keys.set(session('nested')), 'second');
      expect(writes).toHaveLength(0); // the nested one did not commit on its own
      await keys.set(session('b'));
      return keys.isInTransaction();
    }, 'second');
    expect(await second).toBe(true);
    release();
    expect(await first).toBe(true);
    expect(writes).toHaveLength(2);
    expect(written()).toEqual(['a', 'b', 'nested']);
  });

  it('a failed transaction writes nothing and rejects', async () => {
    const { keys, writes } = memoryKeys();
    await expect(
      keys.transaction(async () => {
        await keys.set(session('a'));
        throw new Error('refused');
      }, 'k'),
    ).rejects.toThrow('refused');
    expect(writes).toHaveLength(0);
    expect(keys.isInTransaction()).toBe(false);
  });

  it('each socket sees only its own transaction, also when one runs inside another', async () => {
    const a = memoryKeys();
    const b = memoryKeys();
    await a.keys.transaction(async () => {
      expect(b.keys.isInTransaction()).toBe(false);
      await a.keys.set(session('for-a'));
      // B's transaction started from inside A's is B's own: it commits to B's store, at its own end.
      await b.keys.transaction(async () => {
        expect(a.keys.isInTransaction()).toBe(true);
        await b.keys.set(session('for-b'));
      }, 'k');
      expect(b.written()).toEqual(['for-b']);
      expect(b.keys.isInTransaction()).toBe(false);
      expect(a.keys.isInTransaction()).toBe(true);
    }, 'k');
    expect(a.written()).toEqual(['for-a']);
  });

  it('a new promise carries one slot however many sockets have transactions, ended or running', async () => {
    const before = await slotsOnANewResource();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const stores = Array.from({ length: 20 }, () => memoryKeys());
    await Promise.all(stores.slice(0, 10).map(({ keys }) => keys.transaction(async () => keys.set(session('x')), 'k')));
    const running = stores.slice(10).map(({ keys }) =>
      keys.transaction(async () => {
        await keys.set(session('y'));
        await held;
      }, 'k'),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(await slotsOnANewResource()).toBeLessThanOrEqual(before + 1);
    release();
    await Promise.all(running);
    expect(stores.every(({ written }) => written().length === 1)).toBe(true);
  });

  it('without it, each socket adds a slot to every new promise (what the module prevents)', async () => {
    const before = await slotsOnANewResource();
    const stores = Array.from({ length: 5 }, () => memoryKeys(false));
    for (const { keys } of stores) await keys.transaction(async () => keys.set(session('x')), 'k');
    expect(await slotsOnANewResource()).toBeGreaterThanOrEqual(before + 5);
  });

  it('leaves storages that are not the library’s alone', async () => {
    const { keys } = memoryKeys();
    const other = new AsyncLocalStorage<string>();
    await other.run('mine', async () => {
      await keys.transaction(async () => {
        expect(other.getStore()).toBe('mine');
        await keys.set(session('a'));
      }, 'k');
      expect(other.getStore()).toBe('mine');
    });
    expect(other.getStore()).toBeUndefined();
    expect(other.run('still', () => other.getStore())).toBe('still');
  });
});
