// Issue 22, item 6 (DECISIONS 13): media of a queued message is kept in the
// chunk store (src/media/) in chunks of at most CHUNK_BYTES, read back chunk
// by chunk when it is sent, deleted as soon as its message ends (sent or
// failed), counted on /metrics, and on SQLite the file space it leaves is
// reused by the next media and can be given back to the file system.
//
// The file (tens of MiB) is generated on the fly by a local HTTP server; the
// device's queue is held by a send interval of an hour behind a first text,
// so the file stays queued while its rows are looked at.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, mediaSource } from '../../src/media/index.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';
import { createPairedDevice } from '../helpers/pairing.js';
import { waitFor } from '../helpers/wait.js';

const MiB = 1024 * 1024;
/** Tens of MiB, not a whole number of chunks: the last chunk is partial. */
const FILE_BYTES = 24 * MiB + 12_345;
const HOUR_MS = 3_600_000;

/** Block `i` of the served file: a PDF header first, then bytes that differ from block to block. */
function block(i: number): Buffer {
  const bytes = Buffer.alloc(Math.min(64 * 1024, FILE_BYTES - i * 64 * 1024));
  for (let at = 0; at < bytes.length; at++) bytes[at] = (at * 7 + i * 13 + (at >> 9)) & 0xff;
  if (i === 0) bytes.write('%PDF-1.7\n', 0, 'latin1');
  return bytes;
}
const BLOCKS = Math.ceil(FILE_BYTES / (64 * 1024));
const fileSha256 = (() => {
  const hash = createHash('sha256');
  for (let i = 0; i < BLOCKS; i++) hash.update(block(i));
  return hash.digest('hex');
})();

