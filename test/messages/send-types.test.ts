// DECISIONS 15, first bullet: the sticker, contact and poll types, voice notes and link previews, sent through
// POST /messages and the group send route on the sandbox, with every refusal at its boundary. A real HTTP server
// serves the stickers and the pages previewed (one hangs, one is 5 MB: neither fails its message).
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, TEST_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { adminGroup, numbers } from '../groups/helpers.js';

const MiB = 1024 * 1024;
const WEBP = readFileSync(new URL('../fixtures/media/tiny.webp', import.meta.url));
const PNG = readFileSync(new URL('../fixtures/media/tiny.png', import.meta.url));
const JPEG = readFileSync(new URL('../fixtures/media/tiny.jpg', import.meta.url));
const OGG = readFileSync(new URL('../fixtures/media/tiny.ogg', import.meta.url));
/** A WebP of exactly `size` bytes: the fixture, then padding (the format is judged by its head). */
const webpOf = (size: number) => Buffer.concat([WEBP, Buffer.alloc(size - WEBP.length)]);

const PAGE = `<!doctype html><html><head>
<title>Fallback title</title>
<meta property="og:title" content="Fresh bread &amp; coffee">
<meta name="description" content="Open every day from 7">
<meta property="og:image" content="/thumb.jpg">
</head><body>Hello</body></html>`;

const fresh = numbers('62841');

