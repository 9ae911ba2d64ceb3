// Issue 26: serving reads stored media one chunk at a time, and once the reader says the chunk before is written out,
// that chunk's memory is given back and V8 collects its young generation before the next read (src/media/chunks.ts,
// readRange; src/media/young-garbage.ts). On both stores: the bytes come out whole and in order, a written chunk is
// emptied before the next is read, and one the reader cannot vouch for is left alone.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, ChunkWriter, readRange } from '../../src/media/chunks.js';
import { youngCollections } from '../../src/media/young-garbage.js';
import { openStore, type Store } from '../../src/store/store.js';
import { newStoreLocation, noStoreAvailable, type StoreLocation } from '../helpers/gateway.js';

const SIZE = 3 * CHUNK_BYTES + 1234;
const file = Buffer.alloc(SIZE);
for (let at = 0; at < SIZE; at++) file[at] = (at * 31 + (at >> 12)) & 0xff;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.skipIf(noStoreAvailable)('reading a range of stored media for a reader', () => {
  let location: StoreLocation;
  let store: Store;
  beforeAll(async () => {
    location = await newStoreLocation();
    store = openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    await store.migrate();
    const writer = new ChunkWriter(store.db, { now: () => Date.now() } as never, 'range-test');
    for (let at = 0; at < SIZE; at += 100_000) await writer.write(file.subarray(at, at + 100_000));
    await writer.finish();
  });
  afterAll(async () => {
    await store?.close();
    await location?.drop();
  });

  it('empties each chunk the reader has written out before reading the next, and collects first', async () => {
    const pieces: Uint8Array[] = [];
    const hash = createHash('sha256');
    const lengthsWhenAsked: number[] = [];
    const collectionsBefore = youngCollections();
    const written = async () => {
      lengthsWhenAsked.push(pieces.at(-1)!.byteLength);
      return true;
    };
    for await (const piece of readRange(store.db, 'range-test', 0, SIZE - 1, written)) {
      hash.update(piece);
      pieces.push(piece);
    }
    expect(hash.digest('hex')).toBe(sha(file));
    // Asked before chunks 2, 3 and 4; each time the chunk before was still whole.
    expect(lengthsWhenAsked).toEqual([CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES]);
    // Given back once written: every chunk but the last, which nothing asked about.
    expect(pieces.map((piece) => piece.byteLength)).toEqual([0, 0, 0, 1234]);
    expect(youngCollections() - collectionsBefore).toBeGreaterThanOrEqual(3);
  });

  it('leaves chunks alone when the reader cannot say they are written, and serves a range the same', async () => {
    const pieces: Uint8Array[] = [];
    const hash = createHash('sha256');
    const start = CHUNK_BYTES - 10;
    const end = 2 * CHUNK_BYTES + 10;
    for await (const piece of readRange(store.db, 'range-test', start, end, async () => false)) {
      hash.update(piece);
      pieces.push(piece);
    }
    expect(hash.digest('hex')).toBe(sha(file.subarray(start, end + 1)));
    expect(pieces.map((piece) => piece.byteLength)).toEqual([10, CHUNK_BYTES, 11]);
  });
});
