/**
 * Prompt collection of the buffers that media bytes pass through (issue 26; docs/internals.md, Incoming media).
 *
 * Every byte streamed through Node arrives in a fresh ArrayBuffer (a socket read, the HTTP parser's body copy, a
 * decipher's output, a row read from the store), dead as soon as the next one is taken. V8 frees dead ArrayBuffers
 * only at a young-generation collection, and starts one for them only once 32 MB of them have piled up (twice its
 * default semi-space size: a constant, not changed by `--max-semi-space-size`). JavaScript objects are few while
 * media streams, so nothing else starts one sooner: a download or a read of any size held up to 32 MB of dead buffers
 * (and the allocator kept the pages), which alone broke the bound of issue 26 (30 MB of growth for a 60 MB video).
 * So the chunk store notes the bytes it moves, and every COLLECT_EVERY_BYTES of them V8 is asked for a young-generation
 * collection (about a millisecond: only live young objects are copied; the old generation is not touched).
 *
 * Serving adds one more moment (`chunkReadNext`): before each chunk is read for a reader, once the chunk before it is
 * written out. The previous chunk is then dead, and the read starts on an empty young generation, so the collections
 * V8 starts by itself while the store's driver builds the answer (node-postgres makes a 2 MB string and several
 * growing buffers of each 1 MiB chunk) find little alive; without it, what they found alive (chunks waiting in the
 * socket, the driver's strings) reached the old generation, and serving 60 MB from PostgreSQL grew the gateway by
 * 70-90 MB until a full collection.
 *
 * Owns: that count and those requests. The collector is V8's own `gc` function, made available to this module alone
 * (`--expose-gc` set at run time, the function taken from a fresh context: the gateway's global scope gets no `gc`).
 * Must never: ask for a full (major) collection, ask more often than once per COLLECT_EVERY_BYTES of media (or, for
 * chunks served, once per chunk), or fail a download or a read when V8 offers no collector (it then does nothing).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Media bytes moved between two young-generation collections. */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

type Collector = (options: { type: 'minor'; execution: 'sync' }) => void;

let collector: Collector | null | undefined;
let sinceLast = 0;
let collections = 0;

function findCollector(): Collector | null {
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('typeof gc === "function" ? gc : null');
    return typeof found === 'function' ? (found as Collector) : null;
  } catch {
    return null;
  }
}

/** `bytes` of media went through this process (read from the network or the store): collect when enough did. */
export function mediaBytesMoved(bytes: number): void {
  sinceLast += bytes;
  if (sinceLast < COLLECT_EVERY_BYTES) return;
  collect();
}

/** A chunk is about to be read for a reader that has written out the chunk before it: collect now. */
export function chunkReadNext(): void {
  collect();
}

function collect(): void {
  sinceLast = 0;
  collector ??= findCollector();
  if (collector === null) return;
  collector({ type: 'minor', execution: 'sync' });
  collections++;
}

/** Young-generation collections asked for so far (tests and metrics). */
export function youngCollections(): number {
  return collections;
}
