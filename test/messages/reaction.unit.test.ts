// Reactions sent by reply by response (src/messages/reaction.ts): a body is exactly one emoji, a
// flag or a keycap included, however many code points it takes; anything else is refused naming
// `body`, never sent. The request stored for it names the reacted-to message as its quote.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { isOneEmoji, NOT_ONE_EMOJI, validateReaction } from '../../src/messages/reaction.js';

describe('a reaction is exactly one emoji', () => {
  it.each([
    ['👍'],
    ['👍🏽'], // with a skin tone
    ['❤️'], // with the emoji presentation selector
    ['❤'], // without it
    ['👨‍👩‍👧‍👦'], // a ZWJ family: one grapheme of seven code points
    ['🇮🇩'], // a flag: two regional indicators
    ['1️⃣'], // a keycap
    ['#️⃣'],
  ])('takes %s', (emoji) => {
    expect(isOneEmoji(emoji)).toBe(true);
  });

  it.each([[''], ['ok'], ['a'], ['1'], ['👍👍'], ['👍 '], [' 👍'], ['a👍'], ['🇮'], ['\u200d'], ['👍'.repeat(40)]])(
    'refuses %j',
    (text) => {
      expect(isOneEmoji(text)).toBe(false);
    },
  );

  it('a refused body is a 400 naming `body`; a taken one is stored with its target as the quote', () => {
    const request = { device: '6281', chat: '6282', messageId: '01JQZ3Y8N5S7T9V1W3X5Y7Z9A1', emoji: 'ok' };
    const refused = (() => {
      try {
        validateReaction(request);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'VALIDATION_FAILED', detail: { errors: { body: [NOT_ONE_EMOJI] } } });
    expect(validateReaction({ ...request, emoji: '🎉' })).toEqual({
      device: '6281',
      receiver: '6282',
      type: 'reaction',
      simulateTyping: 0,
      message: '🎉',
      params: { emoji: '🎉', message_id: request.messageId },
      media: null,
      content: null,
      quotedMessageId: request.messageId,
    });
  });
});
