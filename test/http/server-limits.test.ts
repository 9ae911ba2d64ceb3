// Issue 10, item 10: requests Node's HTTP parser refuses are answered in the
// envelope, a request that stops part-way ends within a bounded time on any
// path, with or without a token, and stalled connections cannot starve
// normal requests. Raw TCP sockets against a real listening gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { listeningGateway, raw as rawExchange } from './raw-socket.js';

const REQUEST_TIMEOUT_MS = 1_500;
const HEADERS_TIMEOUT_MS = 1_000;
const MAX_CONNECTIONS = 24;
/** The longest a stalled request may live: its timeout, Node's check interval (1 s) and a loaded machine's margin. */
const ENDS_WITHIN_MS = REQUEST_TIMEOUT_MS + 1_000 + 4_000;

/** Writes `request` on a fresh connection and collects the answer until the server closes it (or `giveUpMs`). */
const raw = (port: number, request: string | Buffer, giveUpMs = ENDS_WITHIN_MS + 5_000) =>
  rawExchange(port, request, giveUpMs);

/** The status and parsed body of the last answer in a raw exchange. */
function lastAnswer(text: string): { status: number; body: any; head: string } {
  const starts = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)];
  const last = starts.at(-1);
  if (last === undefined) throw new Error(`no HTTP answer in ${JSON.stringify(text)}`);
  const answer = text.slice(last.index);
  const split = answer.indexOf('\r\n\r\n');
  return { status: Number(last[1]), head: answer.slice(0, split), body: JSON.parse(answer.slice(split + 4)) };
}

