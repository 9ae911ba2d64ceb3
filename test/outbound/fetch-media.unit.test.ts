// fetchMedia against real loopback HTTP servers: every failure reason, the size limit at its exact
// edge (with and without Content-Length), the deadline, redirects and the address guard on every
// hop. Servers listen on 127.0.0.1 and 127.0.0.2 only; names resolve through fakeLookup.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import type { FetchMediaOptions, MediaFetchFailure } from '../../src/outbound/index.js';
import {
  MediaFetchError,
  createGuardedDispatcher,
  fetchMedia,
  isPublicAddress,
  sniffImageType,
} from '../../src/outbound/index.js';
import type { TestServer } from './helpers.js';
import { closedPort, fakeLookup, fixture, loopbackOnly, onlyAddresses, startServer } from './helpers.js';

const MB16 = 16 * 1024 * 1024;
const big = Buffer.alloc(MB16 + 1, 0x61);

const IMAGES: Record<string, [string, string]> = {
  '/img.jpg': ['tiny.jpg', 'image/jpeg'],
  '/img.png': ['tiny.png', 'image/png'],
  '/img.gif': ['tiny.gif', 'image/gif'],
  '/img.webp': ['tiny.webp', 'image/webp'],
};

// Streams `size` bytes in 64 KiB writes, honouring backpressure, optionally without Content-Length.
function streamBody(res: http.ServerResponse, size: number, declareLength: boolean): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    ...(declareLength ? { 'content-length': String(size) } : {}),
  });
  let sent = 0;
  const pump = (): void => {
    while (sent < size) {
      const end = Math.min(size, sent + 65536);
      const ok = res.write(big.subarray(sent, end));
      sent = end;
      if (!ok) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

let endlessStopped: Promise<void> = Promise.resolve();

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname;
  const image = IMAGES[path];
  if (image) {
    res.writeHead(200, { 'content-type': image[1] });
    res.end(fixture(image[0]));
    return;
  }
  const hop = /^\/hop\/(\d+)$/.exec(path);
  if (hop) {
    const n = Number(hop[1]);
    if (n === 0) {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.end(fixture('tiny.jpg'));
    } else {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), {
        location: `/hop/${n - 1}${url.search}`,
      });
      res.end();
    }
    return;
  }
  switch (path) {
    case '/fake.png':
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end('this is plain text pretending to be a PNG');
      return;
    case '/missing':
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    case '/error':
      res.writeHead(500);
      res.end();
      return;
    case '/exact':
      streamBody(res, MB16, true);
      return;
    case '/over':
      streamBody(res, MB16 + 1, true);
      return;
    case '/exact-chunked':
      streamBody(res, MB16, false);
      return;
    case '/over-chunked':
      streamBody(res, MB16 + 1, false);
      return;
    case '/endless': {
      // No length, never ends: only the client's limit can stop this.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = big.subarray(0, 65536);
      let stopped = false;
      endlessStopped = new Promise((resolve) =>
        res.once('close', () => {
          stopped = true;
          resolve();
        }),
      );
      const pump = (): void => {
        while (!stopped && res.write(chunk));
        if (!stopped) res.once('drain', pump);
      };
      pump();
      return;
    }
    case '/no-headers':
      return; // never answers
    case '/stall-body':
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '1000' });
      res.write(fixture('tiny.png').subarray(0, 20));
      return; // never finishes
    case '/redirect':
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      res.end();
      return;
    case '/redirect-no-location':
      res.writeHead(302);
      res.end();
      return;
    case '/empty':
      res.writeHead(204);
      res.end();
      return;
    default:
      res.writeHead(404);
      res.end();
  }
}

let main: TestServer; // 127.0.0.1
let other: TestServer; // 127.0.0.2
let dispatcher: Agent; // allows 127.0.0.1 only
const agents: Agent[] = [];

function makeAgent(options: Parameters<typeof createGuardedDispatcher>[0]): Agent {
  const created = createGuardedDispatcher(options);
  agents.push(created);
  return created;
}

