/**
 * `store_probe`: where readiness writes a throwaway row while the store's
 * last write failed (full disk, read-only file), to learn whether it can write
 * again. Empty between probes.
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await dialect
    .idColumn(db.schema.createTable('store_probe'))
    .addColumn('checked_at', 'bigint', (col) => col.notNull())
    .addColumn('filler', dialect.blobType, (col) => col.notNull())
    .execute();
}
