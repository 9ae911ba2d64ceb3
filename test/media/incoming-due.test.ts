// The incoming media downloader's reads (src/media/incoming-repository.ts): the pending downloads of the devices this
// node holds, due first, and when the next one comes due. The devices are passed as one parameter however many there
// are: as a list of placeholders each number of devices held was a statement text of its own, prepared and kept, and
// a gateway pairing 1,000 devices held some 200 MB of them (bench/README.md).
//
// The rows here belong to device ids no device has, so the gateway's own downloader (which reads the devices it holds)
// never takes them.
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { incomingMediaRepository } from '../../src/media/incoming-repository.js';
import { noStoreAvailable, startGateway, storeKind, type TestGateway } from '../helpers/gateway.js';

const BASE = 900_000;

describe.skipIf(noStoreAvailable)(`incoming media due for the devices held (${storeKind})`, () => {
  let gw: TestGateway;
  const now = Date.now();
  /** A pending download of the device, due at `due`. */
  const pending = (mediaId: string, deviceId: number, due: number) =>
    gw.app.store.db
      .insertInto('incoming_media')
      .values({
        media_id: `med_${mediaId}`,
        message_id: `msg_${mediaId}`,
        account_id: 1,
        device_id: deviceId,
        status: 'pending',
        mimetype: 'image/jpeg',
        size: null,
        file_name: null,
        sha256: null,
        attempts: 0,
        next_attempt_at: due,
        network_ref: null,
        created_at: now,
        stored_at: null,
      })
      .execute();

  beforeAll(async () => {
    gw = await startGateway();
    // Device BASE + i has i + 1 pending downloads, due at now - 1000 * (i + 1) + j; BASE + 9 has one due later.
    for (let i = 0; i < 9; i++) {
      for (let j = 0; j <= i; j++) await pending(`due_${i}_${j}`, BASE + i, now - 1000 * (i + 1) + j);
    }
    await pending('due_later', BASE + 9, now + 60_000);
  });
  afterAll(() => gw?.close());
  afterEach(() => vi.restoreAllMocks());

  const devices = (...offsets: number[]) => offsets.map((i) => BASE + i);

  it('reads only the devices asked for, the longest waiting first, up to the limit', async () => {
    const db = gw.app.store.db;
    expect(await incomingMediaRepository.due(db, [], now, 10)).toEqual([]);
    const two = await incomingMediaRepository.due(db, devices(1, 3), now, 10);
    expect(two.map((row) => row.media_id)).toEqual([
      'med_due_3_0',
      'med_due_3_1',
      'med_due_3_2',
      'med_due_3_3',
      'med_due_1_0',
      'med_due_1_1',
    ]);
    expect(two.every((row) => typeof row.device_id === 'number')).toBe(true);
    const limited = await incomingMediaRepository.due(db, devices(0, 1, 2, 3, 4, 5, 6, 7, 8), now, 3);
    expect(limited.map((row) => row.media_id)).toEqual(['med_due_8_0', 'med_due_8_1', 'med_due_8_2']);
    // Not yet due: not read, but it is the next one due.
    expect(await incomingMediaRepository.due(db, devices(9), now, 10)).toEqual([]);
    expect(await incomingMediaRepository.nextDue(db, devices(9))).toBe(now + 60_000);
    expect(await incomingMediaRepository.nextDue(db, devices(2, 9))).toBe(now - 3000);
    expect(await incomingMediaRepository.nextDue(db, devices(42))).toBeNull();
    expect(await incomingMediaRepository.nextDue(db, [])).toBeNull();
  });

  it.skipIf(storeKind !== 'sqlite')('one statement text each, however many devices are held', async () => {
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    const db = gw.app.store.db;
    for (let n = 1; n <= 9; n++) {
      const held = devices(...Array.from({ length: n }, (_, i) => i));
      await incomingMediaRepository.due(db, held, now, 10);
      await incomingMediaRepository.nextDue(db, held);
    }
    const texts = new Set(prepare.mock.calls.map(([text]) => text));
    // At most the two statements, each prepared once (the store keeps prepared statements by text).
    expect(texts.size).toBeLessThanOrEqual(2);
  });
});
