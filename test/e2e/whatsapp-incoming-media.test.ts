// DECISIONS 15, incoming media, end to end: the built gateway on the whatsapp network against the stand-in, which
// encrypts a phone's media the way the phones do and serves it from its HTTPS media host. The gateway downloads it
// through the library (decrypting as it reads), checks it against the SHA-256 the message announced, stores it, and
// serves it at the signed `file_url` without a token (a copy the media host no longer has is uploaded again by the
// phone when asked); forwarded, it reaches another phone as the same bytes. SQLite only (vitest.config.ts).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { PNG, startStandinWorld, WAIT, type StandinWorld } from './standin-harness.js';

const ME = '15552370001';
const FRIEND = '15552370002';
const OTHER = '15552370003';

let world: StandinWorld;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const phoneSends = async (body: Record<string, unknown>): Promise<void> => {
  const sent = await world.standin.call('POST', `/control/phones/${FRIEND}/messages`, { to: ME, ...body });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
};
const seen = new Set<string>();
/** The next `message.incoming` event's data from FRIEND. */
const arrived = async (what: string) => {
  const event = await waitFor(
    () =>
      world.hooks
        .events()
        .find((e) => e.type === 'message.incoming' && e.data?.sender === FRIEND && !seen.has(e.data.id)),
    (e) => e !== undefined,
    { ...WAIT, what },
  );
  seen.add(event.data.id);
  return event.data;
};
const stored = (id: string) =>
  waitFor(
    () => world.message(id),
    (m) => m.media?.status === 'stored',
    { ...WAIT, what: 'the media stored' },
  );

beforeAll(async () => {
  world = await startStandinWorld(13);
  await world.startGateway();
  await world.pairedDevice('media', ME);
});

afterAll(async () => {
  await world?.stop();
});

describe('incoming media through the stand-in', () => {
  it('an image is announced with the size and hash WhatsApp gave, downloaded, decrypted and served', async () => {
    await phoneSends({ image: { url: world.filesUrl, mimetype: 'image/png' }, caption: 'look' });
    const event = await arrived('the image');
    expect(event).toMatchObject({ type: 'image', message: 'look' });
    expect(event.media).toEqual({
      status: 'pending',
      mimetype: 'image/png',
      size: PNG.length,
      file_name: null,
      sha256: sha(PNG),
    });
    expect(event.file_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/media\/[0-9A-Z]{26}\?expires=\d+&signature=/);
    const message = await stored(event.id);
    expect(message.media).toMatchObject({ status: 'stored', size: PNG.length, sha256: sha(PNG) });
    const served = await fetch(event.file_url, { headers: { connection: 'close' } });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);

    // Forwarded from the gateway's store to another phone: uploaded again, encrypted anew, and the phone decrypts the
    // very bytes the friend sent, marked forwarded.
    const forwarded = await world.api('POST', `/messages/${event.id}/forward`, { receiver: OTHER });
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200);
    const [entry] = await waitFor(
      async () => ((await world.phone(OTHER)).inbox ?? []) as any[],
      (entries) => entries.length === 1,
      { ...WAIT, what: 'the forwarded image on the other phone' },
    );
    expect(entry).toMatchObject({ type: 'image', text: 'look', media_sha256: sha(PNG), forwarded: true });
  });

  it('a document keeps its name; a voice note and a sticker are stored too', async () => {
    await phoneSends({ document: { url: world.filesUrl, mimetype: 'application/pdf', file_name: 'menu.pdf' } });
    const doc = await arrived('the document');
    expect(doc.media).toMatchObject({ status: 'pending', file_name: 'menu.pdf', mimetype: 'application/pdf' });
    expect((await stored(doc.id)).media.sha256).toBe(sha(PNG));
    await phoneSends({ audio: { url: world.filesUrl, mimetype: 'audio/ogg; codecs=opus' }, ptt: true });
    const voice = await arrived('the voice note');
    expect((await stored(voice.id)).params).toMatchObject({ ptt: true });
    await phoneSends({ sticker: { url: world.filesUrl, mimetype: 'image/webp' } });
    const sticker = await arrived('the sticker');
    const bytes = await fetch((await stored(sticker.id)).file_url, { headers: { connection: 'close' } });
    expect(Buffer.from(await bytes.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('media whose copy on the media host expired is uploaded again by the phone when asked, then stored', async () => {
    await phoneSends({
      image: { url: world.filesUrl, mimetype: 'image/png' },
      caption: 'late',
      media_expired: 'reupload',
    });
    const late = await arrived('the image whose host copy expired');
    const message = await stored(late.id);
    expect(message.media).toMatchObject({ status: 'stored', size: PNG.length, sha256: sha(PNG) });
    const served = await fetch(message.file_url, { headers: { connection: 'close' } });
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);

    // The phone no longer has it either: it says so, and the media is failed at once (nothing left to retry).
    await phoneSends({ image: { url: world.filesUrl, mimetype: 'image/png' }, caption: 'lost', media_expired: 'gone' });
    const lost = await arrived('the image the phone lost');
    const failed = await waitFor(
      () => world.message(lost.id),
      (m) => m.media?.status === 'failed',
      { ...WAIT, what: 'the media failed' },
    );
    expect(failed.file_url).toBeNull();
  });
});
