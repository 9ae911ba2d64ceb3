/**
 * Each account webhook's and each device's own `webhook_url`'s backlog and state, as `GET /gateway` shows them to the
 * account (DECISIONS 17: each destination's backlog and state; docs/webhooks.md, Backlog and state), and the
 * gateway-wide count of deliveries still to be made, for /metrics.
 *
 * A webhook's backlog is its pending deliveries: due now, or waiting for a retry. Its state: `disabled` when turned
 * off; `failing` when a pending delivery's last attempt failed (it waits for its retry); `ok` otherwise.
 *
 * Owns: the SQL of those counts, each bounded by BACKLOG_CAP and read through an index of pending rows (013g for a
 * webhook's, 013h for a device's own URL, 002's `webhook_events_due` for the gateway's).
 * Must never: count, name or show another account's webhook; read the deliveries already made.
 */
import { sql } from 'kysely';
import type { Db } from '../store/schema.js';

/** Backlogs are counted up to this (a look stays cheap however far behind a receiver is). */
export const BACKLOG_CAP = 100_000;

export type WebhookState = 'ok' | 'failing' | 'disabled';

export interface WebhookStatus {
  readonly id: string;
  /** The host (and port) of its URL; never the path or query, which may carry a receiver's key. */
  readonly host: string;
  readonly state: WebhookState;
  /** Pending deliveries, counted up to BACKLOG_CAP. */
  readonly backlog: number;
}

/** The literal the partial index names: a bound parameter would keep SQLite from proving the index applies. */
const PENDING = sql.lit('pending');

/** The account's webhooks, oldest first, each with its backlog and state. */
export async function webhookStatuses(db: Db, accountId: number): Promise<WebhookStatus[]> {
  const hooks = await db
    .selectFrom('webhooks')
    .select(['id', 'url', 'enabled'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const out: WebhookStatus[] = [];
  for (const hook of hooks) {
    const { backlog, failing } = await pendingOf(db, 'webhook', hook.id);
    out.push({
      id: hook.id,
      host: hostOf(hook.url),
      state: Number(hook.enabled) !== 1 ? 'disabled' : failing ? 'failing' : 'ok',
      backlog,
    });
  }
  return out;
}

export interface DeviceWebhookStatus {
  /** The device whose own `webhook_url` this is. */
  readonly device: number;
  readonly host: string;
  /** A device's own URL cannot be turned off (clearing it removes the destination): `ok` or `failing`. */
  readonly state: Exclude<WebhookState, 'disabled'>;
  readonly backlog: number;
}

/** The account's devices that have a `webhook_url`, in the order they were made, each with its backlog and state. */
export async function deviceWebhookStatuses(db: Db, accountId: number): Promise<DeviceWebhookStatus[]> {
  const devices = await db
    .selectFrom('devices')
    .select(['id', 'webhook_url'])
    .where('account_id', '=', accountId)
    .where('webhook_url', 'is not', null)
    .where('webhook_url', '!=', '')
    .orderBy('id')
    .execute();
  const out: DeviceWebhookStatus[] = [];
  for (const device of devices) {
    const { backlog, failing } = await pendingOf(db, 'device', device.id);
    out.push({ device: device.id, host: hostOf(device.webhook_url ?? ''), state: failing ? 'failing' : 'ok', backlog });
  }
  return out;
}

/**
 * The pending deliveries of one destination, counted up to BACKLOG_CAP, and whether one of them failed its last
 * attempt: an account webhook's through 013g's index, a device's own URL (no account webhook) through 013h's.
 */
async function pendingOf(
  db: Db,
  kind: 'webhook' | 'device',
  id: string | number,
): Promise<{ backlog: number; failing: boolean }> {
  let waiting = db.selectFrom('webhook_events').select('attempts').where('status', '=', PENDING);
  waiting =
    kind === 'webhook'
      ? waiting.where('webhook_id', '=', String(id))
      : waiting.where('device_id', '=', Number(id)).where('webhook_id', 'is', null);
  const row = await db
    .selectFrom(waiting.limit(BACKLOG_CAP).as('waiting'))
    .select((eb) => [
      eb.fn.countAll<number | string>().as('backlog'),
      eb.fn.max<number | string | null>(sql`case when attempts > 0 then 1 else 0 end`).as('failing'),
    ])
    .executeTakeFirstOrThrow();
  return { backlog: Number(row.backlog), failing: Number(row.failing ?? 0) === 1 };
}

/** Every destination's pending deliveries in the gateway (account webhooks and devices' URLs), up to BACKLOG_CAP. */
export async function pendingDeliveries(db: Db): Promise<number> {
  const waiting = db
    .selectFrom('webhook_events')
    .select(sql<number>`1`.as('one'))
    .where('status', '=', PENDING);
  const row = await db
    .selectFrom(waiting.limit(BACKLOG_CAP).as('waiting'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
