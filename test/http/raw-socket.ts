// Raw TCP against a real listening gateway, for the tests of the HTTP edge (test/http/server-limits.test.ts,
// held-connections.test.ts): a gateway listening on 127.0.0.1 with the HTTP settings a test gives, and one request
// written on a fresh connection whose whole answer is read until the server closes it. Not a test file itself.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { HttpLimits } from '../../src/config.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

export interface RawExchange {
  /** Everything the server wrote before it closed the connection. */
  text: string;
  /** Milliseconds from connecting to the connection's end. */
  endedAfterMs: number;
}

/**
 * Writes `request` on a fresh connection (from `localAddress` when given) and collects the answer until the server
 * closes it; rejects when the connection is still open after `giveUpMs`.
 */
export function raw(
  port: number,
  request: string | Buffer,
  giveUpMs: number,
  localAddress?: string,
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port, ...(localAddress === undefined ? {} : { localAddress }) });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after ${giveUpMs} ms; got: ${JSON.stringify(text)}`));
    }, giveUpMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, endedAfterMs: Date.now() - started });
    });
    socket.on('connect', () => socket.write(request));
  });
}

/** A gateway with these HTTP settings, listening on 127.0.0.1 on a free port. */
export async function listeningGateway(http: HttpLimits): Promise<{ gw: TestGateway; port: number }> {
  const gw = await startGateway({ config: { http } });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  return { gw, port: (gw.app.server.address() as AddressInfo).port };
}
