// Incoming WhatsApp media's reference (src/network/whatsapp/media-download.ts): what the gateway keeps to download
// it later, and a reference that is not one of the connector's refused as permanent.
import { describe, expect, it } from 'vitest';
import { NetworkMediaError } from '../../../src/network/network.js';
import { downloadWhatsAppMedia, incomingMediaOf } from '../../../src/network/whatsapp/media-download.js';

const key = Buffer.alloc(32, 7);
const sha = Buffer.alloc(32, 9);

describe('incoming WhatsApp media', () => {
  it('keeps the type, path, URL and key as the reference; the size and hex hash beside it', () => {
    const media = incomingMediaOf('file', {
      directPath: '/v/t62/abc.enc',
      url: 'https://mmg.whatsapp.net/v/t62/abc.enc',
      mediaKey: key,
      fileSha256: sha,
      fileLength: 1234,
    });
    expect(media).toEqual({
      ref: JSON.stringify({
        type: 'document',
        directPath: '/v/t62/abc.enc',
        url: 'https://mmg.whatsapp.net/v/t62/abc.enc',
        mediaKey: key.toString('base64'),
      }),
      size: 1234,
      sha256: sha.toString('hex'),
    });
  });

  it('gives no reference without a key or a place to fetch from; leaves out what the message lacks', () => {
    expect(incomingMediaOf('image', { directPath: '/v/x.enc' })).toBeUndefined();
    expect(incomingMediaOf('image', { mediaKey: key, url: 'http://plain.example/x' })).toBeUndefined();
    expect(incomingMediaOf('sticker', { mediaKey: key, directPath: '/v/s.enc' })).toEqual({
      ref: JSON.stringify({ type: 'sticker', directPath: '/v/s.enc', mediaKey: key.toString('base64') }),
    });
  });

  it('refuses a reference that is not its own as permanent', async () => {
    for (const ref of ['not json', '{"url":"http://x"}']) {
      const error = await downloadWhatsAppMedia({ ref }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NetworkMediaError);
      expect((error as NetworkMediaError).kind).toBe('permanent');
    }
  });
});