beforeAll(async () => {
  main = await startServer(handler, '127.0.0.1');
  other = await startServer(handler, '127.0.0.2');
  dispatcher = makeAgent({
    policy: onlyAddresses('127.0.0.1'),
    lookup: fakeLookup({ 'media.example.test': '127.0.0.1', 'other.example.test': '127.0.0.2' }),
  });
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await Promise.all([main.close(), other.close()]);
});

function fetchFrom(url: string, options: Partial<FetchMediaOptions> = {}) {
  return fetchMedia(url, { maxBytes: MB16, timeoutMs: 5000, dispatcher, ...options });
}

async function failure(promise: Promise<unknown>): Promise<MediaFetchError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(MediaFetchError);
    const failure = error as MediaFetchError;
    // The detail is meant for API clients: one short line, no stack, no addresses, no paths.
    expect(failure.detail).not.toMatch(/\n|\bat \S+:\d+|node_modules|127\.0\.0|file:/);
    expect(failure.message).toBe(failure.detail);
    return failure;
  }
  throw new Error('expected fetchMedia to fail');
}

function expectReason(error: MediaFetchError, reason: MediaFetchFailure, detail?: string | RegExp): void {
  expect(error.reason).toBe(reason);
  if (typeof detail === 'string') expect(error.detail).toBe(detail);
  else if (detail) expect(error.detail).toMatch(detail);
}

describe('fetchMedia: success', () => {
  it.each(Object.entries(IMAGES))('fetches %s and its bytes sniff as the real type', async (path, [name, type]) => {
    const result = await fetchFrom(main.url(path));
    expect(Buffer.from(result.bytes).equals(fixture(name))).toBe(true);
    expect(result.contentType).toBe(type);
    expect(result.finalUrl).toBe(main.url(path));
    expect(sniffImageType(result.bytes)).toBe(type);
  });

  it('hands back a fake image as fetched; sniffing it answers null whatever the Content-Type', async () => {
    const result = await fetchFrom(main.url('/fake.png'));
    expect(result.contentType).toBe('image/png');
    expect(sniffImageType(result.bytes)).toBeNull();
  });

  it('returns an exclusive copy of the bytes (not a view of a shared pool)', async () => {
    const result = await fetchFrom(main.url('/img.png'));
    expect(result.bytes.byteOffset).toBe(0);
    expect(result.bytes.buffer.byteLength).toBe(result.bytes.length);
  });

  it('accepts an empty 2xx answer', async () => {
    const result = await fetchFrom(main.url('/empty'));
    expect(result.bytes.length).toBe(0);
    expect(result.contentType).toBeNull();
  });

  it('resolves an allowed name', async () => {
    const result = await fetchFrom(`http://media.example.test:${main.port}/img.gif`);
    expect(sniffImageType(result.bytes)).toBe('image/gif');
  });
});

describe('fetchMedia: invalid_url', () => {
  it.each([
    ['ftp://127.0.0.1/img.png', 'URL is not an http or https URL'],
    ['file:///etc/passwd', 'URL is not an http or https URL'],
    ['data:image/png;base64,iVBORw0KGgo=', 'URL is not an http or https URL'],
    ['javascript:alert(1)', 'URL is not an http or https URL'],
    ['/relative/img.png', 'URL is not a valid absolute URL'],
    ['img.png', 'URL is not a valid absolute URL'],
    ['garbage', 'URL is not a valid absolute URL'],
    ['', 'URL is not a valid absolute URL'],
    ['http://', 'URL is not a valid absolute URL'],
    ['http://exa mple.test/', 'URL is not a valid absolute URL'],
    ['http://user:secret@127.0.0.1/img.png', 'URL must not contain credentials'],
    ['http://user@127.0.0.1/img.png', 'URL must not contain credentials'],
    ['https://:secret@127.0.0.1/img.png', 'URL must not contain credentials'],
  ])('%j', async (url, detail) => {
    expectReason(await failure(fetchFrom(url)), 'invalid_url', detail);
  });
});

