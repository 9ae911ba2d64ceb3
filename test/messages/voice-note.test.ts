// Issue 24, item 10: audio sent with `params.ptt: true` is a voice note: the field is accepted for audio,
// echoed in the message's params, carried through the seam and seen by the sandbox phone; on WhatsApp
// the library content carries `ptt`. Audio without it stays an audio file.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outgoingContent } from '../../src/network/whatsapp/content.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';
import { BytesSource } from '../network/helpers.js';

describe('a voice note on WhatsApp', () => {
  it('is audio with ptt; plain audio has none', () => {
    const media = new BytesSource(Buffer.from('OggS'));
    expect(outgoingContent({ type: 'audio', media, mimetype: 'audio/ogg; codecs=opus', ptt: true })).toMatchObject({
      ptt: true,
    });
    expect(outgoingContent({ type: 'audio', media, mimetype: 'audio/ogg' })).not.toHaveProperty('ptt');
  });
});

describe.skipIf(noStoreAvailable)('a voice note through the gateway', () => {
  let server: Server;
  let url: string;
  let gw: TestGateway;
  let device: string;

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/ogg' }).end(Buffer.from('OggS')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/note.ogg`;
    gw = await startGateway({ config: { sendIntervalMs: 0, allowPrivateUrls: true } });
    device = (await createPairedDevice(gw, '6281720000051')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function send(receiver: string, params: Record<string, unknown>) {
    const res = await gw.request('POST', '/messages', { device, receiver, type: 'audio', params });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const inbox = await waitFor(
      async () => ((await gw.request('GET', `/sandbox/phones/${receiver}`)).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((e) => e.message_id === res.body.data.id),
      { what: 'the audio at the phone', timeoutMs: 15_000 },
    );
    return { message: res.body.data, seen: inbox.find((e) => e.message_id === res.body.data.id).content };
  }

  it('ptt: true is echoed and reaches the phone as a voice note', async () => {
    const { message, seen } = await send('6281729995101', { audio: { url }, mimetype: 'audio/ogg', ptt: true });
    expect(message.params).toMatchObject({ ptt: true });
    expect(seen).toMatchObject({ ptt: true });
  });

  it('without ptt it is an audio file', async () => {
    const { message, seen } = await send('6281729995102', { audio: { url }, mimetype: 'audio/ogg' });
    expect(message.params).not.toHaveProperty('ptt');
    expect(seen).not.toHaveProperty('ptt');
  });

  it('ptt must be a boolean', async () => {
    const res = await gw.request('POST', '/messages', {
      device,
      receiver: '6281729995103',
      type: 'audio',
      params: { audio: { url }, ptt: 'yes' },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('ptt');
  });
});
