// Issue 26 (DECISIONS 15, incoming messages carry every kind): what the WhatsApp connector reads from a phone's
// message: stickers, voice notes, named locations, contact cards (parsed from their vCards), polls of every
// version, and the reply and mentions a message carries.
import { proto, type WAMessage } from 'baileys';
import { describe, expect, it } from 'vitest';
import { contactCards, parseVcard } from '../../../src/network/whatsapp/incoming-contacts.js';
import { contextOf, resolveMentions } from '../../../src/network/whatsapp/incoming-context.js';
import { incomingContent, translateIncoming } from '../../../src/network/whatsapp/incoming.js';
import { toNetworkId } from '../../../src/network/whatsapp/ids.js';

const FRIEND = '4917600000082';

function upsert(message: Record<string, unknown>): WAMessage {
  return proto.WebMessageInfo.fromObject({
    key: { remoteJid: `${FRIEND}@s.whatsapp.net`, fromMe: false, id: 'ABCDEF' },
    message,
    messageTimestamp: 1_760_000_000,
  }) as WAMessage;
}

const content = (message: Record<string, unknown>) => incomingContent(upsert(message));

describe('vCards', () => {
  it('reads the name and every TEL line, preferring the WhatsApp id over the shown number', () => {
    const card = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:Lestari;Ana;;;',
      'FN:Ana Lestari',
      'item1.TEL;type=CELL;waid=6281234567890:+62 812-3456-7890',
      'TEL;TYPE=WORK:+49 (30) 1234567',
      'TEL:0049 30 1234567',
      'END:VCARD',
    ].join('\r\n');
    expect(parseVcard(card)).toEqual({
      name: 'Ana Lestari',
      phones: ['6281234567890', '49301234567', '0049301234567'],
    });
  });

  it('unfolds folded lines and unescapes the name', () => {
    const card = 'BEGIN:VCARD\nFN:Budi\\, the\n  baker\nTEL;waid=4915\n 1000000\n 01:+49 151 00000001\nEND:VCARD';
    expect(parseVcard(card)).toEqual({ name: 'Budi, the baker', phones: ['4915100000001'] });
  });

  it('falls back to N when there is no FN, and lists each number once', () => {
    const card = 'BEGIN:VCARD\nN:Putri;Sari;;;\nTEL:+628111\nTEL:628111\nEND:VCARD';
    expect(parseVcard(card)).toEqual({ name: 'Sari Putri', phones: ['628111'] });
  });

  it('never throws on garbage, and keeps what it reads bounded', () => {
    for (const junk of ['', 'no card at all', 'TEL;;;::;waid=', '\u0000\uffff', 'BEGIN:VCARD\nTEL:abc\nEND:VCARD']) {
      const parsed = parseVcard(junk);
      expect(parsed.phones).toEqual([]);
      expect(typeof parsed.name).toBe('string');
    }
    const many = `BEGIN:VCARD\nFN:${'x'.repeat(10_000)}\n${Array.from({ length: 500 }, (_, i) => `TEL:+1555${String(i).padStart(4, '0')}`).join('\n')}\nEND:VCARD`;
    const parsed = parseVcard(many);
    expect(parsed.name.length).toBeLessThanOrEqual(256);
    expect(parsed.phones.length).toBeLessThanOrEqual(20);
    expect(parseVcard('x'.repeat(1_000_000)).phones).toEqual([]);
  });

  it('uses the display name when the card has no name of its own', () => {
    expect(contactCards([{ displayName: 'Ana', vcard: 'BEGIN:VCARD\nTEL:+628111\nEND:VCARD' }])).toEqual([
      { name: 'Ana', phones: ['628111'] },
    ]);
  });
});

