/**
 * Gives every socket's transaction storage one slot in a single shared `AsyncLocalStorage`, instead of a storage of
 * its own that Node.js keeps enabled.
 *
 * Why: the library gives each socket's key store an `AsyncLocalStorage` for its transactions and never disables it.
 * On Node.js 20 every enabled `AsyncLocalStorage` is visited, and writes a slot, whenever any promise or other async
 * resource of the process is created. So each socket made every promise of the gateway dearer: a loop turn of three
 * promises took 700 µs with 1,000 sockets instead of about 1 (`bench/async-storage.ts`), and a closed socket's
 * storage kept its key store reachable for ever. Switching a storage off between transactions was not enough: sends
 * hold a transaction across network round trips, so with many devices sending at once most storages were on.
 * Here the library's storages are never enabled at all: their values live in one shared storage whose value maps
 * each of them to its own, so a promise pays for one storage however many sockets there are.
 *
 * Owns: recognising a socket's storage (the one whose `run` is first handed the work function this module passed to
 * the library's `transaction`) and, for such storages only, `run` and `getStore` through the shared storage: the
 * only change to `AsyncLocalStorage.prototype`, installed once; every other storage runs exactly as before.
 * Must never: let one socket's transaction see another's value (each reads its own slot, and a nested run copies
 * the map rather than changing it), or change what a transaction does. The library uses `run` and `getStore` of its
 * storage and nothing else (Utils/auth-utils.js of the pinned version).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The part of the library's transactional key store this module wraps. */
export interface TransactionalKeys {
  transaction<T>(work: () => Promise<T>, key: string): Promise<T>;
}

type Storage = AsyncLocalStorage<unknown>;
type Slots = ReadonlyMap<Storage, unknown>;

const shared = new AsyncLocalStorage<Slots>();
/** The library's storages, kept in `shared` from their first run on. */
const kept = new WeakSet<Storage>();
/** Work functions handed to the library, each with what to do when the storage that runs it is known. */
const markers = new WeakMap<object, () => void>();
let installed = false;

function keepStoragesInShared(): void {
  if (installed) return;
  installed = true;
  const proto = AsyncLocalStorage.prototype;
  const run = proto.run;
  const getStore = proto.getStore;
  const slots = () => Reflect.apply(getStore, shared, []) as Slots | undefined;
  proto.run = function runInShared(
    this: Storage,
    store: unknown,
    callback: (...a: unknown[]) => unknown,
    ...args: unknown[]
  ) {
    const marker = markers.get(callback);
    if (marker !== undefined) {
      kept.add(this);
      marker();
    }
    if (!kept.has(this)) return Reflect.apply(run, this, [store, callback, ...args]) as unknown;
    const next = new Map(slots());
    next.set(this, store);
    return Reflect.apply(run, shared, [next, callback, ...args]) as unknown;
  } as typeof run;
  proto.getStore = function getFromShared(this: Storage) {
    return kept.has(this) ? slots()?.get(this) : (Reflect.apply(getStore, this, []) as unknown);
  } as typeof getStore;
}

/** Wraps `keys.transaction` in place (the library reads it from this object at each call) until its storage is known. */
export function shareTransactionStorage(keys: TransactionalKeys): void {
  keepStoragesInShared();
  const transaction = keys.transaction.bind(keys);
  let known = false;
  keys.transaction = <T>(work: () => Promise<T>, key: string): Promise<T> => {
    if (known) return transaction(work, key);
    const marked = () => work();
    markers.set(marked, () => {
      known = true;
    });
    return transaction(marked, key);
  };
}