describe.skipIf(noStoreAvailable)('queued media in the chunk store', () => {
  let server: Server;
  let url: string;
  let gw: TestGateway;
  let device: { id: number; phone: string };

  beforeAll(async () => {
    // Streamed a block at a time, never held whole.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(FILE_BYTES) });
      let i = 0;
      const pump = (): void => {
        while (i < BLOCKS) if (!res.write(block(i++))) return void res.once('drain', pump);
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big.pdf`;
    gw = await startGateway({
      config: { sendIntervalMs: 0, allowPrivateUrls: true },
      // Every free page is given back when the upkeep runs (the test runs it itself).
      build: { sandbox: { deliveryDelayMs: 1 }, mediaUpkeep: { keepFreeBytes: 0 } },
    });
    device = await createPairedDevice(gw, '6281722000001');
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const statusOf = async (id: string) => (await gw.request('GET', `/messages/${id}`)).body.data.status as string;
  const ended = (id: string, what: string) =>
    waitFor(
      () => statusOf(id),
      (status) => status !== 'pending',
      { what, timeoutMs: 30_000, intervalMs: 50 },
    );
  const chunkRows = () =>
    gw.app.store.db
      .selectFrom('media_chunks')
      .select(['media_id', 'seq', 'size', sql<number>`length(bytes)`.as('length')])
      .orderBy('media_id')
      .orderBy('seq')
      .execute();
  const metric = async () => {
    const text = (await gw.request('GET', '/metrics')).body as string;
    const line = /^gateway_media_stored_bytes (\S+)$/m.exec(text);
    return line === null ? null : Number(line[1]);
  };
  const setInterval_ = (ms: number) => gw.request('PATCH', `/devices/${device.id}`, { send_interval_ms: ms });
  const queueFile = async (receiver: string) => {
    const res = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver,
      type: 'file',
      params: { document: { url }, fileName: 'big.pdf' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.id as string;
  };
  const pragma = async (name: string) =>
    Number(Object.values((await sql.raw(`pragma ${name}`).execute(gw.app.store.db)).rows[0] as object)[0]);

  it('holds a queued file in chunks, sends exactly its bytes read chunk by chunk, then deletes them', async () => {
    // The queue is held: an hour between sends, behind a text that takes the free first send.
    expect((await setInterval_(HOUR_MS)).status).toBe(200);
    const text = await gw.request('POST', '/messages', {
      device: device.phone,
      receiver: '6281729991111',
      type: 'chat',
      params: { text: 'first' },
    });
    await ended(text.body.data.id as string, 'the first text sent');
    expect(await metric()).toBe(0);

    const id = await queueFile('6281729991111');
    expect(await statusOf(id)).toBe('pending');
    const rows = await chunkRows();
    expect(rows.length).toBe(Math.ceil(FILE_BYTES / CHUNK_BYTES));
    for (const row of rows) {
      expect(Number(row.length)).toBeLessThanOrEqual(CHUNK_BYTES);
      expect(Number(row.size)).toBe(Number(row.length));
    }
    expect(rows.map((row) => Number(row.seq))).toEqual(rows.map((_, i) => i));
    expect(rows.reduce((sum, row) => sum + Number(row.size), 0)).toBe(FILE_BYTES);
    const [owner] = await gw.app.store.db.selectFrom('message_media').select(['message_id', 'media_id']).execute();
    expect(owner).toEqual({ message_id: id, media_id: rows[0]!.media_id });

    // Read back as the send reads it: one chunk per read, the same bytes.
    const source = await mediaSource(gw.app.store.db, rows[0]!.media_id);
    expect(source?.size).toBe(FILE_BYTES);
    const hash = createHash('sha256');
    let reads = 0;
    for await (const chunk of source!.open()) {
      expect(chunk.byteLength).toBeLessThanOrEqual(CHUNK_BYTES);
      hash.update(chunk);
      reads++;
    }
    expect(reads).toBe(rows.length);
    expect(hash.digest('hex')).toBe(fileSha256);
    await waitFor(metric, (bytes) => bytes === FILE_BYTES, { what: 'the bytes held on /metrics', intervalMs: 100 });

    // Let the queue go: the phone gets exactly the file, and the store lets go of it.
    expect((await setInterval_(0)).status).toBe(200);
    expect(await ended(id, 'the file sent')).toMatch(/^(sent|delivered)$/);
    const inbox = await waitFor(
      async () => ((await gw.request('GET', '/sandbox/phones/6281729991111')).body.data?.inbox ?? []) as any[],
      (entries) => entries.some((entry) => entry.message_id === id),
      { what: 'the file at the phone' },
    );
    expect(inbox.find((entry) => entry.message_id === id)?.content).toMatchObject({
      size: FILE_BYTES,
      sha256: fileSha256,
    });
    expect(await chunkRows()).toEqual([]);
    expect(await gw.app.store.db.selectFrom('message_media').select('message_id').execute()).toEqual([]);
    await waitFor(metric, (bytes) => bytes === 0, { what: 'no bytes held on /metrics', intervalMs: 100 });
  });

  it('deletes the bytes of a queued file whose message fails', async () => {
    await setInterval_(HOUR_MS);
    // An unregistered number (ending 0000): the network refuses the message for good once it is sent.
    const id = await queueFile('6281729990000');
    expect((await chunkRows()).length).toBe(Math.ceil(FILE_BYTES / CHUNK_BYTES));
    await waitFor(metric, (bytes) => bytes === FILE_BYTES, { what: 'the bytes held on /metrics', intervalMs: 100 });
    await setInterval_(0);
    expect(await ended(id, 'the file failed')).toBe('failed');
    expect(await chunkRows()).toEqual([]);
    expect(await gw.app.store.db.selectFrom('message_media').select('message_id').execute()).toEqual([]);
    await waitFor(metric, (bytes) => bytes === 0, { what: 'no bytes held on /metrics', intervalMs: 100 });
  });

  it('deletes the bytes of queued files when their device is deleted', async () => {
    const other = await createPairedDevice(gw, '6281722000002');
    await gw.request('PATCH', `/devices/${other.id}`, { send_interval_ms: HOUR_MS });
    const first = await gw.request('POST', '/messages', {
      device: other.phone,
      receiver: '6281729991111',
      type: 'chat',
      params: { text: 'first' },
    });
    await ended(first.body.data.id as string, 'the first text sent');
    const res = await gw.request('POST', '/messages', {
      device: other.phone,
      receiver: '6281729991111',
      type: 'file',
      params: { document: { url }, fileName: 'big.pdf' },
    });
    expect(res.status).toBe(200);
    expect((await chunkRows()).length).toBeGreaterThan(0);
    expect((await gw.request('DELETE', `/devices/${other.id}`)).status).toBe(200);
    expect(await ended(res.body.data.id as string, 'the file failed')).toBe('failed');
    await waitFor(chunkRows, (rows) => rows.length === 0, { what: 'the chunks deleted' });
  });

  it.runIf(storeKind === 'sqlite')('reuses the freed space, and gives it back to the file system', async () => {
    expect(await pragma('auto_vacuum')).toBe(2); // INCREMENTAL
    const pageSize = await pragma('page_size');
    const fileBytes = async () => (await pragma('page_count')) * pageSize;
    // What the tests before left free is given back first.
    await gw.app.services.mediaUpkeep.reclaim();
    expect(await pragma('freelist_count')).toBe(0);
    const empty = await fileBytes();

    await setInterval_(HOUR_MS);
    const first = await queueFile('6281729991111');
    const queued = await fileBytes();
    expect(queued - empty).toBeGreaterThanOrEqual(FILE_BYTES);
    await setInterval_(0);
    await ended(first, 'the first file sent');
    // Deleted: the pages are free, still part of the file.
    expect((await pragma('freelist_count')) * pageSize).toBeGreaterThanOrEqual(FILE_BYTES * 0.9);

    // The next file takes the free pages: the file does not grow by its size again.
    await setInterval_(HOUR_MS);
    const second = await queueFile('6281729991111');
    expect((await fileBytes()) - queued).toBeLessThan(FILE_BYTES / 4);
    await setInterval_(0);
    await ended(second, 'the second file sent');

    // The upkeep gives the free pages back: the file is as small as before the files.
    const released = await gw.app.services.mediaUpkeep.reclaim();
    expect(released).toBeGreaterThanOrEqual(FILE_BYTES * 0.9);
    expect(await pragma('freelist_count')).toBe(0);
    expect((await fileBytes()) - empty).toBeLessThan(FILE_BYTES / 4);
    // On disk too, now: not only at some later checkpoint.
    const onDisk = (await stat(join(gw.location.dataDir, 'gateway.sqlite'))).size;
    expect(onDisk - empty).toBeLessThan(FILE_BYTES / 4);
  });
});
