// DECISIONS 16: a chat's `last_message` is the message exactly as `GET /messages/{id}` shows it, with what is read
// beside the row: the reactions phones put on it and a received message's media. The list reads those only for
// the page's messages that have them (chats/repository.ts, pageWithLast); this says it finds them, on the first
// page and on a page reached by cursor.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { startMediaServer, type MediaServer } from '../media/media-server.js';
import { mediaBuild as build, mediaConfig as config } from '../media/setup.js';

const PHONE = '6284199000071';
const REACTING = '6284199990071';
const SENDING = '6284199990072';
const QUIET = '6284199990073';

describe.skipIf(noStoreAvailable)('a chat’s last message in the chat list', () => {
  let gw: TestGateway;
  let media: MediaServer;
  beforeAll(async () => {
    media = await startMediaServer();
    gw = await startGateway({ build, config });
    await createPairedDevice(gw, PHONE);
  });
  afterAll(async () => {
    await gw?.close();
    await media?.close();
  });

  const message = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const incomingFrom = (from: string) =>
    waitFor(
      async () => ((await gw.request('GET', `/chats/${from}/messages?device=${PHONE}`)).body.data as any[])[0],
      (found) => found !== undefined,
      { what: `a message from ${from}` },
    );
  /** A message with its media link's signature left out: the link is signed anew, per second, at every read. */
  const unsigned = (m: any) => (m?.file_url ? { ...m, file_url: m.file_url.replace(/\?.*/, '') } : m);
  const unsignedChat = (c: any) => ({ ...c, last_message: unsigned(c.last_message) });
  const listed = async (query = '') =>
    (await gw.request('GET', `/chats?device=${PHONE}&limit=100${query}`)).body.data as any[];

  it('shows the reactions on it and its received media, as GET /messages/{id} does, on every page', async () => {
    const sent = await gw.request('POST', `/sandbox/phones/${SENDING}/messages`, {
      to: PHONE,
      type: 'image',
      text: 'a picture',
      media: { url: media.answer('/chat-last.jpg', { bytes: randomBytes(20_000) }), mimetype: 'image/jpeg' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const image = await incomingFrom(SENDING);
    await waitFor(
      () => message(image.id),
      (m) => m.media?.status === 'stored',
      { what: 'the picture stored', timeoutMs: 10_000 },
    );

    expect((await gw.request('POST', `/sandbox/phones/${REACTING}/messages`, { to: PHONE, text: 'hi' })).status).toBe(
      200,
    );
    const text = await incomingFrom(REACTING);
    const reacted = await gw.request('POST', `/sandbox/phones/${REACTING}/reactions`, {
      message_id: text.id,
      emoji: '👍',
    });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    await waitFor(
      () => message(text.id),
      (m) => m.reactions !== undefined,
      { what: 'the reaction stored' },
    );
    expect((await gw.request('POST', `/sandbox/phones/${QUIET}/messages`, { to: PHONE, text: 'last' })).status).toBe(
      200,
    );
    await incomingFrom(QUIET);

    const all = await listed();
    expect(all.map((c) => c.id)).toEqual([QUIET, REACTING, SENDING]);
    const withReaction = await message(text.id);
    const withMedia = await message(image.id);
    expect(withReaction.reactions).toEqual([{ from: REACTING, emoji: '👍' }]);
    expect(withMedia.media).toMatchObject({ status: 'stored', mimetype: 'image/jpeg' });
    expect(all[1].last_message).toEqual(withReaction);
    expect(unsigned(all[2].last_message)).toEqual(unsigned(withMedia));
    expect(withMedia.file_url).toMatch(/\/media\//);
    expect(all[0].last_message.reactions).toBeUndefined();

    // The same two, one page at a time after the first.
    const first = await gw.request('GET', `/chats?device=${PHONE}&limit=1`);
    const second = await gw.request('GET', `/chats?device=${PHONE}&limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.data).toEqual([all[1]]);
    expect(second.body.next_cursor).toEqual(expect.any(String));
    const third = await gw.request('GET', `/chats?device=${PHONE}&limit=1&cursor=${second.body.next_cursor}`);
    expect(third.body.data.map(unsignedChat)).toEqual([unsignedChat(all[2])]);
    expect(third.body.next_cursor).toBeNull();
  });
});
