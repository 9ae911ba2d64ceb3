// Mentions in a LID-addressed group (group-mentions.ts): each mentioned number becomes the member's LID, in the
// mention and in the text, as a phone in such a group sends it; elsewhere, or when no LID is known, numbers stay.
import { WAMessageAddressingMode } from 'baileys';
import { describe, expect, it } from 'vitest';
import { addressMentions, lidOfMember } from '../../../src/network/whatsapp/group-mentions.js';

const A = '6281500000001';
const B = '6281500000002';
const C = '6281500000003';
const lidGroup = {
  addressingMode: WAMessageAddressingMode.LID,
  participants: [
    { id: '111111111111111@lid', phoneNumber: `${A}@s.whatsapp.net` },
    { id: `${B}@s.whatsapp.net`, lid: '222222222222222@lid' },
    { id: '333333333333333@lid' },
  ],
};
const noLid = async () => null;

describe('mentions in a LID-addressed group', () => {
  it('names each member by the LID its metadata gives, in the mentions and in the text', async () => {
    const out = await addressMentions(
      { type: 'chat', text: `hi @${A} and @${B}, not @${A}9` },
      [A, B],
      lidGroup,
      noLid,
    );
    expect(out.mentions).toEqual(['111111111111111@lid', '222222222222222@lid']);
    expect(out.content).toEqual({
      type: 'chat',
      text: 'hi @111111111111111 and @222222222222222, not @62815000000019',
    });
  });

  it("asks the library's mapping for a number the metadata does not pair, and keeps a number nobody knows", async () => {
    const asked: string[] = [];
    const out = await addressMentions(
      { type: 'image', media: {} as never, mimetype: 'image/png', caption: `@${C} @${A}x` },
      [C, '6281500000009'],
      lidGroup,
      async (pn) => {
        asked.push(pn);
        return pn === `${C}@s.whatsapp.net` ? '333333333333333:4@lid' : null;
      },
    );
    expect(asked).toEqual([`${C}@s.whatsapp.net`, '6281500000009@s.whatsapp.net']);
    expect(out.mentions).toEqual(['333333333333333@lid', '6281500000009@s.whatsapp.net']);
    expect(out.content).toMatchObject({ caption: `@333333333333333 @${A}x` });
  });

  it('keeps numbers in a number-addressed group, in a direct chat, and when a look-up fails', async () => {
    const text = { type: 'chat' as const, text: `@${A}` };
    expect(
      await addressMentions(text, [A], { ...lidGroup, addressingMode: WAMessageAddressingMode.PN }, noLid),
    ).toEqual({
      content: text,
      mentions: [`${A}@s.whatsapp.net`],
    });
    expect(await addressMentions(text, [A], undefined, noLid)).toEqual({
      content: text,
      mentions: [`${A}@s.whatsapp.net`],
    });
    const failing = async () => Promise.reject(new Error('store down'));
    expect(await addressMentions({ type: 'chat', text: `@${C}` }, [C], lidGroup, failing)).toEqual({
      content: { type: 'chat', text: `@${C}` },
      mentions: [`${C}@s.whatsapp.net`],
    });
  });

  it("reads a member's LID beside its number either way round", () => {
    expect(lidOfMember(lidGroup, `${A}@s.whatsapp.net`)).toBe('111111111111111@lid');
    expect(lidOfMember(lidGroup, `${B}@s.whatsapp.net`)).toBe('222222222222222@lid');
    expect(lidOfMember(lidGroup, `${C}@s.whatsapp.net`)).toBeNull();
  });
});
