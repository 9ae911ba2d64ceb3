/**
 * SQL for the devices' message quota: the `quota_limit` / `quote_used` counters on `devices`.
 *
 * Owns: taking a unit, giving units back, taking a batch's units exactly (or locking its devices, then adding its
 * counts).
 * Batches are one statement with the whole list in one parameter (an array read with `unnest` / `= any` on
 * PostgreSQL, JSON read with `json_each` on SQLite): one shape for any size, nothing padded.
 * Must never: decide whether a message may be accepted (acceptance.ts does), or touch another column of `devices`.
 */
import { sql } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Db } from '../store/schema.js';

export interface LockedQuota {
  readonly id: number;
  readonly quota_limit: number;
  readonly quote_used: number;
}

// Statements run once per message or acceptance batch: built once, then only bound (see store/prepared.ts).

const takeQuotaStatement = prepared(1, (db, deviceId: number) =>
  db
    .updateTable('devices')
    .set((eb) => ({ quote_used: eb('quote_used', '+', 1) }))
    .where('id', '=', deviceId)
    .where((eb) => eb.or([eb('quota_limit', '<', 0), eb('quote_used', '<', eb.ref('quota_limit'))]))
    .returning('id'),
);

/** Gives back up to `units` (never below zero). */
const giveBackStatement = prepared(2, (db, deviceId: number, units: number) =>
  db
    .updateTable('devices')
    .set((eb) => ({
      quote_used: eb
        .case()
        .when('quote_used', '>', units)
        .then(eb('quote_used', '-', units))
        .else(0)
        .end(),
    }))
    .where('id', '=', deviceId)
    .where('quote_used', '>', 0),
);

// A no-op UPDATE: a row lock on PostgreSQL; SQLite's write transaction already excludes others.
const lockPostgres = prepared(1, (db, ids: readonly number[]) =>
  compiled(
    db,
    sql<LockedQuota>`update devices set quote_used = quote_used where id = any(${ids}::bigint[])
      returning id, quota_limit, quote_used`,
  ),
);
const lockSqlite = prepared(1, (db, idsJson: string) =>
  compiled(
    db,
    sql<LockedQuota>`update devices set quote_used = quote_used where id in (select value from json_each(${idsJson}))
      returning id, quota_limit, quote_used`,
  ),
);

const addPostgres = prepared(2, (db, ids: readonly number[], units: readonly number[]) =>
  compiled(
    db,
    sql`update devices set quote_used = quote_used + u.n
      from unnest(${ids}::bigint[], ${units}::bigint[]) as u(id, n) where devices.id = u.id`,
  ),
);
/** Pairs as JSON: `[[id, n], ...]`. */
const addSqlite = prepared(1, (db, pairsJson: string) =>
  compiled(
    db,
    sql`update devices set quote_used = quote_used + u.n
      from (select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as n from json_each(${pairsJson})) as u
      where devices.id = u.id`,
  ),
);

/**
 * Takes up to each device's wanted units in one statement: its rows locked in device order (a concurrent batch, of
 * this node or another, waits for them), each given what it wants or what is left, whichever is less. Answers the
 * units each device got.
 */
const takeUnitsPostgres = prepared(2, (db, ids: readonly number[], wanted: readonly number[]) =>
  compiled(
    db,
    sql<{ id: number; granted: number }>`with locked as (
        select d.id, case when d.quota_limit < 0 then w.n else least(w.n, greatest(0, d.quota_limit - d.quote_used)) end
          as granted
        from devices d join unnest(${ids}::bigint[], ${wanted}::bigint[]) as w(id, n) on w.id = d.id
        order by d.id for update of d
      )
      update devices set quote_used = devices.quote_used + locked.granted from locked where devices.id = locked.id
      returning devices.id, locked.granted`,
  ),
);

/**
 * Gives back each device's units in one statement, its rows locked in device order, as `takeUnitsPostgres` takes
 * them: a batch giving back for several devices and an acceptance taking for several (of two nodes of a cluster)
 * never wait for each other in opposite orders.
 */
