// A real media server on 127.0.0.1 for incoming-media tests: each path answers as its handler says (whole bytes,
// a status, half the bytes then a stall, or held until released), and counts the requests it got.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type MediaAnswer =
  | { readonly bytes: Buffer; readonly type?: string }
  | { readonly status: number }
  /** Sends the first `sent` bytes of `bytes`, then nothing more until the connection is closed. */
  | { readonly stallAfter: number; readonly bytes: Buffer }
  /** Waits for `release()` of this path, then sends `bytes`. */
  | { readonly held: true; readonly bytes: Buffer };

export interface MediaServer {
  readonly base: string;
  readonly hits: Map<string, number>;
  answer(path: string, answer: MediaAnswer): string;
  release(path: string): void;
  close(): Promise<void>;
}

export async function startMediaServer(): Promise<MediaServer> {
  const answers = new Map<string, MediaAnswer>();
  const hits = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    open.add(res);
    res.on('close', () => open.delete(res));
    const answer = answers.get(path);
    if (answer === undefined) return void res.writeHead(404).end();
    if ('status' in answer) return void res.writeHead(answer.status).end('no');
    const head = { 'content-type': 'application/octet-stream', 'content-length': answer.bytes.length };
    if ('stallAfter' in answer) {
      res.writeHead(200, head);
      res.write(answer.bytes.subarray(0, answer.stallAfter));
      return;
    }
    if ('held' in answer) {
      const list = waiting.get(path) ?? [];
      list.push(() => res.writeHead(200, head).end(answer.bytes));
      waiting.set(path, list);
      return;
    }
    res.writeHead(200, head).end(answer.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    answer(path, answer) {
      answers.set(path, answer);
      return `${base}${path}`;
    },
    release(path) {
      for (const send of waiting.get(path) ?? []) send();
      waiting.delete(path);
    },
    async close() {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
