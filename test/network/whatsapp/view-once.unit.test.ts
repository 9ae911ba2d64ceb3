// View-once media keeps its mentions (src/network/whatsapp/view-once.ts): the library's own content builder puts
// them on the view-once wrapper, where encoding drops them; the repair moves them into the wrapped video.
import { readFileSync } from 'node:fs';
import { generateWAMessageContent, proto } from 'baileys';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { outgoingContent } from '../../../src/network/whatsapp/content.js';
import { carryViewOnceContext } from '../../../src/network/whatsapp/view-once.js';

const MP4 = readFileSync(new URL('../../fixtures/media/tiny.mp4', import.meta.url));

async function built(): Promise<proto.IMessage> {
  const content = outgoingContent(
    {
      type: 'video',
      media: {
        size: MP4.length,
        async *open() {
          yield MP4;
        },
      },
      mimetype: 'video/mp4',
      caption: 'look @15550001111',
      viewOnce: true,
    },
    ['15550001111'],
  );
  return generateWAMessageContent(content, {
    logger: pino({ level: 'silent' }) as never,
    upload: async () => ({ mediaUrl: 'https://127.0.0.1/v', directPath: '/v' }),
  });
}

/** What the recipient decodes: the message as it goes over the wire. */
const wire = (message: proto.IMessage) => proto.Message.decode(proto.Message.encode(message).finish());

describe('view-once media and its mentions', () => {
  it('the library alone loses the mentions of a view-once video on the wire', async () => {
    const video = wire(await built()).viewOnceMessage?.message?.videoMessage;
    expect(video?.caption).toBe('look @15550001111');
    expect(video?.contextInfo?.mentionedJid ?? []).toEqual([]);
  });

  it('repaired, the view-once video carries its mentions, also in a copy for the own devices', async () => {
    const repaired = wire(carryViewOnceContext(await built()));
    expect(repaired.viewOnceMessage?.message?.videoMessage?.contextInfo?.mentionedJid).toEqual([
      '15550001111@s.whatsapp.net',
    ]);
    const copy = wire(
      carryViewOnceContext({ deviceSentMessage: { destinationJid: 'x@s.whatsapp.net', message: await built() } }),
    );
    expect(copy.deviceSentMessage?.message?.viewOnceMessage?.message?.videoMessage?.contextInfo?.mentionedJid).toEqual([
      '15550001111@s.whatsapp.net',
    ]);
  });

  it('leaves a message without a misplaced context as it is', () => {
    const plain = { viewOnceMessage: { message: { imageMessage: { caption: 'x', contextInfo: { stanzaId: 'A' } } } } };
    expect(carryViewOnceContext(structuredClone(plain))).toEqual(plain);
  });
});