describe('fetchMedia: size limit', () => {
  it('accepts a body of exactly maxBytes (16 MB, with Content-Length)', async () => {
    const result = await fetchFrom(main.url('/exact'));
    expect(result.bytes.length).toBe(MB16);
  });

  it('refuses maxBytes + 1 announced by Content-Length', async () => {
    expectReason(await failure(fetchFrom(main.url('/over'))), 'too_large', `larger than ${MB16} bytes`);
  });

  it('accepts exactly maxBytes streamed without Content-Length', async () => {
    const result = await fetchFrom(main.url('/exact-chunked'));
    expect(result.bytes.length).toBe(MB16);
  });

  it('refuses maxBytes + 1 streamed without Content-Length (detected while reading)', async () => {
    expectReason(await failure(fetchFrom(main.url('/over-chunked'))), 'too_large', `larger than ${MB16} bytes`);
  });

  it('stops reading an endless body at the limit and closes the connection', async () => {
    expectReason(await failure(fetchFrom(main.url('/endless'), { maxBytes: 1024 * 1024 })), 'too_large');
    await endlessStopped;
  });

  it('refuses a small image when the limit is smaller still', async () => {
    expectReason(await failure(fetchFrom(main.url('/img.jpg'), { maxBytes: 100 })), 'too_large');
  });
});

