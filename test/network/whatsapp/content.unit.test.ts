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

describe('WhatsApp content of the send types of DECISIONS 15', () => {
  it('a poll carries its options, selectable count and the secret it was given', () => {
    const secret = new Uint8Array(32).fill(7);
    expect(outgoingContent({ type: 'poll', name: 'Q?', options: ['A', 'B'], selectableCount: 1 }, [], secret)).toEqual({
      poll: { name: 'Q?', values: ['A', 'B'], selectableCount: 1, messageSecret: secret },
    });
  });

  it('contacts go as vCards, the display name the one name or the count', () => {
    const one = outgoingContent({ type: 'contact', contacts: [{ name: 'A, B', phone: '6281200000001' }] }) as any;
    expect(one.contacts.displayName).toBe('A, B');
    expect(one.contacts.contacts[0].vcard).toContain(
      'FN:A\\, B\nTEL;type=CELL;type=VOICE;waid=6281200000001:+6281200000001',
    );
    const two = outgoingContent({
      type: 'contact',
      contacts: [
        { name: 'A', phone: '+6281200000001', organization: 'Line\nbreak' },
        { name: 'B', phone: '6281200000002' },
      ],
    }) as any;
    expect(two.contacts.displayName).toBe('2 contacts');
    expect(two.contacts.contacts[0].vcard).toContain('ORG:Line\\nbreak\n');
  });

  it("a chat's preview keeps its thumbnail only when it is a JPEG; without one the library is told none", () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 1]);
    const preview = { url: 'https://a.example', title: 'T', description: 'D' };
    expect(
      outgoingContent({
        type: 'chat',
        text: 'https://a.example',
        preview: { ...preview, thumbnail: { mimetype: 'image/jpeg', base64: jpeg.toString('base64') } },
      }),
    ).toEqual({
      text: 'https://a.example',
      linkPreview: {
        'canonical-url': 'https://a.example',
        'matched-text': 'https://a.example',
        title: 'T',
        description: 'D',
        jpegThumbnail: jpeg,
      },
    });
    const png = { mimetype: 'image/png', base64: 'iVBORw==' };
    expect(
      (outgoingContent({ type: 'chat', text: 'x', preview: { ...preview, thumbnail: png } }) as any).linkPreview,
    ).not.toHaveProperty('jpegThumbnail');
    expect(outgoingContent({ type: 'chat', text: 'x' })).toEqual({ text: 'x', linkPreview: null });
  });
});
