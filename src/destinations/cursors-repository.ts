/**
 * SQL of the broker cursors (migration 013f): how far each broker has been published, and the lease that lets one
 * process of a cluster publish to it.
 *
 * Owns: the `broker_cursors` table.
 * Must never: decide when to take or renew a lease, or what to publish (driver.ts passes the values in); move a
 * cursor for a process that does not hold the lease.
 */
import { sql } from 'kysely';
import type { Db } from '../store/schema.js';

export interface Lease {
  /** The cursor of the last event confirmed by the broker; null: nothing yet. */
  readonly cursor: string | null;
  readonly leaseUntil: number;
}

export const brokerCursors = {
  /**
   * Takes or renews the lease of `destination` for `holder` until `until`, when free, run out or already its own;
   * answers the stored cursor, or null when another process holds a live lease.
   */
  acquire: async (db: Db, destination: string, holder: string, now: number, until: number): Promise<Lease | null> => {
    await sql`
      insert into broker_cursors (destination, cursor, holder, lease_until, updated_at)
      values (${destination}, null, null, 0, ${now})
      on conflict (destination) do nothing
    `.execute(db);
    const { rows } = await sql<{ cursor: string | null; lease_until: string | number }>`
      update broker_cursors set holder = ${holder}, lease_until = ${until}, updated_at = ${now}
      where destination = ${destination} and (holder is null or holder = ${holder} or lease_until < ${now})
      returning cursor, lease_until
    `.execute(db);
    const row = rows[0];
    return row === undefined ? null : { cursor: row.cursor, leaseUntil: Number(row.lease_until) };
  },

  /** Moves the cursor on under the lease; false when `holder` no longer holds it (nothing changed). */
  advance: async (db: Db, destination: string, holder: string, cursor: string, now: number): Promise<boolean> => {
    const { rows } = await sql<{ destination: string }>`
      update broker_cursors set cursor = ${cursor}, updated_at = ${now}
      where destination = ${destination} and holder = ${holder} and lease_until >= ${now}
      returning destination
    `.execute(db);
    return rows.length === 1;
  },

  /** Lets the lease go at once (a clean stop), so another process takes over without waiting for it to run out. */
  release: async (db: Db, destination: string, holder: string): Promise<void> => {
    await sql`
      update broker_cursors set holder = null, lease_until = 0
      where destination = ${destination} and holder = ${holder}
    `.execute(db);
  },

  /** The stored cursor whoever holds it (for the backlog shown by a process that does not publish). */
  cursor: async (db: Db, destination: string): Promise<string | null> => {
    const { rows } = await sql<{ cursor: string | null }>`
      select cursor from broker_cursors where destination = ${destination}
    `.execute(db);
    return rows[0]?.cursor ?? null;
  },
};