const giveBackManyPostgres = prepared(2, (db, ids: readonly number[], units: readonly number[]) =>
  compiled(
    db,
    sql`with locked as (
        select d.id, w.n from devices d join unnest(${ids}::bigint[], ${units}::bigint[]) as w(id, n) on w.id = d.id
        order by d.id for update of d
      )
      update devices set quote_used = greatest(0, devices.quote_used - locked.n) from locked
      where devices.id = locked.id`,
  ),
);

export const quotaRepository = {
  /** Takes one unit of quota if any is left; false when none is. Exact under concurrency (one atomic UPDATE). */
  takeQuota: async (db: Db, deviceId: number): Promise<boolean> =>
    (await takeQuotaStatement(db, deviceId)).length === 1,

  /** One unit back (a message that never reached the network). */
  giveBackQuota: async (db: Db, deviceId: number): Promise<void> => {
    await giveBackStatement(db, deviceId, 1);
  },

  /** `units` back at once (a queue ended before any of it was sent). */
  giveBackUnits: async (db: Db, deviceId: number, units: number): Promise<void> => {
    if (units > 0) await giveBackStatement(db, deviceId, units);
  },

  /** Each device's units back (never below zero), the devices' rows locked in device order. */
  giveBackMany: async (db: Db, units: ReadonlyMap<number, number>): Promise<void> => {
    const entries = [...units].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
    if (entries.length === 0) return;
    if (onPostgres(db)) {
      await giveBackManyPostgres(
        db,
        entries.map(([id]) => id),
        entries.map(([, n]) => n),
      );
      return;
    }
    // SQLite: the write transaction already excludes every other writer.
    for (const [id, n] of entries) await giveBackStatement(db, id, n);
  },

  /**
   * Locks the devices' rows for the rest of the transaction and reads their quota, so a whole batch can be allotted
   * exactly. Each device asked for comes back once.
   */
  lockQuotas: async (db: Db, deviceIds: readonly number[]): Promise<LockedQuota[]> => {
    if (deviceIds.length === 0) return [];
    return onPostgres(db) ? lockPostgres(db, deviceIds) : lockSqlite(db, JSON.stringify(deviceIds));
  },

  /**
   * Takes for each device up to `wanted` units, exactly under concurrency: what is left when there is less (none
   * for a device not found). Answers the units each device got. PostgreSQL: one statement; SQLite: the lock, then
   * the addition (its write transaction already excludes others).
   */
  takeUnits: async (db: Db, wanted: ReadonlyMap<number, number>): Promise<Map<number, number>> => {
    const granted = new Map<number, number>();
    if (wanted.size === 0) return granted;
    const entries = [...wanted];
    if (onPostgres(db)) {
      const rows = await takeUnitsPostgres(
        db,
        entries.map(([id]) => id),
        entries.map(([, n]) => n),
      );
      for (const row of rows) granted.set(Number(row.id), Number(row.granted));
      return granted;
    }
    for (const row of await lockSqlite(db, JSON.stringify(entries.map(([id]) => id)))) {
      const want = wanted.get(row.id) ?? 0;
      const left = row.quota_limit < 0 ? want : Math.max(0, row.quota_limit - row.quote_used);
      granted.set(row.id, Math.min(want, left));
    }
    const taken = [...granted].filter(([, n]) => n > 0);
    if (taken.length > 0) await addSqlite(db, JSON.stringify(taken));
    return granted;
  },

  /** Adds each device's count to its quota used, in one statement. */
  addQuotaUsed: async (db: Db, units: ReadonlyMap<number, number>): Promise<void> => {
    if (units.size === 0) return;
    const entries = [...units];
    if (onPostgres(db)) {
      await addPostgres(
        db,
        entries.map(([id]) => id),
        entries.map(([, n]) => n),
      );
    } else {
      await addSqlite(db, JSON.stringify(entries));
    }
  },
};
