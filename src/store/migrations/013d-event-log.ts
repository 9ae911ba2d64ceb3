/**
 * The event log (DECISIONS 17; docs/events.md): every event of every device, kept `GATEWAY_EVENT_RETENTION_DAYS`,
 * read in order by `GET /events`, the streams and the brokers (src/events/log.ts).
 *
 * - `seq`: numbered by the database when the row is inserted (SQLite: the rowid, never reused; PostgreSQL: an
 *   identity, taken before the transaction commits).
 * - `xact`: the inserting transaction (PostgreSQL: `pg_current_xact_id()`, set by the column's default; SQLite: 0).
 *   The log's order is (xact, seq). A reader on PostgreSQL reads only rows of transactions older than its snapshot's
 *   xmin, so a transaction that commits late is never skipped (log.ts explains why).
 * - `id`: the event id (`evt_…`), `payload`: the standard JSON body, as stored for webhook deliveries.
 * - On PostgreSQL a statement trigger notifies `gateway:<schema>` with `e` once per inserting transaction (identical
 *   notifications of one transaction are folded into one), so every node's readers look again after the commit.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const postgres = dialect.blobType === 'bytea';
  await dialect
    .idColumn(db.schema.createTable('events'), 'seq')
    .addColumn('xact', 'bigint', (col) =>
      col.notNull().defaultTo(postgres ? sql`(pg_current_xact_id()::text::bigint)` : 0),
    )
    .addColumn('id', 'text', (col) => col.notNull())
    .addColumn('account_id', 'bigint', (col) => col.notNull())
    .addColumn('device_id', 'bigint', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('events_order').on('events').columns(['xact', 'seq']).execute();
  await db.schema.createIndex('events_account').on('events').columns(['account_id', 'xact', 'seq']).execute();
  await db.schema.createIndex('events_device').on('events').columns(['device_id', 'xact', 'seq']).execute();
  if (!postgres) return;
  await sql`
    create or replace function gateway_events_appended() returns trigger language plpgsql as $$
    begin
      perform pg_notify(left('gateway:' || current_schema(), 63), 'e');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger events_appended after insert on events
    for each statement execute function gateway_events_appended()`.execute(db);
}
