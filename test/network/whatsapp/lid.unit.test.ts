// The LID resolver (src/network/whatsapp/lid.ts): who sent a message when WhatsApp names the sender by LID, the
// number behind a LID from the library's mapping store, the mappings the library announces, and the JID a stored
// LID sender is quoted under.
import { proto, type WAMessage } from 'baileys';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  addressJid,
  isLidForm,
  lidOf,
  lidResolved,
  resolveSender,
  senderOf,
  type LidLookup,
} from '../../../src/network/whatsapp/lid.js';
import { translateIncoming } from '../../../src/network/whatsapp/incoming.js';
import { quotedMessage } from '../../../src/network/whatsapp/quoted.js';
import { upsert } from './harness.js';

const quiet = pino({ level: 'silent' });
const PHONE = '4917600000002';
const LID = '99887766554433@lid';

function lookup(known: Record<string, string>, calls: string[] = []): LidLookup {
  return {
    getPNForLID: async (lid) => {
      calls.push(lid);
      return known[lid] ?? null;
    },
  };
}

function incomingFrom(key: Record<string, unknown>) {
  const event = translateIncoming(upsert({ key: { id: 'X1', ...key }, message: { conversation: 'hi' } }) as WAMessage);
  if (typeof event === 'string') throw new Error(`skipped: ${event}`);
  return event;
}

describe('LID forms', () => {
  it('takes the LID of a LID JID, with its device dropped, and nothing else', () => {
    expect(lidOf('99887766554433:12@lid')).toBe(LID);
    expect(lidOf(LID)).toBe(LID);
    expect(lidOf(`${PHONE}@s.whatsapp.net`)).toBeNull();
    expect(lidOf('120363000000000001@g.us')).toBeNull();
    expect(lidOf(undefined)).toBeNull();
    expect(isLidForm(LID)).toBe(true);
    expect(isLidForm(PHONE)).toBe(false);
  });

  it('quotes a stored address under the JID it stands for', () => {
    expect(addressJid(LID)).toBe(LID);
    expect(addressJid(PHONE)).toBe(`${PHONE}@s.whatsapp.net`);
  });
});

describe('the sender of a stanza', () => {
  it.each([
    ['a number alone', `${PHONE}@s.whatsapp.net`, undefined, { from: PHONE }],
    ['a number with its LID beside it', `${PHONE}:3@s.whatsapp.net`, LID, { from: PHONE, fromLid: LID }],
    [
      'a LID with its number beside it',
      '99887766554433:5@lid',
      `${PHONE}@s.whatsapp.net`,
      { from: PHONE, fromLid: LID },
    ],
    ['a LID alone: delivered under the LID', LID, undefined, { from: LID, fromLid: LID }],
  ])('%s', (_what, jid, alt, expected) => {
    expect(senderOf(jid, alt)).toEqual(expected);
  });

  it('is nobody for what is neither a number nor a LID', () => {
    expect(senderOf('120363000000000001@g.us', undefined)).toBeNull();
    expect(senderOf(undefined, undefined)).toBeNull();
  });

  it('a LID-only message is an incoming message under its LID, in a chat and as a group participant', () => {
    expect(incomingFrom({ remoteJid: LID })).toMatchObject({ from: LID, fromLid: LID });
    expect(incomingFrom({ remoteJid: '120363000000000001@g.us', participant: LID })).toMatchObject({
      from: LID,
      fromLid: LID,
      group: '120363000000000001@g.us',
    });
  });
});

describe('resolving a LID-only sender through the library mapping store', () => {
  it('takes the number the store knows', async () => {
    const event = incomingFrom({ remoteJid: LID });
    const resolved = await resolveSender(event, lookup({ [LID]: `${PHONE}:0@s.whatsapp.net` }), quiet);
    expect(resolved).toMatchObject({ from: PHONE, fromLid: LID });
  });

  it('keeps the LID when the store knows nothing, has no store, or fails', async () => {
    const event = incomingFrom({ remoteJid: LID });
    expect(await resolveSender(event, lookup({}), quiet)).toBe(event);
    expect(await resolveSender(event, null, quiet)).toBe(event);
    const failing: LidLookup = { getPNForLID: () => Promise.reject(new Error('store down')) };
    expect(await resolveSender(event, failing, quiet)).toBe(event);
  });

  it('does not look up a sender whose number came with the message', async () => {
    const calls: string[] = [];
    const event = incomingFrom({ remoteJid: LID, remoteJidAlt: `${PHONE}@s.whatsapp.net` });
    expect(await resolveSender(event, lookup({}, calls), quiet)).toBe(event);
    expect(calls).toEqual([]);
  });
});

describe('mappings the library announces', () => {
  it('become a lid_resolved with the LID form and the number', () => {
    expect(lidResolved({ lid: '99887766554433:2@lid', pn: `${PHONE}:2@s.whatsapp.net` })).toEqual({
      type: 'lid_resolved',
      lid: LID,
      phone: PHONE,
    });
  });

  it('are ignored when either side is not what it should be', () => {
    expect(lidResolved({ lid: `${PHONE}@s.whatsapp.net`, pn: LID })).toBeNull();
    expect(lidResolved({ lid: LID })).toBeNull();
  });
});

describe('a reply quoting a message of a sender stored under its LID', () => {
  it('names the LID as the author in a group, and as the chat with one person', () => {
    const inGroup = quotedMessage(
      { id: 'Q1', fromMe: false, chat: '120363000000000001@g.us', author: LID, text: 'hi' },
      undefined,
    );
    expect(inGroup.key).toMatchObject({ remoteJid: '120363000000000001@g.us', participant: LID, id: 'Q1' });
    const direct = quotedMessage({ id: 'Q2', fromMe: false, chat: LID, author: LID }, undefined);
    expect(direct.key).toMatchObject({ remoteJid: LID, id: 'Q2' });
    expect(proto.Message.toObject(direct.message as proto.Message)).toEqual({ conversation: '' });
  });
});
