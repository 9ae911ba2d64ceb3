/**
 * `token_revocations`: one row whose `revision` goes up with every token revocation, in the
 * revoking transaction. Every gateway process re-reads it every few hundred milliseconds and drops
 * its authentication cache when it moved, so a token revoked by the CLI or on another node stops
 * working within a second instead of after the cache's lifetime (docs/security.md).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('token_revocations')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('revision', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into token_revocations (id, revision) values (1, 0)`.execute(db);
}
