// The connector hands media to Baileys as a stream over the seam's source: Baileys' own encryption
// step (the first thing it does with an upload) reads it through and sees exactly the bytes. That the
// source is read a chunk at a time is checked over the scripted socket (connector.test.ts).
import { createHash, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { encryptedStream } from 'baileys';
import { describe, expect, it } from 'vitest';
import { outgoingContent } from '../../../src/network/whatsapp/content.js';
import { BytesSource, MiB } from '../helpers.js';

describe('WhatsApp outgoing media', () => {
  it("is a stream Baileys' encryption reads through, read only once it pulls", async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const media = new BytesSource(bytes);
    const content = outgoingContent({ type: 'file', media, mimetype: 'application/pdf', fileName: 'a.pdf' });
    // Nothing is read before the library pulls.
    expect(media.pulled).toBe(0);
    const upload = (content as { document: Parameters<typeof encryptedStream>[0] }).document;
    const encrypted = await encryptedStream(upload, 'document');
    try {
      expect(encrypted.fileLength).toBe(bytes.length);
      expect(encrypted.fileSha256.equals(createHash('sha256').update(bytes).digest())).toBe(true);
      expect(media).toMatchObject({ opened: 1, pulled: bytes.length });
    } finally {
      await rm(encrypted.encFilePath, { force: true });
    }
  });
});
