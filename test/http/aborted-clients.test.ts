// Issue 22, item 2: a client that hangs up in the middle of sending its body is
// not a fault of the gateway, and surely not a store outage. 200 clients send
// half a `POST /messages` body and close: the log gets at most one debug line
// for each, never a warning or an error, and never words about the store.
// Raw TCP sockets against a real listening gateway, its log captured.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_TOKEN, noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const DEBUG = 20;
const CLIENTS = 200;

/** Sends the head and half the body of a request, then closes the connection (an RST: the client is gone). */
function hangUpMidBody(port: number, head: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.on('connect', () => {
      const half = body.slice(0, Math.floor(body.length / 2));
      socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${half}`, (error) => {
        if (error) reject(error);
        // Let the server read the head and the half body first, so it is mid-body when the client goes.
        else setTimeout(() => socket.resetAndDestroy(), 20);
      });
    });
  });
}

describe.skipIf(noStoreAvailable)('clients that hang up mid-request', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  async function start(): Promise<{ port: number; lines: LogLine[] }> {
    const lines: LogLine[] = [];
    gw = await startGateway({
      build: {
        logger: {
          level: 'debug',
          stream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
        },
      },
    });
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    return { port: (gw.app.server.address() as AddressInfo).port, lines };
  }

  /** The lines that speak of a request whose client went away: ours, Fastify's and Node's words. */
  const aboutAborts = (lines: LogLine[]) =>
    lines.filter((line) => /abort|closed the connection|hung up|went away/i.test(JSON.stringify(line)));

  it.each([
    [
      'JSON',
      'application/json',
      JSON.stringify({ device: '6281700002201', receiver: '6281700002202', message: 'x'.repeat(4000) }),
    ],
    [
      'a urlencoded form',
      'application/x-www-form-urlencoded',
      `device=6281700002201&receiver=6281700002202&message=${'x'.repeat(4000)}`,
    ],
  ])(
    '200 clients that send half a body (%s) and close: at most one debug line each, nothing about the store',
    async (_name, type, body) => {
      const { port, lines } = await start();
      const head = `POST /messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\nContent-Type: ${type}\r\n`;
      await Promise.all(Array.from({ length: CLIENTS }, () => hangUpMidBody(port, head, body)));
      // Every connection is closed on the gateway's side too, and the log has stopped growing: each hang-up has been
      // handled (one that came while its token was still being checked never reaches the body, and is not noted).
      await waitFor(
        () => new Promise<number>((resolve) => gw!.app.server.getConnections((_e, n) => resolve(n))),
        (count) => count === 0,
        { what: 'every connection closed' },
      );
      let seen = -1;
      let still = 0;
      await waitFor(
        () => lines.length,
        (count) => {
          still = count === seen ? still + 1 : 0;
          seen = count;
          return still >= 10;
        },
        { what: 'the log to settle', intervalMs: 50 },
      );
      const noted = aboutAborts(lines);
      // Most clients were cut off mid-body (the rest before their body was read): each of those is noted.
      expect(noted.length).toBeGreaterThan(0);
      expect(noted.length).toBeLessThanOrEqual(CLIENTS);
      for (const line of noted) expect(line.level, JSON.stringify(line)).toBe(DEBUG);
      // One line per hang-up in all: no request line claiming an answer nobody received.
      const ids = new Set(noted.map((line) => line.reqId));
      expect(ids.size).toBe(noted.length);
      expect(lines.filter((line) => ids.has(line.reqId))).toHaveLength(noted.length);
      // Nothing at warn or above, and nothing that sends an operator to the database.
      expect(lines.filter((line) => line.level > DEBUG * 1.5)).toEqual([]);
      expect(lines.filter((line) => /store|database|out of service/i.test(line.msg))).toEqual([]);

      // The gateway still answers.
      const answer = await gw!.request('GET', '/healthz', undefined, null);
      expect(answer.status).toBe(200);
    },
  );
});
