// Incoming WhatsApp media whose copy on the media host expired (src/network/whatsapp/connection-media.ts): the
// connector asks the sender's phone to upload it again over the device's socket (the library's
// `updateMediaMessage`, here the fake socket's, which writes the new path into the message as the library does) and
// downloads the new copy. The media host is a scripted download (the library's own needs WhatsApp's HTTPS host).
// What each answer means: the phone's new copy → its bytes; the phone no longer has it → permanent; no answer, not
// connected, a host failing otherwise → transient (the gateway's retries try again); no message key kept → permanent
// without asking.
import { describe, expect, it } from 'vitest';
import { NetworkMediaError, NetworkUnavailableError } from '../../../src/network/network.js';
import type { ConnectionContext } from '../../../src/network/whatsapp/connection-context.js';
import { ConnectionMedia } from '../../../src/network/whatsapp/connection-media.js';
import { incomingMediaOf, type MediaFetch, type Reference } from '../../../src/network/whatsapp/media-download.js';
import { FakeSocket } from './fake-socket.js';

const mediaKey = Buffer.alloc(32, 7);
const KEY = { remoteJid: '15550000002@s.whatsapp.net', id: '3EB0AAAABBBBCCCC', fromMe: false };
const media = incomingMediaOf('image', { directPath: '/v/old.enc', mediaKey }, KEY)!;
const BYTES = Buffer.from('the photo, decrypted');

const hostError = (status: number) =>
  Object.assign(new Error(`Failed to fetch stream (${status})`), { output: { statusCode: status } });

/** The media host: the old path is gone (404), a path the phone uploaded to serves the bytes. */
function host(oldStatus = 404, newStatus?: number) {
  const asked: Reference[] = [];
  const fetch: MediaFetch = async (reference) => {
    asked.push(reference);
    if (reference.directPath === '/v/old.enc') throw hostError(oldStatus);
    if (newStatus !== undefined) throw hostError(newStatus);
    return (async function* () {
      yield BYTES;
    })();
  };
  return { fetch, asked };
}

function connection(socket: FakeSocket | null): ConnectionContext {
  return {
    open: () => {
      if (socket === null) throw new NetworkUnavailableError();
      return socket;
    },
  } as unknown as ConnectionContext;
}

const socketFor = () => new FakeSocket({} as never);

async function read(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NetworkMediaError);
  return error as NetworkMediaError;
};

describe('media re-upload when the media host’s copy expired', () => {
  it('asks the phone with the message key and media key, then downloads the new copy', async () => {
    const socket = socketFor();
    socket.onMediaRetry = async () => ({ directPath: '/v/new.enc' });
    const { fetch, asked } = host(410);
    const bytes = await read(await new ConnectionMedia(connection(socket), 1000, fetch).download(media));
    expect(bytes.equals(BYTES)).toBe(true);
    const [request] = socket.calls.filter((c) => c.method === 'updateMediaMessage');
    const asked0 = request!.args[0] as { key: unknown; message: { imageMessage: Record<string, unknown> } };
    expect(asked0.key).toEqual(KEY);
    expect(asked0.message.imageMessage.directPath).toBe('/v/old.enc');
    expect(Buffer.from(asked0.message.imageMessage.mediaKey as Uint8Array).equals(mediaKey)).toBe(true);
    expect(asked.map((r) => r.directPath)).toEqual(['/v/old.enc', '/v/new.enc']);
    expect(asked[1]).toMatchObject({ type: 'image', mediaKey: mediaKey.toString('base64'), key: KEY });
  });

  it('a copy still there is downloaded without asking; a host failing otherwise is transient, not asked', async () => {
    const socket = socketFor();
    const plain = incomingMediaOf('image', { directPath: '/v/here.enc', mediaKey }, KEY)!;
    expect(
      (await read(await new ConnectionMedia(connection(socket), 1000, host().fetch).download(plain))).equals(BYTES),
    ).toBe(true);
    const busy = await failure(new ConnectionMedia(connection(socket), 1000, host(503).fetch).download(media));
    expect(busy.kind).toBe('transient');
    expect(socket.calls.some((c) => c.method === 'updateMediaMessage')).toBe(false);
  });

  it('the phone no longer has it: permanent; the new copy gone too: permanent', async () => {
    const socket = socketFor();
    socket.onMediaRetry = async () =>
      Object.assign(new Error('Media re-upload failed by device (NOT_FOUND)'), { output: { statusCode: 404 } });
    expect((await failure(new ConnectionMedia(connection(socket), 1000, host().fetch).download(media))).kind).toBe(
      'permanent',
    );
    socket.onMediaRetry = async () => ({ directPath: '/v/new.enc' });
    const again = await failure(new ConnectionMedia(connection(socket), 1000, host(404, 404).fetch).download(media));
    expect(again.kind).toBe('permanent');
    expect(again.message).toMatch(/after the phone uploaded it again/);
  });

  it('no answer in time, or the device not connected: transient (tried again later)', async () => {
    const silent = socketFor();
    const unanswered = await failure(new ConnectionMedia(connection(silent), 50, host().fetch).download(media));
    expect(unanswered.kind).toBe('transient');
    expect(unanswered.message).toMatch(/did not answer/);
    const offline = await failure(new ConnectionMedia(connection(null), 50, host().fetch).download(media));
    expect(offline.kind).toBe('transient');
  });

  it('media kept before re-uploads were asked for (no message key) is gone for good when the host lost it', async () => {
    const socket = socketFor();
    const old = incomingMediaOf('image', { directPath: '/v/old.enc', mediaKey })!;
    expect((await failure(new ConnectionMedia(connection(socket), 1000, host().fetch).download(old))).kind).toBe(
      'permanent',
    );
    expect(socket.calls).toEqual([]);
  });
});
