// Issue 26: the chunk store asks V8 for a young-generation collection every COLLECT_EVERY_BYTES of media moved, and
// only then (src/media/young-garbage.ts says why). The gateway's global scope gets no `gc` from it.
import { describe, expect, it } from 'vitest';
import { COLLECT_EVERY_BYTES, mediaBytesMoved, youngCollections } from '../../src/media/young-garbage.js';

describe('young-generation collections for media bytes', () => {
  it('runs one per COLLECT_EVERY_BYTES of media, none in between, without exposing gc globally', () => {
    // Whatever earlier calls left counted is completed first.
    const start = youngCollections();
    mediaBytesMoved(COLLECT_EVERY_BYTES);
    const base = youngCollections();
    expect(base).toBeGreaterThanOrEqual(start);

    mediaBytesMoved(COLLECT_EVERY_BYTES - 1);
    expect(youngCollections()).toBe(base);
    mediaBytesMoved(1);
    expect(youngCollections()).toBe(base + 1);

    for (let i = 0; i < 8; i++) mediaBytesMoved(COLLECT_EVERY_BYTES / 2);
    expect(youngCollections()).toBe(base + 5);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it('frees dead buffers the bytes passed through', () => {
    const { arrayBuffers: before } = process.memoryUsage();
    // 24 MB of short-lived buffers: V8 alone would keep them until 32 MB had piled up.
    for (let i = 0; i < 24 * 16; i++) {
      const piece = Buffer.alloc(64 * 1024, i);
      mediaBytesMoved(piece.byteLength);
    }
    mediaBytesMoved(COLLECT_EVERY_BYTES);
    expect((process.memoryUsage().arrayBuffers - before) / 2 ** 20).toBeLessThan(8);
  });
});
