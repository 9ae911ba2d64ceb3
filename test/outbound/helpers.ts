// Test scaffolding for the outbound guard: loopback-only HTTP servers, a fake resolver and the
// media fixtures. It must never let a test reach anything outside 127.0.0.0/8: every name a test
// uses is answered by fakeLookup, which knows no real names.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AddressPolicy } from '../../src/outbound/index.js';

export interface TestServer {
  port: number;
  host: string;
  /** Absolute URL on this server. */
  url(path: string): string;
  /** TCP connections accepted so far (a blocked fetch must leave this at 0). */
  connections(): number;
  /** Requests that reached the handler so far. */
  requests(): number;
  close(): Promise<void>;
}

export async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  host = '127.0.0.1',
): Promise<TestServer> {
  let connections = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    handler(req, res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    host,
    url: (path) => `http://${host}:${port}${path}`,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (test/helpers/ports.ts). */
export { closedPort } from '../helpers/ports.js';

type Answer = string | string[] | (() => string | string[]);

/** Resolves only the names in `table` (to loopback addresses); anything else is ENOTFOUND. */
export function fakeLookup(table: Record<string, Answer>): LookupFunction {
  return (hostname, options, callback) => {
    const entry = table[hostname];
    const answer = typeof entry === 'function' ? entry() : entry;
    setImmediate(() => {
      if (answer === undefined) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
        return;
      }
      const addresses: LookupAddress[] = (Array.isArray(answer) ? answer : [answer]).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]?.address ?? '', addresses[0]?.family);
    });
  };
}

/** A policy accepting exactly the given addresses (IPv4-mapped spellings included). */
export function onlyAddresses(...allowed: string[]): AddressPolicy {
  return (ip) => allowed.includes(ipaddr.process(ip).toString());
}

/** A policy accepting all of 127.0.0.0/8. */
export const loopbackOnly: AddressPolicy = (ip) => {
  const address = ipaddr.process(ip);
  return address.kind() === 'ipv4' && address.range() === 'loopback';
};

export function fixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
}
