/**
 * SQL for claiming due webhook deliveries (docs/internals.md, Webhooks): the lease of a batch of due rows, at most
 * a lane's bound per lane (a device and one destination: its own webhook_url, or one account webhook), counting the
 * lane's deliveries already in flight. PostgreSQL claims lane by lane through migration 013i's index; SQLite with
 * one scan of the due rows.
 *
 * Owns: the claim statements. Must never: decide how many to take or which receivers wait (the deliverer passes
 * the bound, the limit and the paused receivers in).
 */
import { sql } from 'kysely';
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
  /** How many due rows one claim looks at (SQLite's scan; a claim by lane reads each lane's head instead). */
  readonly scan: number;
  /** Several processes share the store: skip rows another claim is taking right now. */
  readonly skipLocked: boolean;
}

/**
 * Leases due rows, lane by lane on PostgreSQL and with one scan on SQLite. The rows are as the driver returns them
 * (PostgreSQL's bigints as strings): the caller converts them.
 */
export function claimDue(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  return onPostgres(db) ? claimByLane(db, p) : claimByScan(db, p);
}

/**
 * The claim as one scan (SQLite): due rows in time order across every lane, those of lanes at their bound left out.
 * Its cost grows with the due rows of lanes at their bound, which SQLite's one process, claiming alone, keeps few.
 */
async function claimByScan(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  const lock = p.skipLocked ? sql`for update skip locked` : sql``;
  // Padded to a power of two (one statement text per size, see paddedLists); -1 and '-' are no receiver.
  const skipped = paddedLists(p.skipDevices.length === 0 ? [-1] : p.skipDevices)[0]!;
  const skippedHooks = paddedLists(p.skipWebhooks.length === 0 ? ['-'] : p.skipWebhooks)[0]!;
  const result = await sql<ClaimedEvent>`
      with inflight as (
        select device_id, coalesce(webhook_id, '') as hook, count(*) as n from webhook_events
        where locked_until > ${p.now}
        group by device_id, coalesce(webhook_id, '')
      ),
      due as (
        select e.id, e.device_id, coalesce(e.webhook_id, '') as hook, e.next_attempt_at from webhook_events e
        where e.status = 'pending'
          and e.next_attempt_at <= ${p.now}
          and not exists (
            select 1 from inflight i
            where i.device_id = e.device_id and i.hook = coalesce(e.webhook_id, '') and i.n >= ${p.perDevice}
          )
          and (e.webhook_id is not null or e.device_id not in (${sql.join(skipped)}))
          and (e.webhook_id is null or e.webhook_id not in (${sql.join(skippedHooks)}))
        order by e.next_attempt_at
        limit ${p.scan}
        ${lock}
      ),
      ranked as (
        select due.id, due.next_attempt_at,
          row_number() over (partition by due.device_id, due.hook order by due.next_attempt_at)
            + coalesce(inflight.n, 0) as slot
        from due left join inflight on inflight.device_id = due.device_id and inflight.hook = due.hook
      )
      update webhook_events set locked_until = ${p.leaseUntil}, next_attempt_at = ${p.leaseUntil}, retry_requested = 0
      where id in (select id from ranked where slot <= ${p.perDevice} order by next_attempt_at limit ${p.limit})
      returning id, account_id, device_id, type, payload, attempts, created_at, webhook_id
    `.execute(db);
  return result.rows;
}

/**
 * The claim lane by lane (PostgreSQL): the lanes with pending deliveries are walked through
 * `webhook_events_lane_due` (migration 013i), one index probe each (a recursive skip over the index); each lane with
 * room gives the due head of its own rows, at most its room, and the earliest due of those are leased. Its cost grows
 * with the number of lanes, never with a backlog: rows of lanes at their bound are not read at all.
 */
async function claimByLane(db: Db, p: ClaimParams): Promise<ClaimedEvent[]> {
  const lock = p.skipLocked ? sql`for update skip locked` : sql``;
  const skipped = p.skipDevices.length === 0 ? [-1] : [...p.skipDevices];
  const skippedHooks = p.skipWebhooks.length === 0 ? ['-'] : [...p.skipWebhooks];
  const result = await sql<ClaimedEvent>`
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
    inflight as (
      select device_id, coalesce(webhook_id, '') as hook, count(*) as n from webhook_events
      where locked_until > ${p.now}
      group by device_id, coalesce(webhook_id, '')
    ),
    open_lanes as (
      select lanes.device_id, lanes.hook, ${p.perDevice}::bigint - coalesce(inflight.n, 0) as room
      from lanes left join inflight on inflight.device_id = lanes.device_id and inflight.hook = lanes.hook
      where coalesce(inflight.n, 0) < ${p.perDevice}
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
  `.execute(db);
  return result.rows;
}