describe.skipIf(noStoreAvailable)('the HTTP edge: parser refusals, timeouts and the connection cap', () => {
  let gw: TestGateway;
  let port: number;

  beforeAll(async () => {
    ({ gw, port } = await listeningGateway({
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: 1_000,
      maxConnections: MAX_CONNECTIONS,
      // Every client here is 127.0.0.1: the per-address cap is test/http/held-connections.test.ts's.
      maxConnectionsPerAddress: MAX_CONNECTIONS,
    }));
  });
  afterAll(() => gw?.close());

  it('answers an unknown HTTP method in the envelope', async () => {
    const { text } = await raw(port, `FOO /devices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n\r\n`);
    const answer = lastAnswer(text);
    expect(answer.status).toBe(400);
    expect(answer.head).toMatch(/content-type: application\/json/i);
    expect(answer.body).toEqual({
      code: 400,
      status: 400,
      message: 'Bad request',
      error: expect.stringContaining('unknown HTTP method'),
    });
  });

  it('answers oversized headers with 431 in the envelope', async () => {
    const { text } = await raw(port, `GET /devices?x=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const answer = lastAnswer(text);
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({
      code: 431,
      status: 431,
      message: 'Request header fields too large',
      error: 'the request line and headers exceed 16 KiB',
    });
  });

  it('answers conflicting Content-Length and Transfer-Encoding with 400 in the envelope', async () => {
    const { text } = await raw(
      port,
      'POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    const answer = lastAnswer(text);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 400, status: 400, message: 'Bad request' });
    expect(answer.body.error).toMatch(/Content-Length|Transfer-Encoding|malformed/);
  });

  it('answers a malformed chunk with 400 in the envelope', async () => {
    const { text } = await raw(
      port,
      `POST /messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    const answer = lastAnswer(text);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Bad request',
      error: expect.stringContaining('chunk'),
    });
  });

  // The stalls below wait for the server's timeouts in real time (Node checks them every second): they run at once,
  // each on a connection of its own (well under the cap), so the file waits for one timeout instead of six.
  it.concurrent('ends headers that never finish with 408 in the envelope, in bounded time', async ({ expect }) => {
    const { text, endedAfterMs } = await raw(port, 'GET /devices HTTP/1.1\r\nHost: x\r\n');
    expect(lastAnswer(text)).toMatchObject({
      status: 408,
      body: { code: 408, status: 408, message: 'Request timeout', error: 'the request was not received in time' },
    });
    expect(endedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(endedAfterMs).toBeLessThan(ENDS_WITHIN_MS);
  });

  it.concurrent('ends a body that stops part-way with 408 (token, authenticated route)', async ({ expect }) => {
    const { text, endedAfterMs } = await raw(
      port,
      `POST /messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{}',
    );
    expect(lastAnswer(text)).toMatchObject({
      status: 408,
      body: { code: 408, status: 408, message: 'Request timeout' },
    });
    expect(endedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(endedAfterMs).toBeLessThan(ENDS_WITHIN_MS);
  });

  it.concurrent.for([
    ['no token', 'POST /messages', ''],
    ['unknown path', 'POST /no/such/route', `Authorization: Bearer ${TEST_TOKEN}\r\n`],
    ['public path', 'POST /healthz', ''],
    ['wrong token', 'PATCH /devices/1', 'Authorization: Bearer mgw_wrong_token_wrong_token_wrong_token_00\r\n'],
  ] as const)('ends a body that stops part-way in bounded time (%s)', async ([, line, auth], { expect }) => {
    const { text, endedAfterMs } = await raw(
      port,
      `${line} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{}`,
    );
    expect(endedAfterMs).toBeLessThan(ENDS_WITHIN_MS);
    // Whatever was answered before the body stalled (401, 404, 405), every answer is the envelope.
    if (text !== '')
      expect(lastAnswer(text).body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  });
});

// Stalled connections against the cap, on a gateway with a longer timeout, so what must happen "while they are held"
// has seconds of margin on a loaded machine.
describe.skipIf(noStoreAvailable)('the HTTP edge: stalled connections cannot starve normal requests', () => {
  const TIMEOUT_MS = 4_000;
  const CAP = 16;
  const BOUND_MS = TIMEOUT_MS + 1_000 + 4_000;
  let gw: TestGateway;
  let port: number;
  const stalledBody = (token: boolean) =>
    `POST /messages HTTP/1.1\r\nHost: x\r\n${token ? `Authorization: Bearer ${TEST_TOKEN}\r\n` : ''}` +
    'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{';
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const held = () => new Promise<number>((resolve) => gw.app.server.getConnections((_error, count) => resolve(count)));

  beforeAll(async () => {
    ({ gw, port } = await listeningGateway({
      requestTimeoutMs: TIMEOUT_MS,
      headersTimeoutMs: TIMEOUT_MS,
      keepAliveTimeoutMs: 1_000,
      maxConnections: CAP,
      maxConnectionsPerAddress: CAP,
    }));
  });
  afterAll(() => gw?.close());

  it('below the cap, stalled bodies do not hold up a normal request meanwhile', async () => {
    let endedStalled = 0;
    const stalled = Array.from({ length: CAP - 4 }, () =>
      raw(port, stalledBody(true), BOUND_MS + 5_000).then((exchange) => {
        endedStalled += 1;
        return exchange;
      }),
    );
    await waitFor(held, (count) => count >= CAP - 4, { what: 'the stalled connections to be held' });
    expect(lastAnswer((await raw(port, healthz)).text)).toMatchObject({
      status: 200,
      body: { code: 200, status: 200, message: 'OK' },
    });
    // Answered while every stalled request was still held open, not after they timed out.
    expect(endedStalled).toBe(0);
    for (const exchange of await Promise.all(stalled)) {
      expect(lastAnswer(exchange.text)).toMatchObject({
        status: 408,
        body: { code: 408, status: 408, message: 'Request timeout' },
      });
      expect(exchange.endedAfterMs).toBeLessThan(BOUND_MS);
    }
  });

  it('at the cap, more connections are closed at once, and the timeout frees the held ones for normal requests', async () => {
    const stalled = Array.from({ length: CAP }, () => raw(port, stalledBody(true), BOUND_MS + 5_000));
    await waitFor(held, (count) => count >= CAP, { what: 'the cap to be reached' });
    // Over the cap: closed without an answer, at once, with or without a token; nothing piles up.
    const over = await Promise.all(
      Array.from({ length: CAP }, (_, i) => raw(port, i % 2 === 0 ? stalledBody(false) : healthz, 5_000)),
    );
    for (const exchange of over) expect(exchange.text).toBe('');
    expect(await held()).toBeLessThanOrEqual(CAP);

    // Once the held ones time out, a normal request gets through.
    const healthy = await waitFor(
      async () => {
        try {
          return lastAnswer((await raw(port, healthz, 5_000)).text);
        } catch {
          return null;
        }
      },
      (answer) => answer?.status === 200,
      { timeoutMs: BOUND_MS + 5_000, intervalMs: 100, what: '/healthz after the stalled bodies time out' },
    );
    expect(healthy?.body).toEqual({ code: 200, status: 200, message: 'OK' });
    for (const exchange of await Promise.all(stalled)) {
      expect(lastAnswer(exchange.text).status).toBe(408);
      expect(exchange.endedAfterMs).toBeLessThan(BOUND_MS);
    }
    expect(gw.app.server.maxConnections).toBe(CAP);
  });
});
