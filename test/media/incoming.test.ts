// DECISIONS 15, incoming media, through the sandbox with a real listening gateway, a real webhook receiver and a
// real media server: a phone's image arrives as an incoming message whose event says `media.status: "pending"`
// and carries the signed `file_url`; the file is then served there without a token (and with one), ranges answer
// 206 with exactly those bytes, a tampered or expired signature is 403, retention answers 410, media over the limit
// is `too_large`, a failing media server is retried then `failed` (the message stays), and a download cut short by
// a restart is finished after it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import {
  pairedWithWebhook,
  pairedWithWebhookSettings,
  startHookedGateway,
  startReceiver,
  waitForEvent,
  type Receiver,
} from '../events/helpers.js';
import { startMediaServer, type MediaServer } from './media-server.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { DAY_MS, mediaBuild as build, mediaConfig as config, sha256Hex as sha } from './setup.js';

const PHONE = '6287700000091';
const FRIEND = '6287799990091';

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers: { connection: 'close', ...headers } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString()) };
}

describe.skipIf(noStoreAvailable)('incoming media (sandbox, listening gateway)', () => {
  const clock = new ShiftedClock();
  let gw: TestGateway;
  let hooks: Receiver;
  let media: MediaServer;
  let base: string;
  beforeAll(async () => {
    media = await startMediaServer();
    ({ gw, hooks } = await startHookedGateway(PHONE, { clock, config, build, listen: true }));
    base = `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await gw?.close();
    await hooks?.close();
    await media?.close();
  });

  /** The phone sends media from `url`; answers the `message.incoming` event's data. */
  const phoneSendsMedia = async (body: Record<string, unknown>) => {
    const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, { to: PHONE, ...body });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const found = await waitForEvent(hooks, 'message.incoming', (e) => {
      const url = (body.media as { url: string }).url;
      return e.data.params?.mimetype !== undefined && JSON.stringify(e.data).length > 0 && seen(e, url);
    });
    return JSON.parse(found.body).data;
  };
  // Each test's media has its own path, and a phone message its own caption naming it.
  const seen = (event: any, url: string) => event.data.message === url || event.data.params?.caption === url;

  const messageOf = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;
  const settled = (id: string, status: string) =>
    waitFor(
      () => messageOf(id),
      (m) => m.media?.status === status,
      { what: `media ${status}`, timeoutMs: 10_000 },
    );

  it('an image arrives pending, then is served at its signed file_url without a token, whole and in ranges', async () => {
    const bytes = randomBytes(300_000);
    const url = media.answer('/photo.jpg', { bytes });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url, mimetype: 'image/jpeg' } });
    expect(event.media).toEqual({
      status: 'pending',
      mimetype: 'image/jpeg',
      size: null,
      file_name: null,
      sha256: null,
    });
    expect(event.file_url).toMatch(new RegExp(`^${base}/media/[0-9A-Z]{26}\\?expires=\\d+&signature=[\\w-]{43}$`));
    const stored = await settled(event.id, 'stored');
    expect(stored.media).toEqual({
      status: 'stored',
      mimetype: 'image/jpeg',
      size: bytes.length,
      file_name: null,
      sha256: sha(bytes),
    });

    const whole = await get(event.file_url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/jpeg');
    expect(whole.headers.get('content-length')).toBe(String(bytes.length));
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.body.equals(bytes)).toBe(true);

    const part = await get(event.file_url, { range: 'bytes=1048-2095' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1048-2095/${bytes.length}`);
    expect(part.headers.get('content-length')).toBe('1048');
    expect(part.body.equals(bytes.subarray(1048, 2096))).toBe(true);
    const tail = await get(event.file_url, { range: 'bytes=-10' });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const open = await get(event.file_url, { range: `bytes=${bytes.length - 3}-` });
    expect(open.body.equals(bytes.subarray(bytes.length - 3))).toBe(true);
    const outside = await get(event.file_url, { range: `bytes=${bytes.length}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    expect(outside.json().message).toBe('Range not satisfiable');

    // With the account's token instead of the signature; without either, 401.
    const path = new URL(event.file_url).pathname;
    const byToken = await get(`${base}${path}`, { authorization: `Bearer ${TEST_TOKEN}` });
    expect(byToken.status).toBe(200);
    expect(byToken.body.equals(bytes)).toBe(true);
    expect((await get(`${base}/api${path}`, { authorization: `Bearer ${TEST_TOKEN}` })).status).toBe(200);
    expect((await get(`${base}${path}`)).status).toBe(401);
    expect((await get(`${base}${path}`, { authorization: 'Bearer mgw_wrong' })).status).toBe(401);
    const unknown = await get(`${base}/media/01ARZ3NDEKTSV4RRFFQ69G5FAV`, { authorization: `Bearer ${TEST_TOKEN}` });
    expect(unknown.status).toBe(404);
    expect(unknown.json().message).toBe('Media not found');

    // The message list shows the same media.
    const listed = (await gw.request('GET', '/messages?direction=incoming&per_page=100')).body.data.find(
      (m: any) => m.id === event.id,
    );
    expect(listed.media.status).toBe('stored');
    expect(listed.file_url).toMatch(/\/media\/.*signature=/);
  });

  it('a tampered signature, or one signed for another media, is 403 Invalid signature', async () => {
    const url = media.answer('/tamper.jpg', { bytes: randomBytes(1000) });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url } });
    await settled(event.id, 'stored');
    const signed = new URL(event.file_url);
    const signature = signed.searchParams.get('signature')!;
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    const tampered = await get(event.file_url.replace(signature, flipped));
    expect(tampered.status).toBe(403);
    expect(tampered.json().message).toBe('Invalid signature');
    const later = await get(
      event.file_url.replace(/expires=(\d+)/, (_m: string, s: string) => `expires=${Number(s) + 1}`),
    );
    expect(later.status).toBe(403);
    const garbage = await get(`${base}${signed.pathname}?expires=1&signature=x`);
    expect(garbage.status).toBe(403);
  });

  it('a file keeps its name; media over GATEWAY_INCOMING_MEDIA_MAX_MB is too_large, nothing kept', async () => {
    const doc = randomBytes(2000);
    const docUrl = media.answer('/report.pdf', { bytes: doc });
    const file = await phoneSendsMedia({
      type: 'file',
      text: docUrl,
      media: { url: docUrl, mimetype: 'application/pdf', file_name: 'report q3.pdf' },
    });
    expect(file.media.file_name).toBe('report q3.pdf');
    await settled(file.id, 'stored');
    const served = await get(file.file_url);
    expect(served.headers.get('content-disposition')).toBe(`inline; filename*=UTF-8''report%20q3.pdf`);
    expect(served.body.equals(doc)).toBe(true);

    // Exactly the limit is kept; one byte more is not.
    const limit = 1024 * 1024;
    const atLimit = await phoneSendsMedia({
      type: 'video',
      text: media.answer('/exact.mp4', { bytes: randomBytes(limit) }),
      media: { url: `${media.base}/exact.mp4` },
    });
    expect((await settled(atLimit.id, 'stored')).media.size).toBe(limit);
    const big = await phoneSendsMedia({
      type: 'video',
      text: media.answer('/big.mp4', { bytes: randomBytes(limit + 1) }),
      media: { url: `${media.base}/big.mp4` },
    });
    const tooLarge = await settled(big.id, 'too_large');
    expect(tooLarge.file_url).toBeNull();
    expect(tooLarge.status).toBe('delivered');
    const chunks = await gw.app.store.db
      .selectFrom('incoming_media')
      .innerJoin('media_chunks', 'media_chunks.media_id', 'incoming_media.media_id')
      .select('seq')
      .where('incoming_media.message_id', '=', big.id)
      .execute();
    expect(chunks).toEqual([]);
    const asked = await get(`${base}${new URL(big.file_url).pathname}`, { authorization: `Bearer ${TEST_TOKEN}` });
    expect(asked.status).toBe(404);
  });

  it('a media server that keeps failing is tried 4 times (3 retries), then failed; the message stays incoming', async () => {
    const url = media.answer('/broken.jpg', { status: 500 });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url } });
    expect(event.status).toBe('delivered');
    const failed = await settled(event.id, 'failed');
    expect(failed.file_url).toBeNull();
    expect(media.hits.get('/broken.jpg')).toBe(4);
    const row = await gw.app.store.db
      .selectFrom('incoming_media')
      .select(['attempts', 'network_ref'])
      .where('message_id', '=', event.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ attempts: 4, network_ref: null });
  });

  it('a file_url fetched while the download runs waits, then answers 409 Media not ready; served once done', async () => {
    const bytes = randomBytes(5000);
    const url = media.answer('/slow.jpg', { held: true, bytes });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url } });
    await waitFor(
      () => media.hits.get('/slow.jpg') ?? 0,
      (n) => n === 1,
      { what: 'the download started' },
    );
    const early = await get(event.file_url);
    expect(early.status).toBe(409);
    expect(early.json().message).toBe('Media not ready');
    media.release('/slow.jpg');
    await settled(event.id, 'stored');
    expect((await get(event.file_url)).body.equals(bytes)).toBe(true);
  });

  it('the whatspie_v1 and whatspie_v2 formats carry the signed URL as file.url', async () => {
    const bytes = randomBytes(700);
    for (const [format, phone] of [
      ['whatspie_v1', '6287700000093'],
      ['whatspie_v2', '6287700000094'],
    ] as const) {
      const legacy = await startReceiver();
      try {
        await pairedWithWebhookSettings(gw, phone, { webhook_url: legacy.url, webhook_format: format });
        const url = media.answer(`/${format}.jpg`, { bytes });
        const sent = await gw.request('POST', `/sandbox/phones/${FRIEND}/messages`, {
          to: phone,
          type: 'image',
          text: 'from the shop',
          media: { url, mimetype: 'image/jpeg' },
        });
        expect(sent.status).toBe(200);
        const delivered = await waitFor(
          () => legacy.received.map((r) => JSON.parse(r.body)).find((b) => (b.data ?? b).file !== undefined),
          (b) => b !== undefined,
          { what: `the ${format} body` },
        );
        const body = format === 'whatspie_v1' ? delivered : delivered.data;
        expect(body.type).toBe('imageMessage');
        expect(body.file).toMatchObject({ caption: 'from the shop', mimetype: 'image/jpeg' });
        expect(body.file.url).toMatch(new RegExp(`^${base}/media/[0-9A-Z]{26}\\?expires=\\d+&signature=`));
        await settled(body.message_id, 'stored');
        expect((await get(body.file.url)).body.equals(bytes)).toBe(true);
      } finally {
        await legacy.close();
      }
    }
  });

  // These move the clock: last.
  it('a signed URL past its expiry is 403 Signature expired; the token still serves it', async () => {
    const url = media.answer('/old.jpg', { bytes: randomBytes(100) });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url } });
    await settled(event.id, 'stored');
    clock.advance(gw.config.mediaUrlTtlS * 1000 - 2000);
    expect((await get(event.file_url)).status).toBe(200);
    clock.advance(2000);
    const expired = await get(event.file_url);
    expect(expired.status).toBe(403);
    expect(expired.json().message).toBe('Signature expired');
    // The message object signs a fresh URL each time it is read.
    const fresh = await messageOf(event.id);
    expect((await get(fresh.file_url)).status).toBe(200);
  });

  it('after GATEWAY_INCOMING_MEDIA_RETENTION_DAYS the bytes go and /media answers 410 Media expired', async () => {
    const url = media.answer('/kept.jpg', { bytes: randomBytes(100) });
    const event = await phoneSendsMedia({ type: 'image', text: url, media: { url } });
    await settled(event.id, 'stored');
    const { expiry } = gw.app.services.incomingMedia;
    clock.advance(29 * DAY_MS);
    await expiry.run();
    const fresh = await messageOf(event.id);
    expect(fresh.media.status).toBe('stored');
    clock.advance(1 * DAY_MS + 1);
    expect(await expiry.run()).toBeGreaterThanOrEqual(1);
    const gone = await messageOf(event.id);
    expect(gone.media.status).toBe('expired');
    const answer = await get(gone.file_url);
    expect(answer.status).toBe(410);
    expect(answer.json().message).toBe('Media expired');
    const mediaId = new URL(gone.file_url).pathname.split('/').pop()!;
    const left = await gw.app.store.db
      .selectFrom('media_chunks')
      .select('seq')
      .where('media_id', '=', mediaId)
      .execute();
    expect(left).toEqual([]);
  });
});

describe.skipIf(noStoreAvailable)('incoming media across a restart', () => {
  it('a download cut short by a restart is finished after it, from the first byte', async () => {
    const media = await startMediaServer();
    const hooks = await startReceiver();
    const first = await startGateway({ config, build });
    let second: TestGateway | undefined;
    try {
      await first.app.listen({ port: 0, host: '127.0.0.1' });
      await pairedWithWebhook(first, PHONE, hooks.url);
      const bytes = randomBytes(600_000);
      const url = media.answer('/cut.mp4', { stallAfter: 200_000, bytes });
      const sent = await first.request('POST', `/sandbox/phones/${FRIEND}/messages`, {
        to: PHONE,
        type: 'video',
        media: { url },
      });
      expect(sent.status).toBe(200);
      const found = await waitForEvent(hooks, 'message.incoming');
      const id = JSON.parse(found.body).data.id as string;
      await waitFor(
        () => media.hits.get('/cut.mp4') ?? 0,
        (n) => n === 1,
        { what: 'the download started' },
      );
      await first.close({ keepStore: true });

      media.answer('/cut.mp4', { bytes });
      second = await startGateway({ location: first.location, config, build });
      await second.app.listen({ port: 0, host: '127.0.0.1' });
      const done = await waitFor(
        async () => (await second!.request('GET', `/messages/${id}`)).body.data,
        (m) => m.media?.status === 'stored',
        { what: 'stored after the restart', timeoutMs: 10_000 },
      );
      expect(done.media.sha256).toBe(sha(bytes));
      expect((await get(done.file_url)).body.equals(bytes)).toBe(true);
      expect(media.hits.get('/cut.mp4')).toBe(2);
    } finally {
      await second?.close();
      await first.close();
      await hooks.close();
      await media.close();
    }
  });
});