describe('incoming kinds', () => {
  it('a sticker is a sticker with its mimetype', () => {
    expect(content({ stickerMessage: { mimetype: 'image/webp' } })).toEqual({
      type: 'sticker',
      mimetype: 'image/webp',
    });
  });

  it('a voice note is audio with ptt; an audio file is not', () => {
    expect(content({ audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true } })).toEqual({
      type: 'audio',
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
    });
    expect(content({ audioMessage: { mimetype: 'audio/mpeg' } })).toEqual({ type: 'audio', mimetype: 'audio/mpeg' });
  });

  it('a file keeps its name', () => {
    expect(content({ documentMessage: { mimetype: 'application/pdf', fileName: 'menu.pdf' } })).toEqual({
      type: 'file',
      mimetype: 'application/pdf',
      fileName: 'menu.pdf',
    });
  });

  it('a location keeps its name and address when sent', () => {
    expect(
      content({
        locationMessage: { degreesLatitude: -6.2, degreesLongitude: 106.8, name: 'Monas', address: 'Jakarta' },
      }),
    ).toEqual({ type: 'location', latitude: -6.2, longitude: 106.8, name: 'Monas', address: 'Jakarta' });
    expect(content({ locationMessage: { degreesLatitude: 1, degreesLongitude: 2 } })).toEqual({
      type: 'location',
      latitude: 1,
      longitude: 2,
    });
  });

  it('a contact card and a contacts array are contacts', () => {
    const vcard = (name: string, phone: string) => `BEGIN:VCARD\nFN:${name}\nTEL;waid=${phone}:+${phone}\nEND:VCARD`;
    expect(content({ contactMessage: { displayName: 'Ana', vcard: vcard('Ana', '628111') } })).toEqual({
      type: 'contact',
      contacts: [{ name: 'Ana', phones: ['628111'] }],
    });
    expect(
      content({
        contactsArrayMessage: {
          displayName: '2 contacts',
          contacts: [
            { displayName: 'Ana', vcard: vcard('Ana', '628111') },
            { displayName: 'Budi', vcard: vcard('Budi', '628222') },
          ],
        },
      }),
    ).toEqual({
      type: 'contact',
      contacts: [
        { name: 'Ana', phones: ['628111'] },
        { name: 'Budi', phones: ['628222'] },
      ],
    });
  });

  it('polls of every version: name, options, how many may be picked (0 meaning any)', () => {
    const options = [{ optionName: 'Rice' }, { optionName: 'Noodles' }, { optionName: 'Soup' }];
    for (const field of ['pollCreationMessage', 'pollCreationMessageV2', 'pollCreationMessageV3']) {
      expect(content({ [field]: { name: 'Lunch?', options, selectableOptionsCount: 1 } })).toEqual({
        type: 'poll',
        name: 'Lunch?',
        options: ['Rice', 'Noodles', 'Soup'],
        selectableCount: 1,
      });
    }
    expect(content({ pollCreationMessageV3: { name: 'Which?', options, selectableOptionsCount: 0 } })).toMatchObject({
      selectableCount: 3,
    });
  });
});

describe('replies and mentions', () => {
  const ours = '01KAZ0000000000000000000AB';

  it('a reply names the quoted network id, and our own id when the device sent it', () => {
    const reply = upsert({
      extendedTextMessage: {
        text: 'yes',
        contextInfo: {
          stanzaId: toNetworkId(ours),
          participant: '4915100000081@s.whatsapp.net',
          quotedMessage: { conversation: 'q' },
        },
      },
    });
    expect(translateIncoming(reply)).toMatchObject({ quoted: { networkId: toNetworkId(ours), sentId: ours } });
    const toTheirs = upsert({ imageMessage: { mimetype: 'image/jpeg', contextInfo: { stanzaId: 'ABC123' } } });
    const event = translateIncoming(toTheirs);
    expect(event).toMatchObject({ quoted: { networkId: 'ABC123' } });
    expect((event as { quoted: object }).quoted).not.toHaveProperty('sentId');
  });

  it('mentions are numbers, or LID forms for now; a message without context has neither', () => {
    const message = {
      extendedTextMessage: {
        text: '@a @b',
        contextInfo: {
          mentionedJid: [`${FRIEND}@s.whatsapp.net`, '12345678901234@lid', 'junk', `${FRIEND}@s.whatsapp.net`],
        },
      },
    };
    expect(contextOf(normalized(message))).toEqual({ mentions: [FRIEND, '12345678901234@lid'] });
    expect(translateIncoming(upsert({ conversation: 'plain' }))).not.toHaveProperty('mentions');
    expect(translateIncoming(upsert({ conversation: 'plain' }))).not.toHaveProperty('quoted');
  });

  it('mentioned LIDs become numbers where the library knows them, and stay LIDs where it fails', async () => {
    const lookup = {
      getPNForLID: async (lid: string) => (lid.startsWith('111') ? '6281111@s.whatsapp.net' : null),
    };
    expect(await resolveMentions(['111@lid', '222@lid', FRIEND], lookup, null, silent)).toEqual([
      '6281111',
      '222@lid',
      FRIEND,
    ]);
    const failing = { getPNForLID: async () => Promise.reject(new Error('store gone')) };
    expect(await resolveMentions(['111@lid'], failing, null, silent)).toEqual(['111@lid']);
  });

  it("mentioned LIDs the library does not know are looked up in the group's members", async () => {
    const lookup = { getPNForLID: async () => null };
    const metadata = async () => ({ participants: [{ id: '333@lid', phoneNumber: '6283333@s.whatsapp.net' }] }) as any;
    expect(await resolveMentions(['333@lid', '444@lid'], lookup, metadata, silent)).toEqual(['6283333', '444@lid']);
  });
});

const silent = { warn: () => undefined } as any;

function normalized(message: Record<string, unknown>): proto.IMessage {
  return proto.Message.fromObject(message);
}
