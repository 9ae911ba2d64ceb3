// docs/internals.md, Whatspie compatibility (issue 11): the send requests that real Whatspie clients and the hosted service's own
// docs make (research: whatspie-clients.md, sections 5 and 6), each sent exactly as that client
// sends it (content type, field layout, path), against media served by a real local HTTP server.
// Each must be accepted and reach the sandbox phone's inbox with the canonical content.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const TEXT = Buffer.from('name,amount\nTea,2\n');
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe.skipIf(noStoreAvailable)('requests of real Whatspie clients', () => {
  let server: Server;
  let media: string;
  let gw: TestGateway;
  let device: string;
  let receivers = 10;
  /** A fresh receiver per test, so each inbox holds one message (never a sandbox magic number, ending 0000-0004). */
  const receiver = () => `62819${String(++receivers).padStart(8, '0')}`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      // Every answer says octet-stream: the type must come from the bytes, never from the server.
      const serve = (body: Buffer, headers: Record<string, string> = {}) =>
        res.writeHead(200, { 'content-type': 'application/octet-stream', ...headers }).end(body);
      switch (req.url) {
        case '/photo.png':
          return serve(fixture('tiny.png'));
        case '/video.mp4':
          return serve(fixture('tiny.mp4'));
        case '/dummy.pdf':
          return serve(PDF);
        case '/report.docx':
          return serve(fixture('tiny.docx'));
        case '/files/7/':
          return serve(PDF, { 'content-disposition': `attachment; filename="Invoice 7.pdf"` });
        case '/files/8/':
          return serve(PDF, { 'content-disposition': `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf` });
        case '/named.pdf':
          return serve(PDF, { 'content-disposition': 'attachment; filename="not this one.pdf"' });
        case '/export/':
          return serve(TEXT);
        default:
          res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    media = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      build: { sandbox: { deliveryDelayMs: 1, readDelayMs: 1 } },
    });
    device = (await createPairedDevice(gw, '6281234567890')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const post = async (url: string, payload: string, contentType: string) => {
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, accept: 'application/json', 'content-type': contentType },
      payload,
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as any };
  };
  const postJson = (body: Record<string, unknown>, url = '/messages') =>
    post(url, JSON.stringify(body), 'application/json');

  /** The one entry of this message in the receiver's inbox, once delivered. */
  const received = async (to: string, id: string) => {
    const inbox = await waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${to}`)).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((entry) => entry.message_id === id),
      { what: `message ${id} in ${to}'s inbox` },
    );
    expect(inbox.filter((entry) => entry.message_id === id)).toHaveLength(1);
    return inbox.find((entry) => entry.message_id === id);
  };

  describe('form-encoded v1 callers (5.4, C6: five codebases)', () => {
    it.each([
      // CURLOPT_POSTFIELDS => 'receiver='.$phone.'&device=…&message=…&type=chat' and http_build_query($data)
      [
        'PHP curl / http_build_query',
        (to: string) => `receiver=${to}&device=${device}&message=Halo+%2Ates%2A+form&type=chat`,
      ],
      // Node `request.post(url, {form: {receiver, device, message, type: "chat"}})`: spaces as %20
      [
        'Node request form',
        (to: string) => `receiver=${to}&device=${device}&message=Halo%20%2Ates%2A%20form&type=chat`,
      ],
    ])('%s: accepted at /api/messages and delivered as a chat', async (_label, body) => {
      const to = receiver();
      const res = await post('/api/messages', body(to), 'application/x-www-form-urlencoded');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        code: 200,
        status: 200,
        message: 'Message sent successfully',
        data: { type: 'chat', receiver: to, message: 'Halo *tes* form', params: { text: 'Halo *tes* form' } },
      });
      expect(await received(to, res.body.data.id)).toMatchObject({
        from: device,
        type: 'chat',
        content: { text: 'Halo *tes* form' },
      });
    });

    it('PHP curl with an array body (multipart/form-data): accepted and delivered', async () => {
      const to = receiver();
      const boundary = '------------------------d74496d66958873e';
      const fields = { receiver: to, device, message: 'Halo *tes* multipart', type: 'chat' };
      const payload =
        Object.entries(fields)
          .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
          .join('') + `--${boundary}--\r\n`;
      const res = await post('/api/messages', payload, `multipart/form-data; boundary=${boundary}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await received(to, res.body.data.id)).toMatchObject({
        type: 'chat',
        content: { text: 'Halo *tes* multipart' },
      });
    });

    it('a form with PHP-nested params: image by URL, location, simulate_typing', async () => {
      const to = receiver();
      const image = await post(
        '/messages',
        `device=${device}&receiver=${to}&type=image&params%5Bimage%5D%5Burl%5D=${encodeURIComponent(`${media}/photo.png`)}` +
          '&params%5Bcaption%5D=Foto&params%5BviewOnce%5D=0&simulate_typing=1',
        'application/x-www-form-urlencoded',
      );
      expect(image.status, JSON.stringify(image.body)).toBe(200);
      expect(image.body.data).toMatchObject({ simulate_typing: 1, params: { caption: 'Foto', viewOnce: false } });
      expect(await received(to, image.body.data.id)).toMatchObject({
        type: 'image',
        content: { caption: 'Foto', mimetype: 'image/png', sha256: sha256(fixture('tiny.png')) },
      });
      const there = receiver();
      const location = await post(
        '/messages',
        `device=${device}&receiver=${there}&type=location&params[lat]=-6.2088&params[long]=106.8456&params[name]=Jakarta&params[address]=Indonesia`,
        'application/x-www-form-urlencoded',
      );
      expect(location.status, JSON.stringify(location.body)).toBe(200);
      expect(await received(there, location.body.data.id)).toMatchObject({
        type: 'location',
        content: { latitude: -6.2088, longitude: 106.8456, name: 'Jakarta', address: 'Indonesia' },
      });
    });
  });

  it('the "Official Whatspie client for PHP" (C5): no type, at /api/messages', async () => {
    const to = receiver();
    const text = 'Hi there this is from unit testing\n*This is Bold message*';
    const res = await postJson({ receiver: to, device, message: text }, '/api/messages');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await received(to, res.body.data.id)).toMatchObject({ type: 'chat', content: { text } });
  });

  it('the Home Assistant integration (C3): text in the top-level message, simulate_typing 1', async () => {
    const to = receiver();
    const res = await postJson({
      receiver: to,
      device,
      message: 'Test Notification -- HomeAssistant',
      type: 'chat',
      simulate_typing: 1,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await received(to, res.body.data.id)).toMatchObject({
      type: 'chat',
      content: { text: 'Test Notification -- HomeAssistant' },
    });
  });

  describe('legacy media fields: top-level file_url and message (C4, C7, the file docs)', () => {
    it.each([
      ['C7 image', 'image', 'photo.png', 'Foto paket', { mimetype: 'image/png' }],
      ['C4 image', 'image', 'photo.png', 'Caption', { mimetype: 'image/png' }],
      ['C4 file', 'file', 'dummy.pdf', 'Doc', { mimetype: 'application/pdf', fileName: 'dummy.pdf' }],
      [
        'the file docs',
        'file',
        'dummy.pdf',
        'API Documentation v2.1',
        { mimetype: 'application/pdf', fileName: 'dummy.pdf' },
      ],
    ])('%s: the URL fetched and the message as its caption', async (_label, type, name, caption, content) => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type,
        message: caption,
        file_url: `${media}/${name}`,
        simulate_typing: 1,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toMatchObject({ type, message: caption, file_url: `${media}/${name}` });
      expect(await received(to, res.body.data.id)).toMatchObject({ type, content: { caption, ...content } });
    });
  });

  describe('files without fileName or mimetype (C1 sendFile(url), C2 README, C10)', () => {
    it('C1 sendFile(url): named by the URL, typed by its bytes', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { document: { url: `${media}/dummy.pdf` } },
        simulate_typing: 0,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.params).toEqual({ document: { url: `${media}/dummy.pdf` }, fileName: 'dummy.pdf' });
      expect(await received(to, res.body.data.id)).toMatchObject({
        type: 'file',
        content: { fileName: 'dummy.pdf', mimetype: 'application/pdf', sha256: sha256(PDF) },
      });
    });

    it('C2 file(url, mime) with no fileName: the given type is kept', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { document: { url: `${media}/dummy.pdf` }, mimetype: 'application/pdf' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await received(to, res.body.data.id)).toMatchObject({
        content: { fileName: 'dummy.pdf', mimetype: 'application/pdf' },
      });
    });

    it('C10 mimeType (a field Whatspie does not know) is ignored; the type comes from the bytes', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { document: { url: `${media}/report.docx` }, fileName: 'report.docx', mimeType: 'text/plain' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await received(to, res.body.data.id)).toMatchObject({
        content: { fileName: 'report.docx', mimetype: DOCX_TYPE },
      });
    });

    it.each([
      ['/files/7/', 'Invoice 7.pdf', 'application/pdf'],
      ['/files/8/', 'résumé.pdf', 'application/pdf'],
      // The URL's own name comes first (it is what the client chose to send).
      ['/named.pdf', 'named.pdf', 'application/pdf'],
      // Neither names it: "file"; plain text has no signature, so its type is unknown.
      ['/export/', 'file', 'application/octet-stream'],
    ])('a URL %s: named %s', async (path, fileName, mimetype) => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { document: { url: `${media}${path}` } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.params).toEqual({ document: { url: `${media}${path}` }, fileName });
      expect((await gw.request('GET', `/messages/${res.body.data.id}`)).body.data.params.fileName).toBe(fileName);
      expect(await received(to, res.body.data.id)).toMatchObject({ type: 'file', content: { fileName, mimetype } });
    });
  });

  describe('video', () => {
    it('C1 sendVideo(): type "file" with params.document and fileName video.mp4 stays a file', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { document: { url: `${media}/video.mp4` }, caption: 'clip', fileName: 'video.mp4' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await received(to, res.body.data.id)).toMatchObject({
        type: 'file',
        content: { fileName: 'video.mp4', mimetype: 'video/mp4', caption: 'clip' },
      });
    });

    it('the video docs: type "file" with params.video is a video', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        receiver: to,
        type: 'file',
        params: { video: { url: `${media}/video.mp4` }, mimetype: 'video/mp4', caption: 'Product demo' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.type).toBe('video');
      expect(await received(to, res.body.data.id)).toMatchObject({
        type: 'video',
        content: { mimetype: 'video/mp4', caption: 'Product demo', sha256: sha256(fixture('tiny.mp4')) },
      });
    });

    it('C10 type "video" with params.video', async () => {
      const to = receiver();
      const res = await postJson({
        device,
        type: 'video',
        simulate_typing: 1,
        receiver: to,
        params: { video: { url: `${media}/video.mp4` }, caption: 'vid' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await received(to, res.body.data.id)).toMatchObject({ type: 'video', content: { caption: 'vid' } });
    });
  });

  it('C2 location(-6.2088, 106.8456)->name()->address() as params.lat/long', async () => {
    const to = receiver();
    const res = await postJson({
      device,
      receiver: to,
      type: 'location',
      params: { lat: -6.2088, long: 106.8456, name: 'Jakarta', address: 'Indonesia' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await received(to, res.body.data.id)).toMatchObject({
      type: 'location',
      content: { latitude: -6.2088, longitude: 106.8456, name: 'Jakarta', address: 'Indonesia' },
    });
  });
});
