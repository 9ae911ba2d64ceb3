/**
 * Which account webhooks an event goes to (docs/webhooks.md, Several webhooks): the account's enabled webhooks,
 * kept in memory per store for a short while, so recording an event (on the hot path of every status change)
 * costs no statement when nothing changed.
 *
 * Owns: the cache of each account's enabled webhooks (read on a miss in the caller's transaction, kept
 * TTL_MS of real time, forgotten at once when this process changes them: another process's change is seen
 * within TTL_MS, as the device directory's), and the match of one webhook against a device and an event type
 * (its device and event filters, and whether its format carries the type).
 * Must never: write, decide anything about the device's own `webhook_url` (record.ts does), or return a
 * webhook's secret or headers (the deliverer reads those with its claim).
 */
import type { Db } from '../store/schema.js';
import { carries, webhookFormat, type WebhookFormat } from './formats/index.js';

/** How long an account's webhooks are trusted here before they are read again. */
export const WEBHOOKS_TTL_MS = 1000;
/** Accounts remembered per store at most (the oldest read is forgotten first). */
const MAX_ACCOUNTS = 10_000;

/** An enabled account webhook, as matching needs it. */
export interface AccountWebhook {
  readonly id: string;
  readonly url: string;
  /** null: every device of the account. */
  readonly devices: ReadonlySet<number> | null;
  /** null: every event type. */
  readonly events: ReadonlySet<string> | null;
  readonly format: WebhookFormat;
}

interface Entry {
  readonly hooks: readonly AccountWebhook[];
  readonly at: number;
}

/**
 * One cache per store. A store is told by its Kysely adapter: one object per Kysely instance, which its
 * transactions share (the same key `prepared` uses for the dialect, one level finer).
 */
const caches = new WeakMap<object, Map<number, Entry>>();

function cacheOf(db: Db): Map<number, Entry> {
  const key = db.getExecutor().adapter;
  let cache = caches.get(key);
  if (cache === undefined) {
    cache = new Map();
    caches.set(key, cache);
  }
  return cache;
}

/** Reads a JSON list stored by the webhooks feature; anything else reads as null (no filter). */
function parseList<T>(text: string | null): T[] | null {
  if (text === null) return null;
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? (value as T[]) : null;
}

async function readHooks(db: Db, accountId: number): Promise<AccountWebhook[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select(['id', 'url', 'devices', 'events', 'format'])
    .where('account_id', '=', accountId)
    .where('enabled', '=', 1)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => {
    const devices = parseList<number>(row.devices);
    const events = parseList<string>(row.events);
    return {
      id: row.id,
      url: row.url,
      devices: devices === null ? null : new Set(devices.map(Number)),
      events: events === null || events.includes('*') ? null : new Set(events),
      format: webhookFormat(row.format),
    };
  });
}

/** The account's enabled webhooks (cached; a miss reads them with `db`, the caller's transaction). */
export async function accountWebhooks(db: Db, accountId: number): Promise<readonly AccountWebhook[]> {
  const cache = cacheOf(db);
  const now = Date.now();
  const hit = cache.get(accountId);
  if (hit !== undefined && now - hit.at < WEBHOOKS_TTL_MS) return hit.hooks;
  const hooks = await readHooks(db, accountId);
  cache.delete(accountId);
  if (cache.size >= MAX_ACCOUNTS) cache.delete(cache.keys().next().value as number);
  cache.set(accountId, { hooks, at: now });
  return hooks;
}

/** The account's webhooks changed here: the next event reads them again. */
export function forgetAccountWebhooks(db: Db, accountId: number): void {
  cacheOf(db).delete(accountId);
}

/** Whether an event of `type` from device `deviceId` goes to `hook`. */
export function matches(hook: AccountWebhook, deviceId: number, type: string): boolean {
  if (hook.devices !== null && !hook.devices.has(deviceId)) return false;
  if (hook.events !== null && !hook.events.has(type)) return false;
  return carries(hook.format, type);
}
