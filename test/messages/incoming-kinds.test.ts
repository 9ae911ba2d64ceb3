// Issue 26 (DECISIONS 15, incoming messages carry every kind), through the sandbox: a phone sends each kind
// (`POST /sandbox/phones/{phone}/messages` with `type`), the gateway stores it as its incoming kind, with the
// message it replies to (`params.quoted`: our id and the network's) and announces it as `message.incoming` at a real
// receiver; a malformed body is refused naming the field, and nothing arrives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { sendChat, startHookedGateway, verified, waitForEvent, type Receiver } from '../events/helpers.js';

const PHONE = '6287700000061';
const FRIEND = '6287799990061';
// Nothing listens there: the media's download fails (test/media/incoming.test.ts downloads it for real).
const MEDIA = 'http://127.0.0.1:9/files/photo.jpg';

describe.skipIf(noStoreAvailable)('incoming messages of every kind (sandbox)', () => {
  let gw: TestGateway;
  let hooks: Receiver;
  let device: any;
  beforeAll(async () => {
    ({ gw, hooks, device } = await startHookedGateway(PHONE));
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
  });

  /** The phone sends `body`; answers the stored message (as its `message.incoming` event shows it) and its network id. */
  const sentBy = async (body: Record<string, unknown>) => {
    const before = new Set(
      ((await gw.request('GET', '/messages?direction=incoming&per_page=100')).body.data as any[]).map((m) => m.id),
    );
    const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, { to: PHONE, ...body });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const stored = await waitFor(
      async () =>
        ((await gw.request('GET', '/messages?direction=incoming&per_page=100')).body.data as any[]).find(
          (m) => !before.has(m.id),
        ),
      (m) => m !== undefined,
      { what: `the ${String(body.type ?? 'chat')} stored` },
    );
    const request = await waitForEvent(hooks, 'message.incoming', (e) => e.data.id === stored.id);
    // The media's URL is signed afresh on each read and its download moves on: the rest is the same.
    const { file_url: _eventUrl, media: eventMedia, ...announced } = verified(device.webhook_secret, request).data;
    const { file_url: _storedUrl, media: _storedMedia, ...read } = stored;
    expect(announced).toEqual(read);
    if (eventMedia !== undefined) expect(eventMedia.status).toBe('pending');
    return { stored, networkId: sent.body.data.message_id as string };
  };

  it('a sticker, a voice note, an audio file, an image with caption and a named file keep their media facts', async () => {
    const sticker = (await sentBy({ type: 'sticker', media: { url: MEDIA, mimetype: 'image/webp' } })).stored;
    expect(sticker).toMatchObject({
      type: 'sticker',
      message: null,
      params: { mimetype: 'image/webp' },
      media: { mimetype: 'image/webp', file_name: null },
    });
    expect(sticker.file_url).toMatch(/\/media\/[0-9A-Z]{26}\?expires=\d+&signature=/);
    const voice = (
      await sentBy({ type: 'audio', ptt: true, media: { url: MEDIA, mimetype: 'audio/ogg; codecs=opus' } })
    ).stored;
    expect(voice).toMatchObject({ type: 'audio', params: { mimetype: 'audio/ogg; codecs=opus', ptt: true } });
    const song = (await sentBy({ type: 'audio', media: { url: MEDIA, mimetype: 'audio/mpeg' } })).stored;
    expect(song.params).toEqual({ mimetype: 'audio/mpeg' });
    const image = (await sentBy({ type: 'image', text: 'our shop', media: { url: MEDIA, mimetype: 'image/jpeg' } }))
      .stored;
    expect(image).toMatchObject({
      type: 'image',
      message: 'our shop',
      params: { mimetype: 'image/jpeg', caption: 'our shop' },
    });
    const file = (
      await sentBy({ type: 'file', media: { url: MEDIA, mimetype: 'application/pdf', file_name: 'menu.pdf' } })
    ).stored;
    expect(file).toMatchObject({
      type: 'file',
      params: { mimetype: 'application/pdf', fileName: 'menu.pdf' },
      media: { mimetype: 'application/pdf', file_name: 'menu.pdf' },
    });
  });

  it('a location with its name and address, contacts, and a poll', async () => {
    const place = (
      await sentBy({
        type: 'location',
        location: { latitude: -6.175, longitude: 106.827, name: 'Monas', address: 'Jakarta' },
      })
    ).stored;
    expect(place).toMatchObject({
      type: 'location',
      message: null,
      params: { location: { degreesLatitude: -6.175, degreesLongitude: 106.827, name: 'Monas', address: 'Jakarta' } },
    });
    const cards = (
      await sentBy({
        type: 'contact',
        contacts: [
          { name: 'Ana', phone: '6281111111111' },
          { name: 'Budi', phone: '6282222222222' },
        ],
      })
    ).stored;
    expect(cards).toMatchObject({
      type: 'contact',
      params: {
        contacts: [
          { name: 'Ana', phones: ['6281111111111'] },
          { name: 'Budi', phones: ['6282222222222'] },
        ],
      },
    });
    const poll = (await sentBy({ type: 'poll', poll: { name: 'Lunch?', options: ['Rice', 'Noodles'] } })).stored;
    expect(poll).toMatchObject({
      type: 'poll',
      message: 'Lunch?',
      params: { name: 'Lunch?', options: ['Rice', 'Noodles'], selectable_count: 1 },
    });
  });

  it('a reply names the quoted message by our id and the network id: ours sent, theirs received', async () => {
    const ours = await sendChat(gw, PHONE, FRIEND, 'we open at nine');
    const toOurs = (await sentBy({ text: 'great, thanks', reply_to: ours })).stored;
    expect(toOurs.params).toEqual({ text: 'great, thanks', quoted: { message_id: ours, network_id: ours } });

    const first = await sentBy({ text: 'one more thing' });
    const toTheirs = (
      await sentBy({
        type: 'poll',
        poll: { name: 'When?', options: ['9', '10'], selectable_count: 2 },
        reply_to: first.stored.id,
      })
    ).stored;
    expect(toTheirs.params).toEqual({
      name: 'When?',
      options: ['9', '10'],
      selectable_count: 2,
      quoted: { message_id: first.stored.id, network_id: first.networkId },
    });
  });

  it('refuses a malformed body naming the field, and nothing arrives', async () => {
    const count = async () =>
      ((await gw.request('GET', '/messages?direction=incoming&per_page=100')).body.data as any[]).length;
    const before = await count();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'image' }, 'media'],
      [{ type: 'image', media: { url: 'not a url' } }, 'media.url'],
      [{ type: 'sticker', media: { url: MEDIA, mimetype: 'image/png' } }, 'media.mimetype'],
      [{ type: 'chat' }, 'text'],
      [{ type: 'location', location: { latitude: 91, longitude: 0 } }, 'location.latitude'],
      [{ type: 'location' }, 'location'],
      [{ type: 'contact', contacts: [] }, 'contacts'],
      [{ type: 'contact', contacts: [{ name: 'Ana', phone: '12' }] }, 'contacts.0.phone'],
      [{ type: 'poll', poll: { name: 'Q', options: ['only one'] } }, 'poll.options'],
      [{ type: 'poll', poll: { name: 'Q', options: ['a', 'a'] } }, 'poll.options'],
      [{ type: 'poll', poll: { name: 'Q', options: ['a', 'b'], selectable_count: 3 } }, 'poll.selectable_count'],
      [{ type: 'video', ptt: true, media: { url: MEDIA } }, 'ptt'],
      [{ type: 'chat', text: 'x', poll: { name: 'Q', options: ['a', 'b'] } }, 'poll'],
      [{ type: 'hologram', text: 'x' }, 'type'],
      [{ text: 'x', reply_to: '01KAZ0000000000000000000AB' }, 'reply_to'],
    ];
    for (const [body, field] of cases) {
      const res = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, { to: PHONE, ...body });
      expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).toBe(400);
      expect(Object.keys(res.body.errors ?? {}), JSON.stringify(res.body)).toContain(field);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await count()).toBe(before);
  });
});
