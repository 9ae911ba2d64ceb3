// Ports on 127.0.0.1 that a test chooses itself: one where nothing listens
// (for what a refused connection does) and one for a server of the test's own
// (a NATS server, a PostgreSQL cluster) that it starts and stops. A port bound
// with port 0 and released is neither: the kernel hands the same port to the
// next listen(0) of any test running beside it, so a connection meant to be
// refused reached that test's server (seen as "Connection terminated
// unexpectedly" instead of ECONNREFUSED), and a server of our own could find
// its port taken. The ports here lie below the kernel's ephemeral range, which
// listen(0) never uses, and each is checked before it is given out.
import { connect, createServer } from 'node:net';
import { readFileSync } from 'node:fs';

/** Ports listen(0) never hands out: below the ephemeral range (Linux default 32768–60999). */
function belowEphemeralRange(): { from: number; to: number } {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: the IANA range starts at 49152, and 20000–29999 lies below both.
  }
  return { from: 20_000, to: Math.min(29_999, low - 1) };
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function pick(check: (port: number) => Promise<boolean>, what: string): Promise<number> {
  const { from, to } = belowEphemeralRange();
  for (let tries = 0; tries < 50; tries++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await check(port)) return port;
  }
  throw new Error(`no port in ${from}–${to} on 127.0.0.1 ${what}`);
}

/** A port where nothing listens: a connection to it is refused. */
export function closedPort(): Promise<number> {
  return pick(refuses, 'refuses connections');
}

/**
 * A port for a server the test starts itself. Only another test choosing the same one of 10,000 at the same
 * moment could take it first.
 */
export function portForOwnServer(): Promise<number> {
  return pick(bindable, 'can be bound');
}
