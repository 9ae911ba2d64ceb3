// Issue 22, item 8: one client holding many half-sent requests must not take
// every connection the gateway has. The attacker, on its own loopback address
// (127.0.0.2), keeps as many connections open as the gateway's whole cap, each
// a request sent in part (headers, or headers and part of a body, no token),
// and opens a new one the moment one is closed. Meanwhile health checks from
// 127.0.0.1 must each be answered. Raw TCP sockets against a real listening
// gateway.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import { listeningGateway, raw } from './raw-socket.js';

const MAX_CONNECTIONS = 24;
const PER_ADDRESS = 8;
/** Short timeouts, so held requests end and are re-opened many times while the health checks run. */
const TIMEOUT_MS = 1_000;
const CHECKS = 20;

const HALF_SENT = [
  // Headers that never end.
  'GET /devices HTTP/1.1\r\nHost: x\r\n',
  // A body that never ends.
  'POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"dev',
];

/** Keeps `count` half-sent requests open from `localAddress`, opening another whenever one closes. */
function attacker(port: number, localAddress: string, count: number) {
  const sockets = new Set<Socket>();
  let running = true;
  let opened = 0;
  const open = (slot: number) => {
    if (!running) return;
    opened += 1;
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write(HALF_SENT[slot % HALF_SENT.length]!));
    socket.on('close', () => {
      sockets.delete(socket);
      // At once, as the hostile client did (setImmediate only so the close finishes first).
      setImmediate(() => open(slot));
    });
  };
  for (let slot = 0; slot < count; slot++) open(slot);
  return {
    opened: () => opened,
    async stop() {
      running = false;
      const closing = [...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      for (const socket of sockets) socket.destroy();
      await Promise.all(closing);
    },
  };
}

/** One health check on a fresh connection from 127.0.0.1: the status line, or '' when closed unanswered. */
async function healthCheck(port: number): Promise<string> {
  const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const { text } = await raw(port, request, 10_000, '127.0.0.1');
  return text.split('\r\n')[0] ?? '';
}

describe.skipIf(noStoreAvailable)('one client holding many half-sent requests', () => {
  let gw: TestGateway;
  let port: number;
  const held = () => new Promise<number>((resolve) => gw.app.server.getConnections((_error, count) => resolve(count)));

  beforeAll(async () => {
    ({ gw, port } = await listeningGateway({
      requestTimeoutMs: TIMEOUT_MS,
      headersTimeoutMs: TIMEOUT_MS,
      keepAliveTimeoutMs: TIMEOUT_MS,
      maxConnections: MAX_CONNECTIONS,
      maxConnectionsPerAddress: PER_ADDRESS,
    }));
  });
  afterAll(() => gw?.close());

  it('answers every health check from another address while the attacker re-opens every slot it can', async () => {
    const attack = attacker(port, '127.0.0.2', MAX_CONNECTIONS);
    try {
      await waitFor(held, (count) => count >= PER_ADDRESS, { what: 'the attacker to hold its connections' });
      const answers: string[] = [];
      // Spread over several timeout periods: held requests end (408) and are re-opened meanwhile.
      for (let i = 0; i < CHECKS; i++) {
        answers.push(await healthCheck(port));
        await new Promise((resolve) => setTimeout(resolve, (3 * TIMEOUT_MS) / CHECKS));
      }
      expect(answers).toEqual(Array.from({ length: CHECKS }, () => 'HTTP/1.1 200 OK'));
      // The attacker kept trying all along (its held requests ended and were re-opened, its extra ones refused).
      expect(attack.opened()).toBeGreaterThan(MAX_CONNECTIONS);
    } finally {
      await attack.stop();
    }
  });

  it('still lets one address use its whole share', async () => {
    const attack = attacker(port, '127.0.0.3', PER_ADDRESS);
    try {
      await waitFor(held, (count) => count >= PER_ADDRESS, { what: 'one address holding its whole share' });
    } finally {
      await attack.stop();
    }
  });
});
