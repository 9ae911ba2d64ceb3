/**
 * Forward-only migrations, run at start-up.
 *
 * Owns: the ordered list of migrations and running the pending ones. Safe from
 * two processes at once: on PostgreSQL Kysely's migrator holds a row lock for
 * the whole run; on SQLite the whole run is one IMMEDIATE transaction, so the
 * second process waits for the first and then finds nothing left to do.
 * Must never: edit a migration that has shipped; add a new one instead.
 */
import { Migrator, SqliteAdapter, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { MigrationDialect } from './migrations/helpers.js';
import * as m001 from './migrations/001-foundation.js';
import * as m002 from './migrations/002-events.js';
import * as m003 from './migrations/003-messages.js';
import * as m003b from './migrations/003b-outbox-index.js';
import * as m004 from './migrations/004-groups.js';
import * as m005 from './migrations/005-webhooks.js';
import * as m006 from './migrations/006-webhook-retry-requested.js';
import * as m007c from './migrations/007c-retention-indexes.js';
import * as m007d from './migrations/007d-store-probe.js';
import * as m007e from './migrations/007e-webhook-secret-rotation.js';
import * as m007e2 from './migrations/007e2-media-chunks.js';
import * as m007h from './migrations/007h-network-state.js';
import * as m008c from './migrations/008c-replies-and-group-settings.js';
import * as m008d from './migrations/008d-webhook-formats.js';
import * as m008e from './migrations/008e-interactive-offers.js';
import * as m008f from './migrations/008f-sandbox-accounts.js';
import * as m008g from './migrations/008g-cluster.js';
import * as m009a from './migrations/009a-device-network.js';
import * as m009b from './migrations/009b-token-revocations.js';
import * as m009c from './migrations/009c-media-chunk-sizes.js';
import * as m009e from './migrations/009e-group-receipts.js';
import * as m009f from './migrations/009f-lid-mappings.js';
import * as m010a from './migrations/010a-message-reactions.js';
import * as m011a from './migrations/011a-message-actions.js';
import * as m011b from './migrations/011b-incoming-media.js';
import * as m011c from './migrations/011c-poll-votes.js';
import * as m012a from './migrations/012a-call-rejection.js';
import * as m013a from './migrations/013a-chats.js';
import * as m013b from './migrations/013b-message-source.js';
import * as m013c from './migrations/013c-contacts.js';
import * as m013d from './migrations/013d-event-log.js';
import * as m013e from './migrations/013e-webhooks.js';
import * as m013f from './migrations/013f-broker-cursors.js';
import * as m013g from './migrations/013g-webhook-backlog.js';
import * as m013h from './migrations/013h-device-webhook-backlog.js';
import * as m013i from './migrations/013i-webhook-lanes.js';
import * as m013j from './migrations/013j-webhook-lanes-sqlite.js';

type MigrationModule = { up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> };

const MIGRATIONS: ReadonlyArray<readonly [string, MigrationModule]> = [
  ['001-foundation', m001],
  ['002-events', m002],
  ['003-messages', m003],
  ['003b-outbox-index', m003b],
  ['004-groups', m004],
  ['005-webhooks', m005],
  ['006-webhook-retry-requested', m006],
  ['007c-retention-indexes', m007c],
  ['007d-store-probe', m007d],
  ['007e-webhook-secret-rotation', m007e],
  ['007e2-media-chunks', m007e2],
  ['007h-network-state', m007h],
  ['008c-replies-and-group-settings', m008c],
  ['008d-webhook-formats', m008d],
  ['008e-interactive-offers', m008e],
  ['008f-sandbox-accounts', m008f],
  ['008g-cluster', m008g],
  ['009a-device-network', m009a],
  ['009b-token-revocations', m009b],
  ['009c-media-chunk-sizes', m009c],
  ['009e-group-receipts', m009e],
  ['009f-lid-mappings', m009f],
  ['010a-message-reactions', m010a],
  ['011a-message-actions', m011a],
  ['011b-incoming-media', m011b],
  ['011c-poll-votes', m011c],
  ['012a-call-rejection', m012a],
  ['013a-chats', m013a],
  ['013b-message-source', m013b],
  ['013c-contacts', m013c],
  ['013d-event-log', m013d],
  ['013e-webhooks', m013e],
  ['013f-broker-cursors', m013f],
  ['013g-webhook-backlog', m013g],
  ['013h-device-webhook-backlog', m013h],
  ['013i-webhook-lanes', m013i],
  ['013j-webhook-lanes-sqlite', m013j],
];

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: MigrationDialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const result: Record<string, Migration> = {};
    for (const [name, module] of MIGRATIONS) {
      result[name] = { up: (db) => module.up(db as Kysely<unknown>, this.dialect) };
    }
    return result;
  }
}

/**
 * Failures of a run that another process caused and that a retry clears. Besides
 * lock and creation races, Kysely's check for its bookkeeping tables lists the
 * tables of every schema in the database: a schema or table dropped by another
 * process while that listing runs fails it with 3F000 / 42P01.
 */
const RETRYABLE_PG_CODES = new Set(['40P01', '23505', '3F000', '42P01']);
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || RETRYABLE_PG_CODES.has(code));
}

export async function migrateToLatest(
  db: Kysely<unknown>,
  dialect: MigrationDialect,
  schema?: string,
): Promise<string[]> {
  // Naming the schema keeps the migrator from mistaking another schema's bookkeeping tables for ours.
  const migrator = new Migrator({
    db,
    provider: new StaticProvider(dialect),
    // Pieces of work get their own prefixes (008d, 008f, ...) and land in any order: a store that ran a
    // later-named migration first must still run an earlier-named one that arrives after it.
    allowUnorderedMigrations: true,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  // Creating the bookkeeping tables happens outside the locked run and can race
  // with another process doing the same; such a race is harmless to retry.
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await (db.getExecutor().adapter instanceof SqliteAdapter
      ? holdingSqliteWriteLock(db, () => migrator.migrateToLatest())
      : migrator.migrateToLatest());
    if (error === undefined) return (results ?? []).map((r) => r.migrationName);
    if (attempt >= 10 || !isBusy(error)) throw error;
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
}

/**
 * Kysely's migrator takes no lock and opens no transaction on SQLite, so two
 * processes could both find a migration pending and both run it. Running the
 * whole migration inside one `BEGIN IMMEDIATE` makes the second process wait
 * for the first (busy_timeout) and then find nothing left to do; it also makes
 * each run atomic. The SQLite dialect has a single connection, so every query
 * of the run goes through this transaction.
 */
async function holdingSqliteWriteLock<T extends { error?: unknown }>(
  db: Kysely<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  await sql`begin immediate`.execute(db);
  let outcome: T;
  try {
    outcome = await run();
  } catch (error) {
    await sql`rollback`.execute(db).catch(() => undefined);
    throw error;
  }
  if (outcome.error === undefined) await sql`commit`.execute(db);
  else await sql`rollback`.execute(db).catch(() => undefined);
  return outcome;
}
