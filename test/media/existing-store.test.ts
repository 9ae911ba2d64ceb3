// Issue 22, item 6: stores made before the chunk store's last changes.
// - A SQLite file made without incremental vacuum is switched to it once, by
//   the gateway, when it starts (a one-time VACUUM); its data stays.
// - Media stored whole (before chunks existed) is cut into chunks by the
//   009c migration, so every media byte is read chunk by chunk afterwards.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_BYTES } from '../../src/media/index.js';
import { storedMedia } from '../../src/messages/stored-media.js';
import { chunkWholeMedia } from '../../src/store/migrations/009c-media-chunk-sizes.js';
import { postgresMigrationDialect, sqliteMigrationDialect } from '../../src/store/migrations/helpers.js';
import type { Kysely } from 'kysely';
import {
  newStoreLocation,
  noStoreAvailable,
  startGateway,
  storeKind,
  type StoreLocation,
  type TestGateway,
} from '../helpers/gateway.js';

const MiB = 1024 * 1024;

describe.skipIf(noStoreAvailable)('stores made before the chunk store', () => {
  let gw: TestGateway | undefined;
  let location: StoreLocation | undefined;
  afterEach(async () => {
    if (gw !== undefined) await gw.close();
    else await location?.drop();
    gw = undefined;
    location = undefined;
  });

  it.runIf(storeKind === 'sqlite')(
    'switches an older SQLite file to incremental vacuum at start, data kept',
    async () => {
      location = await newStoreLocation({ migrated: false });
      const file = join(location.dataDir, 'gateway.sqlite');
      const old = new Database(file);
      old.pragma('journal_mode = WAL');
      old.exec('create table kept (bytes blob)');
      old.prepare('insert into kept values (?)').run(Buffer.alloc(3 * MiB, 7));
      expect(old.pragma('auto_vacuum', { simple: true })).toBe(0);
      old.close();

      gw = await startGateway({ location, build: { mediaUpkeep: { keepFreeBytes: 0 } } });
      const pragma = async (name: string) =>
        Number(Object.values((await sql.raw(`pragma ${name}`).execute(gw!.app.store.db)).rows[0] as object)[0]);
      expect(await pragma('auto_vacuum')).toBe(2);
      const kept = await sql<{ size: number }>`select length(bytes) as size from kept`.execute(gw.app.store.db);
      expect(kept.rows).toEqual([{ size: 3 * MiB }]);
      // And it works as such: the pages a delete frees can be given back.
      await sql`delete from kept`.execute(gw.app.store.db);
      expect((await pragma('freelist_count')) * (await pragma('page_size'))).toBeGreaterThanOrEqual(3 * MiB);
      expect(await gw.app.services.mediaUpkeep.reclaim()).toBeGreaterThanOrEqual(3 * MiB);
      expect(await pragma('freelist_count')).toBe(0);
    },
  );

  it('cuts media stored whole into chunks, readable with the same bytes', async () => {
    gw = await startGateway();
    const db = gw.app.store.db;
    const whole = Buffer.alloc(2.5 * MiB);
    for (let i = 0; i < whole.length; i++) whole[i] = (i * 11 + (i >> 8)) & 0xff;
    const empty = 'msg-empty-file';
    await db
      .insertInto('message_media')
      .values([
        { message_id: 'msg-whole-file', mimetype: 'application/pdf', bytes: whole, media_id: null },
        { message_id: empty, mimetype: 'text/plain', bytes: new Uint8Array(0), media_id: null },
      ])
      .execute();
    // Before: not readable (only chunks are).
    expect(await storedMedia(db, 'msg-whole-file')).toBeUndefined();

    await chunkWholeMedia(
      db as unknown as Kysely<unknown>,
      storeKind === 'sqlite' ? sqliteMigrationDialect : postgresMigrationDialect,
    );

    const chunks = await db
      .selectFrom('media_chunks')
      .select(['media_id', 'seq', 'size', sql<number>`length(bytes)`.as('length')])
      .where('media_id', 'in', ['legacy-msg-whole-file', `legacy-${empty}`])
      .orderBy('media_id', 'desc')
      .orderBy('seq')
      .execute();
    expect(chunks.map((c) => [c.media_id, Number(c.seq), Number(c.size), Number(c.length)])).toEqual([
      ['legacy-msg-whole-file', 0, CHUNK_BYTES, CHUNK_BYTES],
      ['legacy-msg-whole-file', 1, CHUNK_BYTES, CHUNK_BYTES],
      ['legacy-msg-whole-file', 2, MiB / 2, MiB / 2],
      [`legacy-${empty}`, 0, 0, 0],
    ]);
    const rows = await db.selectFrom('message_media').select(['message_id', 'media_id', 'bytes']).execute();
    for (const row of rows) {
      expect(row.media_id).toBe(`legacy-${row.message_id}`);
      expect(row.bytes.length).toBe(0);
    }
    const media = await storedMedia(db, 'msg-whole-file');
    expect(media?.mimetype).toBe('application/pdf');
    expect(media?.source.size).toBe(whole.length);
    const hash = createHash('sha256');
    for await (const chunk of media!.source.open()) hash.update(chunk);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(whole).digest('hex'));
    expect((await storedMedia(db, empty))?.source.size).toBe(0);
  });
});
