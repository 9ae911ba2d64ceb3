/**
 * SQL for claiming due webhook deliveries (docs/internals.md, Webhooks): the lease of a batch of due rows, at most
 * a lane's bound per lane (a device and one destination: its own webhook_url, or one account webhook), counting the
 * lane's deliveries already in flight. Both stores claim lane by lane through an index that leads by lane
 * (migrations 013i and 013j), each in its own spelling.
 *
 * Owns: the claim statements. Must never: decide how many to take or which receivers wait (the deliverer passes
 * the bound, the limit and the paused receivers in).
 */
import { sql, type RawBuilder } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import type { Db } from '../store/schema.js';
import { paddedLists } from './sql-lists.js';

/** What an attempt needs of a claimed event. */
export interface ClaimedEvent {
  readonly id: string;
  readonly account_id: number;
  readonly device_id: number;
  readonly type: string;
  readonly payload: string;
  readonly attempts: number;
  readonly created_at: number;
  /** The account webhook it goes to; null: the device's own webhook_url. */
  readonly webhook_id: string | null;
}

export interface ClaimParams {
  readonly now: number;
  /** The lease: until then no other claim takes these rows. */
  readonly leaseUntil: number;
  /** How many rows to take at most. */
  readonly limit: number;
  /** At most this many leased rows per lane (a device and one destination), counting those already in flight. */
  readonly perDevice: number;
  /** Devices whose own webhook_url's rows this claim must not take (paused receivers). */
  readonly skipDevices: readonly number[];
  /** Account webhooks whose rows this claim must not take (paused receivers). */
  readonly skipWebhooks: readonly string[];
  /** Several processes share the store: skip rows another claim is taking right now. */
  readonly skipLocked: boolean;
}

/**
 * Leases due rows, lane by lane. The rows are as the driver returns them
 * (PostgreSQL's bigints as strings): the caller converts them.
 */
export function claimDue(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  return onPostgres(db) ? claimByLane(db, p) : claimByLaneOnSqlite(db, p);
}

/**
 * The claim lane by lane on SQLite, as on PostgreSQL below but spelled without LATERAL, through the same index
 * (`webhook_events_lane_due`, migration 013j). The lanes with pending rows are walked one index probe each (the next
 * hook of the same device, else the next device: SQLite bounds an index by a row value's first column only, so the
 * two are asked apart); a lane's room is its bound less its leases (`webhook_events_leased`); each lane with room
 * gives its due head, one row per offset up to its room (`perDevice` offsets, so one statement text per bound).
 * `indexed by` keeps the planner on the lane index where, on a store without statistics, it would sort the pending
 * rows by lane instead. Its cost grows with the lanes, never with a backlog: before, one scan of the due rows in time
 * order walked past the rows of lanes at their bound, and a receiver that fell behind made every claim slower.
 */
async function claimByLaneOnSqlite(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  // Every commit that logs an event wakes the deliverer, with or without a delivery to make. The lane walk's
  // statement costs about 0.3 ms even with no row to find (its materialized steps, and an update that opens every
  // index of the table): 4,549 such claims took 2.3 s of a run of 100,000 messages with no webhook at all. One probe
  // of the due index first costs a few microseconds.
  const due = await sql<{ one: number }>`
    select 1 as one from webhook_events where status = 'pending' and next_attempt_at <= ${p.now} limit 1
  `.execute(db);
  if (due.rows.length === 0) return [];
  const result = await sqliteClaimStatement(p).execute(db);
  return result.rows;
}

/** The statement of `claimByLaneOnSqlite` (exported for the test that reads its plan). */
export function sqliteClaimStatement(p: ClaimParams): RawBuilder<ClaimedEvent> {
  // Padded to a power of two (one statement text per size, see paddedLists); -1 and '-' are no receiver.
  const skipped = paddedLists(p.skipDevices.length === 0 ? [-1] : p.skipDevices)[0]!;
  const skippedHooks = paddedLists(p.skipWebhooks.length === 0 ? ['-'] : p.skipWebhooks)[0]!;
  const heads: RawBuilder<unknown>[] = [];
  for (let offset = 0; offset < p.perDevice; offset++) {
    heads.push(sql`
      select (
        select h.rowid from webhook_events h indexed by webhook_events_lane_due
        where h.status = 'pending' and h.device_id = open_lanes.device_id
          and coalesce(h.webhook_id, '') = open_lanes.hook and h.next_attempt_at <= ${p.now}
        order by h.next_attempt_at limit 1 offset ${sql.lit(offset)}
      ) as head
      from open_lanes where open_lanes.room > ${sql.lit(offset)}`);
  }
  return sql<ClaimedEvent>`
    with recursive lanes (device_id, hook) as (
      select * from (
        select device_id, coalesce(webhook_id, '') from webhook_events indexed by webhook_events_lane_due
        where status = 'pending'
        order by device_id, coalesce(webhook_id, '') limit 1
      )
      union all
      select e.device_id, coalesce(e.webhook_id, '') from lanes join webhook_events e on e.rowid = coalesce(
        (select n.rowid from webhook_events n indexed by webhook_events_lane_due
          where n.status = 'pending' and n.device_id = lanes.device_id and coalesce(n.webhook_id, '') > lanes.hook
          order by coalesce(n.webhook_id, '') limit 1),
        (select n.rowid from webhook_events n indexed by webhook_events_lane_due
          where n.status = 'pending' and n.device_id > lanes.device_id
          order by n.device_id, coalesce(n.webhook_id, '') limit 1)
      )
    ),
    open_lanes as materialized (
      select device_id, hook, room from (
        select lanes.device_id, lanes.hook, ${p.perDevice} - (
          select count(*) from webhook_events l indexed by webhook_events_leased
          where l.device_id = lanes.device_id and l.locked_until > ${p.now} and coalesce(l.webhook_id, '') = lanes.hook
        ) as room
        from lanes
        where (lanes.hook <> '' or lanes.device_id not in (${sql.join(skipped)}))
          and (lanes.hook = '' or lanes.hook not in (${sql.join(skippedHooks)}))
      ) where room > 0
    ),
    picked as materialized (${sql.join(heads, sql` union all `)})
    update webhook_events set locked_until = ${p.leaseUntil}, next_attempt_at = ${p.leaseUntil}, retry_requested = 0
    where rowid in (
      select e.rowid from picked cross join webhook_events e on e.rowid = picked.head
      order by e.next_attempt_at limit ${p.limit}
    )
    returning id, account_id, device_id, type, payload, attempts, created_at, webhook_id
  `;
}

