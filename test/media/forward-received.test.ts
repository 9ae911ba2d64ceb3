// DECISIONS 15, forward of received content, through the sandbox with a real listening gateway and a real media
// server: received image, file, voice note and sticker are sent on from the gateway's store (the receiving phone
// gets the very bytes the sender sent; nothing is fetched from the gateway's own URL), a forward of that forward
// sends them again, received locations, contact cards and polls go on as new messages of ours; media that is not
// `stored` (pending, failed, too large, expired) is 400 `Message cannot be forwarded` saying why. An action's answer
// on a received media message shows its `media` and `file_url` as GET /messages/{id} does.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { startHookedGateway, waitForEvent, type Receiver } from '../events/helpers.js';
import { startMediaServer, type MediaServer } from './media-server.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { DAY_MS, mediaBuild as build, mediaConfig as config, sha256Hex as sha } from './setup.js';

const PHONE = '6287700000191';
const FRIEND = '6287799990191';

describe.skipIf(noStoreAvailable)('forward of received content (sandbox, listening gateway)', () => {
  const clock = new ShiftedClock();
  let gw: TestGateway;
  let hooks: Receiver;
  let media: MediaServer;
  let deviceId: number;
  beforeAll(async () => {
    media = await startMediaServer();
    let device: { id: number };
    ({ gw, hooks, device } = await startHookedGateway(PHONE, { clock, config, build, listen: true }));
    deviceId = device.id;
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await media?.close();
  });

  let marker = 0;
  /** The friend's phone sends a message; answers the `message.incoming` event's data. */
  const phoneSends = async (body: Record<string, unknown>) => {
    const tag = `m${++marker}`;
    const withTag = body.type === undefined || ['chat', 'image', 'video', 'file'].includes(body.type as string);
    const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, {
      to: PHONE,
      ...(withTag ? { text: tag } : {}),
      ...body,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const found = await waitForEvent(hooks, 'message.incoming', (e) =>
      withTag ? e.data.message === tag : e.data.type === body.type && !taken.has(e.data.id),
    );
    const data = JSON.parse(found.body).data;
    taken.add(data.id);
    return data;
  };
  const taken = new Set<string>();
  const messageOf = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const settled = (id: string, status: string) =>
    waitFor(
      () => messageOf(id),
      (m) => m.media?.status === status,
      { what: `media ${status}`, timeoutMs: 10_000 },
    );
  const inboxOf = async (of: string): Promise<any[]> =>
    (await gw.request('GET', `/sandbox/phones/${of}`)).body.data?.inbox ?? [];
  const inboxUntil = (of: string, count: number) =>
    waitFor(
      () => inboxOf(of),
      (e) => e.length >= count,
      { what: `${count} messages in ${of}'s inbox` },
    );
  const quotaUsed = async () =>
    Number((await gw.request('GET', `/devices/${deviceId}`)).body.data.subscription.quote_used);
  const refused = (res: { status: number; body: any }, detail: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toBe('Message cannot be forwarded');
    expect(res.body.error).toMatch(detail);
  };

  it('received image, file, voice note and sticker go on from the store: the same bytes, counted, marked forwarded', async () => {
    const image = randomBytes(300_000);
    const doc = randomBytes(500_000);
    const voice = randomBytes(40_000);
    const sticker = randomBytes(20_000);
    const received = [
      await phoneSends({
        type: 'image',
        media: { url: media.answer('/f1.jpg', { bytes: image }), mimetype: 'image/jpeg' },
      }),
      await phoneSends({
        type: 'file',
        media: {
          url: media.answer('/f2.pdf', { bytes: doc }),
          mimetype: 'application/pdf',
          file_name: 'q3 report.pdf',
        },
      }),
      await phoneSends({ type: 'audio', ptt: true, media: { url: media.answer('/f3.ogg', { bytes: voice }) } }),
      await phoneSends({ type: 'sticker', media: { url: media.answer('/f4.webp', { bytes: sticker }) } }),
    ];
    for (const message of received) await settled(message.id, 'stored');
    const served = ['/f1.jpg', '/f2.pdf', '/f3.ogg', '/f4.webp'].map((path) => media.hits.get(path));
    const receiver = '6287711110191';
    const quota = await quotaUsed();
    const forwards: any[] = [];
    for (const message of received) {
      const res = await gw.request('POST', `/messages/${message.id}/forward`, { receiver });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      forwards.push(res.body.data);
    }
    expect(await quotaUsed()).toBe(quota + 4);
    expect(forwards[0]).toMatchObject({
      direction: 'outgoing',
      type: 'image',
      receiver,
      message: received[0].message,
      params: { caption: received[0].message, forwarded: true, forwarded_from: received[0].id },
    });
    // The new message names the media by the gateway's own URL of it (served with the account's token).
    expect(forwards[0].file_url).toMatch(/\/media\/[0-9A-Z]{26}$/);
    expect(forwards[1]).toMatchObject({ type: 'file', params: { fileName: 'q3 report.pdf', forwarded: true } });
    expect(forwards[2]).toMatchObject({ type: 'audio', params: { ptt: true, forwarded: true } });
    expect(forwards[3]).toMatchObject({ type: 'sticker', params: { forwarded: true } });

    const inbox = await inboxUntil(receiver, 4);
    const digests = [image, doc, voice, sticker].map((bytes) => ({ size: bytes.length, sha256: sha(bytes) }));
    expect(inbox.map((entry) => entry.type)).toEqual(['image', 'file', 'audio', 'sticker']);
    inbox.forEach((entry, i) => {
      expect(entry.forwarded).toBe(true);
      expect(entry.content).toMatchObject(digests[i]!);
    });
    expect(inbox[0].content).toMatchObject({ mimetype: 'image/jpeg', caption: received[0].message });
    expect(inbox[1].content).toMatchObject({ mimetype: 'application/pdf', fileName: 'q3 report.pdf' });
    expect(inbox[2].content).toMatchObject({ ptt: true });
    // Nothing was fetched again: not from the sender's media server, and the gateway's own URL is never fetched.
    expect(['/f1.jpg', '/f2.pdf', '/f3.ogg', '/f4.webp'].map((path) => media.hits.get(path))).toEqual(served);

    // A forward of the forward sends the received bytes once more, from the store.
    await waitFor(
      () => messageOf(forwards[0].id),
      (m) => m.status !== 'pending',
      { what: 'the forward sent' },
    );
    const again = await gw.request('POST', `/messages/${forwards[0].id}/forward`, { receiver: '6287722220191' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data.params).toMatchObject({ forwarded: true, forwarded_from: received[0].id });
    const [copy] = await inboxUntil('6287722220191', 1);
    expect(copy.content).toMatchObject(digests[0]!);

    // Each forward's copy went with it once sent; the received media is still kept and served.
    await waitFor(
      () => gw.app.store.db.selectFrom('message_media').select('message_id').execute(),
      (rows) => rows.length === 0,
      { what: 'the forwards’ copies deleted once sent' },
    );
    expect((await messageOf(received[0].id)).media.status).toBe('stored');
  });

  it('received location, contact cards and poll go on as new messages of ours', async () => {
    const location = await phoneSends({
      type: 'location',
      location: { latitude: -6.2, longitude: 106.8, name: 'Monas', address: 'Jakarta' },
    });
    const contact = await phoneSends({
      type: 'contact',
      contacts: [
        { name: 'Budi', phone: '6281234500001' },
        { name: 'Sari', phone: '6281234500002' },
      ],
    });
    const poll = await phoneSends({
      type: 'poll',
      poll: { name: 'Lunch?', options: ['Rice', 'Noodles', 'Soup'], selectable_count: 2 },
    });
    const receiver = '6287733330191';
    for (const message of [location, contact, poll]) {
      const res = await gw.request('POST', `/messages/${message.id}/forward`, { receiver });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toMatchObject({ direction: 'outgoing', type: message.type, params: { forwarded: true } });
    }
    const inbox = await inboxUntil(receiver, 3);
    expect(inbox.map((entry) => entry.type)).toEqual(['location', 'contact', 'poll']);
    expect(inbox[0].content).toMatchObject({ latitude: -6.2, longitude: 106.8, name: 'Monas', address: 'Jakarta' });
    expect(inbox[1].content.contacts).toEqual([
      { name: 'Budi', phone: '6281234500001' },
      { name: 'Sari', phone: '6281234500002' },
    ]);
    expect(inbox[2].content).toMatchObject({
      name: 'Lunch?',
      options: ['Rice', 'Noodles', 'Soup'],
      selectableCount: 2,
    });
    expect(inbox.every((entry) => entry.forwarded === true)).toBe(true);
  });

  it('media not stored cannot be forwarded, saying why; nothing is sent or counted', async () => {
    const receiver = '6287744440191';
    const quota = await quotaUsed();
    const held = await phoneSends({
      type: 'image',
      media: { url: media.answer('/held.jpg', { held: true, bytes: randomBytes(900) }) },
    });
    refused(await gw.request('POST', `/messages/${held.id}/forward`, { receiver }), /still being downloaded/);
    media.release('/held.jpg');
    await settled(held.id, 'stored');

    const broken = await phoneSends({ type: 'image', media: { url: media.answer('/broken.jpg', { status: 500 }) } });
    await settled(broken.id, 'failed');
    refused(await gw.request('POST', `/messages/${broken.id}/forward`, { receiver }), /could not be downloaded/);

    const big = await phoneSends({
      type: 'video',
      media: { url: media.answer('/big.mp4', { bytes: randomBytes(1024 * 1024 + 1) }) },
    });
    await settled(big.id, 'too_large');
    refused(await gw.request('POST', `/messages/${big.id}/forward`, { receiver }), /GATEWAY_INCOMING_MEDIA_MAX_MB/);

    clock.advance(31 * DAY_MS);
    await gw.app.services.incomingMedia.expiry.run();
    await settled(held.id, 'expired');
    refused(await gw.request('POST', `/messages/${held.id}/forward`, { receiver }), /expired/);
    expect(await quotaUsed()).toBe(quota);
    expect(await inboxOf(receiver)).toEqual([]);
  });

  it('an action’s answer on received media shows its media and file_url as GET /messages/{id} does', async () => {
    const bytes = randomBytes(1000);
    const image = await phoneSends({ type: 'image', media: { url: media.answer('/react.jpg', { bytes }) } });
    const stored = await settled(image.id, 'stored');
    const path = (url: string) => new URL(url).pathname;
    const reacted = await gw.request('POST', `/messages/${image.id}/reaction`, { emoji: '👍' });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    expect(reacted.body.data.media).toEqual(stored.media);
    expect(path(reacted.body.data.file_url)).toBe(path(stored.file_url));
    expect(reacted.body.data.file_url).toMatch(/\?expires=\d+&signature=[\w-]{43}$/);
    const read = await gw.request('POST', `/messages/${image.id}/read`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.data.media).toEqual(stored.media);
    expect(path(read.body.data.file_url)).toBe(path(stored.file_url));
    const fetched = await fetch(read.body.data.file_url);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