describe('fetchMedia: timeout, status and reachability', () => {
  it('times out when the headers never come', async () => {
    const started = Date.now();
    expectReason(await failure(fetchFrom(main.url('/no-headers'), { timeoutMs: 300 })), 'timeout', /300 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('times out when the body stalls', async () => {
    expectReason(await failure(fetchFrom(main.url('/stall-body'), { timeoutMs: 300 })), 'timeout', /300 ms/);
  });

  it('reports a 404 as http_status', async () => {
    const error = await failure(fetchFrom(main.url('/missing')));
    expectReason(error, 'http_status', 'server answered HTTP 404');
    expect(error.status).toBe(404);
  });

  it('reports a 500 as http_status', async () => {
    expectReason(await failure(fetchFrom(main.url('/error'))), 'http_status', 'server answered HTTP 500');
  });

  it('reports a refused connection as unreachable', async () => {
    const port = await closedPort();
    expectReason(await failure(fetchFrom(`http://127.0.0.1:${port}/img.png`)), 'unreachable', 'connection refused');
  });

  it('reports a DNS failure as unreachable', async () => {
    expectReason(await failure(fetchFrom('http://nowhere.example.test/img.png')), 'unreachable', 'host not found');
  });
});

describe('fetchMedia: redirects', () => {
  it('follows a chain of 3 redirects', async () => {
    const result = await fetchFrom(main.url('/hop/3'));
    expect(result.finalUrl).toBe(main.url('/hop/0'));
    expect(sniffImageType(result.bytes)).toBe('image/jpeg');
  });

  it.each([301, 303, 307, 308])('follows %i', async (status) => {
    const result = await fetchFrom(main.url(`/hop/1?status=${status}`));
    expect(result.finalUrl).toBe(main.url(`/hop/0?status=${status}`));
  });

  it('gives up after the 4th redirect as http_status', async () => {
    const error = await failure(fetchFrom(main.url('/hop/4')));
    expectReason(error, 'http_status', 'too many redirects (more than 3)');
    expect(error.status).toBe(302);
  });

  it('honours maxRedirects', async () => {
    expectReason(await failure(fetchFrom(main.url('/hop/1'), { maxRedirects: 0 })), 'http_status', /more than 0/);
    await expect(fetchFrom(main.url('/hop/5'), { maxRedirects: 5 })).resolves.toBeDefined();
  });

  it('treats a 3xx without Location as the final answer', async () => {
    expectReason(
      await failure(fetchFrom(main.url('/redirect-no-location'))),
      'http_status',
      'server answered HTTP 302',
    );
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const to = encodeURIComponent('ftp://127.0.0.1/img.png');
    expectReason(
      await failure(fetchFrom(main.url(`/redirect?to=${to}`))),
      'invalid_url',
      'redirect target is not an http or https URL',
    );
  });

  it('refuses a redirect whose Location is not a URL', async () => {
    const to = encodeURIComponent('http://[::1');
    expectReason(
      await failure(fetchFrom(main.url(`/redirect?to=${to}`))),
      'invalid_url',
      'redirect target is not a valid URL',
    );
  });

  it('refuses a redirect to a URL with credentials', async () => {
    const to = encodeURIComponent(`http://user:pw@127.0.0.1:${main.port}/img.png`);
    expectReason(
      await failure(fetchFrom(main.url(`/redirect?to=${to}`))),
      'invalid_url',
      'redirect target must not contain credentials',
    );
  });

  it('refuses a redirect to an address the policy does not allow, without connecting to it', async () => {
    const before = other.connections();
    const to = encodeURIComponent(other.url('/img.png'));
    expectReason(
      await failure(fetchFrom(main.url(`/redirect?to=${to}`))),
      'blocked_address',
      'redirect target address is not allowed',
    );
    expect(other.connections()).toBe(before);
  });

  it('refuses a redirect to a name that resolves to a refused address', async () => {
    const before = other.connections();
    const to = encodeURIComponent(`http://other.example.test:${other.port}/img.png`);
    expectReason(await failure(fetchFrom(main.url(`/redirect?to=${to}`))), 'blocked_address');
    expect(other.connections()).toBe(before);
  });

  it('follows the same cross-address redirect when the policy allows it', async () => {
    const to = encodeURIComponent(other.url('/img.png'));
    const result = await fetchFrom(main.url(`/redirect?to=${to}`), {
      dispatcher: makeAgent({ policy: loopbackOnly }),
    });
    expect(result.finalUrl).toBe(other.url('/img.png'));
  });
});

describe('fetchMedia: address guard', () => {
  it('refuses an IP literal the policy does not allow', async () => {
    const before = other.connections();
    expectReason(
      await failure(fetchFrom(other.url('/img.png'))),
      'blocked_address',
      'destination address is not allowed',
    );
    expect(other.connections()).toBe(before);
  });

  it('DNS rebinding: a name resolving to a refused address is blocked at connect time', async () => {
    const before = other.connections();
    const rebound = makeAgent({
      policy: onlyAddresses('127.0.0.1'),
      lookup: fakeLookup({ 'media.example.test': '127.0.0.2' }),
    });
    const error = await failure(fetchFrom(`http://media.example.test:${other.port}/img.png`, { dispatcher: rebound }));
    expectReason(error, 'blocked_address', 'destination address is not allowed');
    expect(other.connections()).toBe(before);
  });

  it('DNS rebinding: the same name resolving to an allowed address is fetched', async () => {
    const honest = makeAgent({
      policy: onlyAddresses('127.0.0.1'),
      lookup: fakeLookup({ 'media.example.test': '127.0.0.1' }),
    });
    const result = await fetchFrom(`http://media.example.test:${main.port}/img.png`, { dispatcher: honest });
    expect(sniffImageType(result.bytes)).toBe('image/png');
  });

  it('refuses loopback under the default public-only policy', async () => {
    const publicOnly = makeAgent({ policy: isPublicAddress, lookup: fakeLookup({ localhost: '127.0.0.1' }) });
    const before = main.connections();
    for (const url of [main.url('/img.png'), `http://localhost:${main.port}/img.png`, `http://[::1]:${main.port}/`]) {
      expectReason(await failure(fetchFrom(url, { dispatcher: publicOnly })), 'blocked_address');
    }
    expect(main.connections()).toBe(before);
  });
});

describe('MediaFetchError', () => {
  it('serialises without its cause', async () => {
    const port = await closedPort();
    const error = await failure(fetchFrom(`http://127.0.0.1:${port}/`));
    expect(error.cause).toBeDefined();
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'MediaFetchError',
      reason: 'unreachable',
      detail: 'connection refused',
    });
  });
});