/**
 * The claim lane by lane (PostgreSQL): the lanes with pending deliveries are walked through
 * `webhook_events_lane_due` (migration 013i), one index probe each (a recursive skip over the index); each lane with
 * room gives the due head of its own rows, at most its room, and the earliest due of those are leased. Its cost grows
 * with the number of lanes, never with a backlog: rows of lanes at their bound are not read at all.
 *
 * A lane's leases are counted lane by lane, at most its bound, in `webhook_events_leased`'s order. Every lease set
 * and then cleared leaves a dead entry in that index until a vacuum; counted for all lanes at once, the planner read
 * them with a bitmap scan, which visits each one's table page every time (36,000 entries, 5,000 pages and 8 ms of a
 * 19 ms claim while webhooks were delivered at 2,000/s). An ordered, limited scan is a plain index scan, which marks
 * the dead entries it meets so that later claims skip them (bench/README.md).
 */
async function claimByLane(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  const result = await postgresClaimStatement(p).execute(db);
  return result.rows;
}

/** The statement of `claimByLane` (exported for the tests and benchmarks that read its plan). */
export function postgresClaimStatement(p: ClaimParams): RawBuilder<ClaimedEvent> {
  const lock = p.skipLocked ? sql`for update skip locked` : sql``;
  const skipped = p.skipDevices.length === 0 ? [-1] : [...p.skipDevices];
  const skippedHooks = p.skipWebhooks.length === 0 ? ['-'] : [...p.skipWebhooks];
  return sql<ClaimedEvent>`
    with recursive lanes (device_id, hook) as (
      (select device_id, coalesce(webhook_id, '') from webhook_events
        where status = 'pending'
        order by device_id, coalesce(webhook_id, '') limit 1)
      union all
      select next_lane.device_id, next_lane.hook from lanes cross join lateral (
        select e.device_id, coalesce(e.webhook_id, '') as hook from webhook_events e
        where e.status = 'pending' and (e.device_id, coalesce(e.webhook_id, '')) > (lanes.device_id, lanes.hook)
        order by e.device_id, coalesce(e.webhook_id, '') limit 1
      ) next_lane
    ),
    open_lanes as (
      select lanes.device_id, lanes.hook, ${p.perDevice}::bigint - leased.n as room
      from lanes cross join lateral (
        select count(*) as n from (
          select 1 from webhook_events l
          where l.device_id = lanes.device_id and l.locked_until > ${p.now} and coalesce(l.webhook_id, '') = lanes.hook
          order by l.locked_until limit ${p.perDevice}
        ) lease
      ) leased
      where leased.n < ${p.perDevice}
        and (lanes.hook <> '' or not (lanes.device_id = any(${skipped}::bigint[])))
        and (lanes.hook = '' or not (lanes.hook = any(${skippedHooks}::text[])))
    ),
    picked as (
      select head.id, head.next_attempt_at from open_lanes cross join lateral (
        select e.id, e.next_attempt_at from webhook_events e
        where e.status = 'pending' and e.device_id = open_lanes.device_id
          and coalesce(e.webhook_id, '') = open_lanes.hook and e.next_attempt_at <= ${p.now}
        order by e.next_attempt_at
        limit open_lanes.room
        ${lock}
      ) head
    )
    update webhook_events set locked_until = ${p.leaseUntil}, next_attempt_at = ${p.leaseUntil}, retry_requested = 0
    where id in (select id from picked order by next_attempt_at limit ${p.limit})
    returning id, account_id, device_id, type, payload, attempts, created_at, webhook_id
  `;
}