describe.skipIf(noStoreAvailable)('sticker, contact and poll messages, voice notes and link previews', () => {
  let server: Server;
  let origin: string;
  let gw: TestGateway;
  let device: string;
  const hanging = new Set<ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const send = (type: string, body: Buffer | string) => res.writeHead(200, { 'content-type': type }).end(body);
      if (path === '/sticker.webp') return send('image/webp', WEBP);
      if (path === '/exactly-1mb.webp') return send('image/webp', webpOf(MiB));
      if (path === '/over-1mb.webp') return send('image/webp', webpOf(MiB + 1));
      // A PNG said to be WebP: the bytes decide.
      if (path === '/picture.webp') return send('image/webp', PNG);
      if (path === '/shop') return send('text/html; charset=utf-8', PAGE);
      if (path === '/thumb.jpg') return send('image/jpeg', JPEG);
      if (path === '/note.ogg') return send('audio/ogg', OGG);
      if (path === '/huge') return send('text/html', `<title>Huge</title>${'x'.repeat(5 * MiB)}`);
      if (path === '/hang') {
        hanging.add(res);
        return undefined;
      }
      res.writeHead(404).end();
      return undefined;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      build: { sandbox: { deliveryDelayMs: 5, readDelayMs: 5 } },
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
    });
    device = (await createPairedDevice(gw, '6284199000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  const send = (type: string, params: unknown, receiver = fresh(1)[0]!) =>
    gw.request('POST', '/messages', { device, receiver, type, params });

  /** Sends, expects it accepted, and answers what the receiver's phone shows of it. */
  async function delivered(type: string, params: unknown) {
    const receiver = fresh(1)[0]!;
    const res = await send(type, params, receiver);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.data.id as string;
    const inbox = await waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${receiver}`)).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((e) => e.message_id === id),
      { what: `the ${type} at the phone`, timeoutMs: 20_000 },
    );
    // The phone may have it before the `sent` write commits: the message is read once it has.
    const message = await waitFor(
      async () => (await gw.request('GET', `/messages/${id}`)).body.data,
      (m) => m.status !== 'pending',
      { what: `the ${type} no longer pending` },
    );
    return { answer: res.body.message, accepted: res.body.data, message, seen: inbox.find((e) => e.message_id === id) };
  }

  async function usedQuota(): Promise<number> {
    const list = (await gw.request('GET', '/devices')).body.data as any[];
    return list.find((d) => d.phone === device).quote_used;
  }

  /** Refused with `message`, an `errors` naming `path`, nothing stored and no quota used. */
  async function refused(type: string, params: unknown, message: string, path?: string) {
    const before = await usedQuota();
    const res = await send(type, params);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toBe(message);
    if (path !== undefined) expect(Object.keys(res.body.errors ?? {}), JSON.stringify(res.body)).toContain(path);
    expect(await usedQuota()).toBe(before);
    return res.body;
  }

  describe('sticker', () => {
    it('a WebP reaches the phone as a sticker', async () => {
      const { answer, accepted, seen } = await delivered('sticker', { sticker: { url: `${origin}/sticker.webp` } });
      expect(answer).toBe('Sticker sent successfully');
      expect(accepted).toMatchObject({ type: 'sticker', params: { sticker: { url: `${origin}/sticker.webp` } } });
      expect(seen).toMatchObject({ type: 'sticker', content: { mimetype: 'image/webp', size: WEBP.length } });
    });

    it('1 MB is taken; 1 MB and a byte is File too large', async () => {
      const { seen } = await delivered('sticker', { sticker: { url: `${origin}/exactly-1mb.webp` } });
      expect(seen.content.size).toBe(MiB);
      const body = await refused('sticker', { sticker: { url: `${origin}/over-1mb.webp` } }, 'File too large');
      expect(body.error).toBe('larger than 1 MB');
    });

    it('a PNG (whatever its name and Content-Type say) is Unsupported file format', async () => {
      const body = await refused('sticker', { sticker: { url: `${origin}/picture.webp` } }, 'Unsupported file format');
      expect(body.error).toBe('the sticker is not WebP');
    });

    it('a sticker without a URL is refused naming the field', async () => {
      await refused('sticker', { sticker: {} }, 'Validation failed', 'params.sticker.url');
    });
  });

  describe('contact', () => {
    const card = (i: number) => ({ name: `Person ${i}`, phone: `+62812000000${String(i).padStart(2, '0')}` });

    it('a card with its organization reaches the phone', async () => {
      const contacts = [{ name: 'Siti Rahma', phone: '6281298765432', organization: 'Toko Maju' }];
      const { answer, accepted, seen } = await delivered('contact', { contacts });
      expect(answer).toBe('Contact sent successfully');
      expect(accepted).toMatchObject({ type: 'contact', params: { contacts }, message: null });
      expect(seen).toMatchObject({ type: 'contact', content: { contacts } });
    });

    it('10 cards are taken; 11 are refused', async () => {
      const ten = Array.from({ length: 10 }, (_, i) => card(i));
      const { seen } = await delivered('contact', { contacts: ten });
      expect(seen.content.contacts).toEqual(ten);
      const body = await refused('contact', { contacts: [...ten, card(10)] }, 'Invalid contact parameters', 'contacts');
      expect(body.errors.contacts).toEqual(['must have at most 10 contacts']);
    });

    it('no card, a card without a name, a bad number: each named by its path', async () => {
      await refused('contact', { contacts: [] }, 'Invalid contact parameters', 'contacts');
      const body = await refused(
        'contact',
        { contacts: [{ phone: '6281298765432' }, { name: 'B', phone: 'call me' }] },
        'Invalid contact parameters',
      );
      expect(body.errors).toEqual({
        'contacts.0.name': ['is required'],
        'contacts.1.phone': ['must be a phone number in international format: country code first, digits only'],
      });
      await refused('contact', {}, 'Invalid contact parameters', 'contacts');
    });
  });

  describe('poll', () => {
    const options = (count: number) => Array.from({ length: count }, (_, i) => `Option ${i + 1}`);

    it('reaches the phone with its options; selectable_count defaults to 1', async () => {
      const { answer, accepted, seen } = await delivered('poll', { name: 'Lunch?', options: ['Rice', 'Noodles'] });
      expect(answer).toBe('Poll sent successfully');
      expect(accepted).toMatchObject({
        type: 'poll',
        message: 'Lunch?',
        params: { name: 'Lunch?', options: ['Rice', 'Noodles'], selectable_count: 1 },
      });
      expect(seen).toMatchObject({
        type: 'poll',
        content: { name: 'Lunch?', options: ['Rice', 'Noodles'], selectableCount: 1 },
      });
    });

    it('12 options are taken; 13 are refused; one is refused', async () => {
      const { seen } = await delivered('poll', { name: 'Month?', options: options(12), selectable_count: 12 });
      expect(seen.content).toMatchObject({ options: options(12), selectableCount: 12 });
      let body = await refused('poll', { name: 'Month?', options: options(13) }, 'Invalid poll parameters');
      expect(body.errors).toEqual({ options: ['must have at most 12 options'] });
      body = await refused('poll', { name: 'Month?', options: ['Only'] }, 'Invalid poll parameters');
      expect(body.errors).toEqual({ options: ['must have at least 2 options'] });
    });

    it('a repeated option is refused where it comes again', async () => {
      const body = await refused('poll', { name: 'Q', options: ['A', 'B', 'A'] }, 'Invalid poll parameters');
      expect(body.errors).toEqual({
        'options.2': ['must be different from every other option (the same as options.0)'],
      });
    });

    it('selectable_count 0 and more than the options are refused', async () => {
      let body = await refused(
        'poll',
        { name: 'Q', options: ['A', 'B'], selectable_count: 0 },
        'Invalid poll parameters',
      );
      expect(body.errors).toEqual({ selectable_count: ['must be an integer of at least 1'] });
      body = await refused('poll', { name: 'Q', options: ['A', 'B'], selectable_count: 3 }, 'Invalid poll parameters');
      expect(body.errors).toEqual({ selectable_count: ['must be at most the number of options (2)'] });
    });

    it('name and option lengths: 255 and 100 characters are taken, one more is refused', async () => {
      await delivered('poll', { name: 'n'.repeat(255), options: ['o'.repeat(100), 'B'] });
      const body = await refused(
        'poll',
        { name: 'n'.repeat(256), options: ['o'.repeat(101), ''] },
        'Invalid poll parameters',
      );
      expect(body.errors).toEqual({
        name: ['must be at most 255 characters'],
        'options.0': ['must be at most 100 characters'],
        'options.1': ['must not be empty'],
      });
    });
  });

  describe('voice note', () => {
    it('audio with ptt: true reaches the phone as a voice note', async () => {
      const { accepted, seen } = await delivered('audio', { audio: { url: `${origin}/note.ogg` }, ptt: true });
      expect(accepted.params).toMatchObject({ ptt: true });
      expect(seen).toMatchObject({ type: 'audio', content: { ptt: true, mimetype: 'audio/ogg' } });
    });
  });

  describe('link preview', () => {
    it('a chat with a link shows its title, description and image at the phone', async () => {
      const text = `See ${origin}/shop, we open at 7.`;
      const { seen, message } = await delivered('chat', { text });
      expect(message.status).not.toBe('failed');
      expect(seen.content).toEqual({
        text,
        preview: {
          url: `${origin}/shop`,
          title: 'Fresh bread & coffee',
          description: 'Open every day from 7',
          thumbnail: { mimetype: 'image/jpeg', size: JPEG.length, sha256: expect.any(String) },
        },
      });
    });

    it('link_preview: false sends none, and is echoed', async () => {
      const { seen, accepted } = await delivered('chat', { text: `See ${origin}/shop`, link_preview: false });
      expect(accepted.params).toEqual({ text: `See ${origin}/shop`, link_preview: false });
      expect(seen.content).toEqual({ text: `See ${origin}/shop` });
    });

    it('link_preview must be a boolean', async () => {
      await refused('chat', { text: 'hi', link_preview: 'no' }, 'Validation failed', 'params.link_preview');
    });

    it('a page that hangs, one of 5 MB, one not found: the message goes without a preview', async () => {
      for (const path of ['/hang', '/huge', '/missing']) {
        const text = `Look: ${origin}${path}`;
        const { seen, message } = await delivered('chat', { text });
        expect(seen.content, path).toEqual({ text });
        expect(['sent', 'delivered', 'read'], path).toContain(message.status);
      }
    }, 40_000);
  });

  describe('as a form', () => {
    it('a poll and a contact in PHP-style form fields are read as their schemas place them', async () => {
      const form = async (fields: Array<[string, string]>) => {
        const res = await gw.app.inject({
          method: 'POST',
          url: '/messages',
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams([['device', device], ['receiver', fresh(1)[0]!], ...fields]).toString(),
        });
        return { status: res.statusCode, body: JSON.parse(res.body) as any };
      };
      const poll = await form([
        ['type', 'poll'],
        ['params[name]', 'Lunch?'],
        ['params[options][]', 'Rice'],
        ['params[options][]', 'Noodles'],
        ['params[selectable_count]', '2'],
      ]);
      expect(poll.status, JSON.stringify(poll.body)).toBe(200);
      expect(poll.body.data.params).toEqual({ name: 'Lunch?', options: ['Rice', 'Noodles'], selectable_count: 2 });
      const contact = await form([
        ['type', 'contact'],
        ['params[contacts][0][name]', 'Ani'],
        ['params[contacts][0][phone]', '6281200000001'],
      ]);
      expect(contact.status, JSON.stringify(contact.body)).toBe(200);
      expect(contact.body.data.params).toEqual({ contacts: [{ name: 'Ani', phone: '6281200000001' }] });
    });
  });

  describe('group send', () => {
    it('a poll and a contact go to every member', async () => {
      const members = fresh(2);
      const group = await adminGroup(gw, device, 'Polls', members);
      const poll = await gw.request('POST', `/groups/${group.id}/send`, {
        type: 'poll',
        params: { name: 'Meet when?', options: ['Mon', 'Tue'] },
      });
      expect(poll.status, JSON.stringify(poll.body)).toBe(200);
      const contact = await gw.request('POST', `/groups/${group.id}/send`, {
        type: 'contact',
        params: { contacts: [{ name: 'Budi', phone: '6281311112222' }] },
      });
      expect(contact.status, JSON.stringify(contact.body)).toBe(200);
      const refusedPoll = await gw.request('POST', `/groups/${group.id}/send`, {
        type: 'poll',
        params: { name: 'Meet when?', options: ['Mon', 'Mon'] },
      });
      expect(refusedPoll.body.message).toBe('Invalid poll parameters');
      for (const member of members) {
        const inbox = await waitFor(
          async () => ((await gw.request('GET', `/sandbox/phones/${member}`)).body.data?.inbox ?? []) as any[],
          (entries) => entries.length >= 2,
          { what: `${member} got the poll and the contact` },
        );
        expect(inbox.find((e) => e.message_id === poll.body.data.id)).toMatchObject({
          group_id: group.network_id,
          content: { name: 'Meet when?', options: ['Mon', 'Tue'], selectableCount: 1 },
        });
        expect(inbox.find((e) => e.message_id === contact.body.data.id)).toMatchObject({
          content: { contacts: [{ name: 'Budi', phone: '6281311112222' }] },
        });
      }
    });
  });
});
