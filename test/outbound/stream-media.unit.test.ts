// streamMedia: the body goes to the sink as it arrives (never held whole), the
// limit holds at its edge, the sink's own failure comes back as it was (not as
// a download problem), and time the sink spends writing does not count against
// the download's deadline.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { HEAD_BYTES, MediaFetchError, createGuardedDispatcher, streamMedia } from '../../src/outbound/index.js';
import { loopbackOnly, startServer, type TestServer } from './helpers.js';

const body = Buffer.alloc(3 * 1024 * 1024 + 17);
for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 10)) & 0xff;

describe('streamMedia', () => {
  let server: TestServer;
  let agent: Agent;
  beforeAll(async () => {
    server = await startServer((_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(body);
    });
    agent = createGuardedDispatcher({ policy: loopbackOnly });
  });
  afterAll(async () => {
    await agent?.close();
    await server?.close();
  });

  it('hands every byte to the sink in order, and keeps only the head', async () => {
    const received: Buffer[] = [];
    const result = await streamMedia(
      server.url('/f'),
      { maxBytes: body.length, dispatcher: agent },
      { write: async (chunk) => void received.push(Buffer.from(chunk)) },
    );
    expect(Buffer.concat(received).equals(body)).toBe(true);
    expect(received.length).toBeGreaterThan(1);
    expect(result).toMatchObject({ size: body.length, contentType: 'application/pdf', finalUrl: server.url('/f') });
    expect(Buffer.from(result.head).equals(body.subarray(0, HEAD_BYTES))).toBe(true);
  });

  it('refuses one byte over the limit', async () => {
    const error = await streamMedia(
      server.url('/f'),
      { maxBytes: body.length - 1, dispatcher: agent },
      {
        write: async () => undefined,
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaFetchError);
    expect((error as MediaFetchError).reason).toBe('too_large');
  });

  it('passes the sink’s own failure through unchanged', async () => {
    const full = Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' });
    const error = await streamMedia(
      server.url('/f'),
      { maxBytes: body.length, dispatcher: agent },
      {
        write: async () => {
          throw full;
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toBe(full);
  });

  it('does not count the sink’s writing time against the deadline', async () => {
    let writes = 0;
    const result = await streamMedia(
      server.url('/f'),
      { maxBytes: body.length, dispatcher: agent, timeoutMs: 300 },
      {
        // Every write is slow: together far past the 300 ms deadline, while the server itself answers at once.
        write: () => new Promise((resolve) => setTimeout(resolve, ++writes <= 8 ? 60 : 0)),
      },
    );
    expect(writes).toBeGreaterThan(8);
    expect(result.size).toBe(body.length);
  });
});
