/**
 * The cluster (docs/internals.md, Clusters): nodes sharing one PostgreSQL database, and one
 * fenced lease per device saying which node holds its connection.
 *
 * - `cluster_nodes`: one row per node name; `instance` is the process that
 *   runs under the name now (a restart takes the name over). `heartbeat_at` is renewed every
 *   few seconds; a node silent past the lease time is DOWN. `stopped_at` is
 *   set by a clean shutdown, so others need not wait for silence. `url` is
 *   where other nodes forward requests that need its live connections.
 * - `device_leases`: one row per device that ever had a holder. `node` null
 *   means released (anyone may claim it). A lease is valid while its node's
 *   heartbeat is fresh: renewing the heartbeat renews every lease of the node
 *   in one write. `epoch` grows at every takeover; writes made for a device
 *   carry the epoch they were made under and are refused when it is stale.
 *
 * Created on SQLite too (one node there; the tables stay empty), so both
 * stores keep one schema.
 */
import type { Kysely } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<unknown>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('cluster_nodes')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('instance', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('heartbeat_at', 'bigint', (col) => col.notNull())
    .addColumn('stopped_at', 'bigint')
    .execute();
  await db.schema
    .createTable('device_leases')
    .addColumn('device_id', 'bigint', (col) => col.primaryKey())
    .addColumn('node', 'text')
    .addColumn('epoch', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('acquired_at', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('device_leases_node').on('device_leases').column('node').execute();
}
