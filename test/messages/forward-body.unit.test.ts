// What a forward sends (src/messages/actions-rules.ts, forwardBody; DECISIONS 15): received content goes on as a
// send of its kind, received media only with its stored copy (named by the gateway's URL); contact cards take their
// first number (a card without one is refused); received kinds that cannot be sent (unsupported, replies to lists and
// buttons) and a reply-by-response reaction are 400 `Message cannot be forwarded` with an `error` saying why.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { forwardBody, receivedMediaSource } from '../../src/messages/actions-rules.js';
import type { MessageRow } from '../../src/messages/repository.js';

const row = (fields: Partial<MessageRow>): MessageRow =>
  ({
    id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
    direction: 'incoming',
    type: 'chat',
    message: null,
    params: '{}',
    device_phone: '6281100000001',
    receiver: '6281100000001',
    sender: '6281100000002',
    ...fields,
  }) as MessageRow;

const media = { mediaId: '01JBBBBBBBBBBBBBBBBBBBBBBB', mimetype: 'image/jpeg', size: 10, fileName: null };
const url = 'http://127.0.0.1:3000/media/01JBBBBBBBBBBBBBBBBBBBBBBB';

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('not refused');
}

describe('forwardBody', () => {
  it('sends received media by its stored copy, with caption, file name and voice-note mark', () => {
    const image = row({ type: 'image', message: 'look', params: JSON.stringify({ mimetype: 'image/jpeg' }) });
    expect(forwardBody(image, { media, url })).toEqual({
      type: 'image',
      params: { image: { url }, caption: 'look' },
      stored: media,
    });
    const file = row({ type: 'file', params: JSON.stringify({ mimetype: 'application/pdf', fileName: 'a.pdf' }) });
    expect(forwardBody(file, { media, url }).params).toEqual({ document: { url }, fileName: 'a.pdf' });
    const voice = row({ type: 'audio', params: JSON.stringify({ mimetype: 'audio/ogg', ptt: true }) });
    expect(forwardBody(voice, { media, url }).params).toEqual({ audio: { url }, ptt: true });
    // Without its stored copy, received media is not sent.
    expect(refusal(() => forwardBody(image)).message).toBe('Message cannot be forwarded');
  });

  it('sends received contact cards with their first number; a card with none is refused', () => {
    const cards = (contacts: unknown) => row({ type: 'contact', params: JSON.stringify({ contacts }) });
    expect(
      forwardBody(
        cards([
          { name: 'Budi', phones: ['6281234500001', '6281234500009'] },
          { name: '', phones: ['6281234500002'] },
        ]),
      ),
    ).toEqual({
      type: 'contact',
      params: {
        contacts: [
          { name: 'Budi', phone: '6281234500001' },
          { name: '6281234500002', phone: '6281234500002' },
        ],
      },
    });
    const none = refusal(() => forwardBody(cards([{ name: 'Nobody', phones: [] }])));
    expect(none.message).toBe('Message cannot be forwarded');
    expect(JSON.stringify(none.detail)).toMatch(/without a phone number/);
  });

  it('refuses received kinds that cannot be sent, and a reaction of ours', () => {
    for (const type of ['unsupported', 'list_reply', 'button_reply']) {
      const refused = refusal(() => forwardBody(row({ type, params: '{"network_type":"x"}' })));
      expect(refused.message).toBe('Message cannot be forwarded');
      expect(JSON.stringify(refused.detail)).toMatch(new RegExp(`a received ${type} cannot be sent on`));
    }
    expect(refusal(() => forwardBody(row({ direction: 'outgoing', type: 'reaction' }))).message).toBe(
      'Message cannot be forwarded',
    );
  });

  it('names the received message whose media a forward sends: itself, or the one a forward of ours came from', () => {
    expect(receivedMediaSource(row({ type: 'image' }))).toBe('01JAAAAAAAAAAAAAAAAAAAAAAA');
    expect(receivedMediaSource(row({ type: 'chat' }))).toBeNull();
    const ours = row({ direction: 'outgoing', type: 'image', params: JSON.stringify({ forwarded_from: 'X' }) });
    expect(receivedMediaSource(ours)).toBe('X');
    expect(receivedMediaSource(row({ direction: 'outgoing', type: 'image', params: '{}' }))).toBeNull();
  });
});
