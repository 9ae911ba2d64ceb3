// Issue 10, item 18, the send side: a message's media goes to the network as
// a source the network reads from the store chunk by chunk while it sends,
// never as a whole file. The network here is the in-process sandbox behind a
// recording wrapper that reads the source first, the way a real connector
// would, and then hands the message on.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Network, NetworkConnection, OutgoingNetworkMessage } from '../../src/network/network.js';
import { createSandboxNetwork } from '../../src/network/sandbox/index.js';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const MiB = 1024 * 1024;
const pdf = Buffer.alloc(5.5 * MiB);
pdf.write('%PDF-1.7\n', 0, 'latin1');
for (let i = 9; i < pdf.length; i++) pdf[i] = (i * 13 + (i >> 10)) & 0xff;

interface Read {
  /** The seam's media object's own fields: a size and a way to read, no bytes. */
  readonly fields: string[];
  readonly size: number;
  readonly chunkSizes: number[];
  readonly bytes: Buffer;
}

/** The sandbox, with every media send read through first (the hook runs after the first chunk). */
function recordingNetwork(reads: Read[], afterFirstChunk: { run: () => Promise<void> }): Network {
  const inner = createSandboxNetwork({ deliveryDelayMs: 1 });
  const send = async (conn: NetworkConnection, message: OutgoingNetworkMessage) => {
    const { content } = message;
    if ('media' in content) {
      const chunks: Buffer[] = [];
      for await (const chunk of content.media.open()) {
        chunks.push(Buffer.from(chunk));
        if (chunks.length === 1) await afterFirstChunk.run();
      }
      reads.push({
        fields: Object.keys(content.media).sort(),
        size: content.media.size,
        chunkSizes: chunks.map((c) => c.length),
        bytes: Buffer.concat(chunks),
      });
    }
    // The sandbox reads the media again: a source can be opened more than once.
    return conn.sendMessage(message);
  };
  return {
    description: inner.description,
    sandbox: inner.sandbox,
    close: () => inner.close(),
    connect: (options, onEvent) => {
      const conn = inner.connect(options, onEvent);
      return new Proxy(conn, {
        get: (target, prop) => {
          if (prop === 'sendMessage') return (message: OutgoingNetworkMessage) => send(target, message);
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

describe.skipIf(noStoreAvailable)('media sent from the store chunk by chunk', () => {
  let server: Server;
  let url: string;
  let gw: TestGateway;
  let device: string;
  const reads: Read[] = [];
  const afterFirstChunk = { run: async () => undefined };

  beforeAll(async () => {
    server = createServer((req, res) =>
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(req.url === '/empty' ? Buffer.alloc(0) : pdf),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/doc.pdf`;
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      build: { network: recordingNetwork(reads, afterFirstChunk), dispatch: { retryBaseMs: 50, retryMaxMs: 100 } },
    });
    device = (await createPairedDevice(gw, '6281720000001')).phone;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });
  beforeEach(() => {
    reads.length = 0;
    afterFirstChunk.run = async () => undefined;
  });

  const sendFile = async (receiver: string, from = url) => {
    const res = await gw.request('POST', '/messages', {
      device,
      receiver,
      type: 'file',
      params: { document: { url: from }, fileName: 'doc.pdf' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id as string;
  };
  const statusOf = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data;

  it('reads each chunk from the store when the network asks for it, never the whole file before', async () => {
    // While the network holds the first chunk, the last one changes in the store: a send path that had read
    // the whole file up front would hand over the old bytes.
    const changed = Buffer.from(pdf);
    changed.fill(0x41, 5 * MiB);
    afterFirstChunk.run = async () => {
      await gw.app.store.db
        .updateTable('media_chunks')
        .set({ bytes: new Uint8Array(changed.subarray(5 * MiB)) })
        .where('seq', '=', 5)
        .execute();
    };
    const receiver = '6281729991111';
    const id = await sendFile(receiver);
    await waitFor(
      () => statusOf(id),
      (m) => m.status === 'sent' || m.status === 'delivered',
      { what: 'sent', timeoutMs: 15_000 },
    );
    expect(reads).toHaveLength(1);
    const [read] = reads;
    expect(read!.fields).toEqual(['open', 'size']);
    expect(read!.size).toBe(pdf.length);
    expect(read!.chunkSizes).toEqual([MiB, MiB, MiB, MiB, MiB, MiB / 2]);
    expect(read!.bytes.equals(changed)).toBe(true);
    // The phone got what the store held when it was read (the sandbox read the source again).
    const inbox = await waitFor(
      async () => (await gw.request('GET', `/sandbox/phones/${receiver}`)).body.data.inbox as any[],
      (entries) => entries.some((e) => e.message_id === id),
      { what: 'the file at the phone', timeoutMs: 15_000 },
    );
    expect(inbox.find((e) => e.message_id === id)?.content).toMatchObject({
      size: pdf.length,
      sha256: createHash('sha256').update(changed).digest('hex'),
    });
  });

  it('a send whose media vanishes while it is read fails the attempt; the message then fails, nothing crashes', async () => {
    afterFirstChunk.run = async () => {
      await gw.app.store.db.deleteFrom('media_chunks').execute();
    };
    const id = await sendFile('6281729992222');
    const ended = await waitFor(
      () => statusOf(id),
      (m) => m.status !== 'pending',
      { what: 'the message to end', timeoutMs: 15_000 },
    );
    expect(ended).toMatchObject({ status: 'failed', failed_reason: 'the media of this message is missing' });
    expect(reads).toHaveLength(0);
    // The gateway still sends: the next file goes out whole.
    afterFirstChunk.run = async () => undefined;
    const next = await sendFile('6281729993333');
    await waitFor(
      () => statusOf(next),
      (m) => m.status === 'sent' || m.status === 'delivered',
      { what: 'the next file sent', timeoutMs: 15_000 },
    );
    expect(reads.at(-1)?.bytes.equals(pdf)).toBe(true);
  });

  it('an empty file is sent as one, not taken for media gone missing', async () => {
    const id = await sendFile('6281729994444', url.replace('/doc.pdf', '/empty'));
    const ended = await waitFor(
      () => statusOf(id),
      (m) => m.status !== 'pending',
      { what: 'the message to end', timeoutMs: 15_000 },
    );
    expect(ended.status).not.toBe('failed');
    expect(reads.at(-1)).toMatchObject({ size: 0, bytes: Buffer.alloc(0) });
  });
});
