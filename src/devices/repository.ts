/**
 * SQL for devices.
 *
 * Owns: the `devices` table. Deleted devices stay as rows (their messages
 * remain queryable) but are invisible to every query here except by-id lookups
 * that ask for them.
 * Must never: decide a rule; that is the service's.
 */
import { sql, type Selectable } from 'kysely';
import { onPostgres } from '../store/dialect.js';
import { compiled, prepared } from '../store/prepared.js';
import type { Db, DevicesTable } from '../store/schema.js';

export type DeviceRow = Selectable<DevicesTable>;

// The lookups of every send and status change: built once, then only bound (see store/prepared.ts).

// The number as the paired phone, or as the number a device not yet paired was created for: two index ranges of
// `devices_account_phone`, never the account's whole list (an `or` of the two was read by scanning every device of
// the account: 137 µs a look-up at 1,000 devices, 12% of the gateway's time end to end; bench/README.md).
const findByPhoneStatement = prepared(2, (db, accountId: number, phone: string) =>
  compiled(
    db,
    sql<DeviceRow>`
      select * from (
        select * from devices where account_id = ${accountId} and phone = ${phone} and deleted_at is null
        union all
        select * from devices
        where account_id = ${accountId} and phone is null and expected_phone = ${phone} and deleted_at is null
      ) d
      -- The device paired as the number sends, not a newer one waiting to pair as it (it cannot while the other holds it).
      order by case when paired_status = 'PAIRED' then 0 else 1 end, id desc
      limit 1`,
  ),
);

const findByIdStatement = prepared(1, (db, id: number) => db.selectFrom('devices').selectAll().where('id', '=', id));

/**
 * `findByPhone` of many (account, number) pairs at once (PostgreSQL): each pair's device as the one-pair statement
 * finds it, tagged with the pair's place in the arrays.
 */
const findByPhonesStatement = prepared(2, (db, accountIds: readonly number[], phones: readonly string[]) =>
  compiled(
    db,
    sql<DeviceRow & { lookup: number }>`
      select w.lookup, d.* from unnest(${accountIds}::bigint[], ${phones}::text[]) with ordinality as w(account_id, phone, lookup)
      cross join lateral (
        select * from (
          select * from devices where account_id = w.account_id and phone = w.phone and deleted_at is null
          union all
          select * from devices
          where account_id = w.account_id and phone is null and expected_phone = w.phone and deleted_at is null
        ) one
        order by case when paired_status = 'PAIRED' then 0 else 1 end, id desc limit 1
      ) d`,
  ),
);

/** Many device rows by id at once (PostgreSQL: one array parameter, one text). */
const findByIdsStatement = prepared(1, (db, ids: readonly number[]) =>
  compiled(db, sql<DeviceRow>`select * from devices where id = any(${ids}::bigint[])`),
);

/** What the dispatcher checks of a device before each send, read fresh every time. */
export type SenderState = Pick<DeviceRow, 'status' | 'paired_status' | 'phone' | 'deleted_at'>;

// The send-time guard reads these four columns only: a whole row carries the network's session (on WhatsApp, the
// library's keys as JSON), read and turned into a string for every message sent.
const senderStateStatement = prepared(1, (db, id: number) =>
  compiled(
    db,
    sql<
      SenderState & { id: number }
    >`select id, status, paired_status, phone, deleted_at from devices where id = ${id}`,
  ),
);
const senderStatesStatement = prepared(1, (db, ids: readonly number[]) =>
  compiled(
    db,
    sql<SenderState & { id: number }>`
      select id, status, paired_status, phone, deleted_at from devices where id = any(${ids}::bigint[])`,
  ),
);

export const devicesRepository = {
  countActive: async (db: Db, accountId: number): Promise<number> => {
    const row = await db
      .selectFrom('devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  /** A new device; it has no replaced webhook secret yet. */
  insert: (
    db: Db,
    // The webhook format and reply flag start at their column defaults (standard, off), and so does call
    // rejection (off, no message); no network until paired.
    values: Omit<
      DeviceRow,
      | 'id'
      | 'webhook_secret_previous'
      | 'webhook_secret_previous_until'
      | 'webhook_format'
      | 'webhook_reply'
      | 'network'
      | 'reject_calls'
      | 'reject_calls_message'
      | 'history_synced_at'
    >,
  ): Promise<DeviceRow> => db.insertInto('devices').values(values).returningAll().executeTakeFirstOrThrow(),

  page: (db: Db, accountId: number, limit: number, offset: number): Promise<DeviceRow[]> =>
    db
      .selectFrom('devices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),

  find: (db: Db, accountId: number, id: number): Promise<DeviceRow | undefined> =>
    db
      .selectFrom('devices')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst(),

  findByPhone: async (db: Db, accountId: number, phone: string): Promise<DeviceRow | undefined> =>
    (await findByPhoneStatement(db, accountId, phone))[0],

  /** `findByPhone` of many (account, number) pairs: the answers in the order asked (undefined: none). */
  findByPhones: async (
    db: Db,
    asked: ReadonlyArray<{ readonly accountId: number; readonly phone: string }>,
  ): Promise<Array<DeviceRow | undefined>> => {
    if (!onPostgres(db)) {
      const rows: Array<DeviceRow | undefined> = [];
      for (const { accountId, phone } of asked) rows.push((await findByPhoneStatement(db, accountId, phone))[0]);
      return rows;
    }
    const rows = new Array<DeviceRow | undefined>(asked.length).fill(undefined);
    const found = await findByPhonesStatement(
      db,
      asked.map((a) => a.accountId),
      asked.map((a) => a.phone),
    );
    for (const { lookup, ...row } of found) rows[Number(lookup) - 1] = row;
    return rows;
  },

  findById: async (db: Db, id: number): Promise<DeviceRow | undefined> => (await findByIdStatement(db, id))[0],

  /** `findById` of many devices, by id (deleted ones included; a device not stored has no entry). */
  findByIds: async (db: Db, ids: readonly number[]): Promise<Map<number, DeviceRow>> => {
    const found = new Map<number, DeviceRow>();
    if (onPostgres(db)) {
      for (const row of await findByIdsStatement(db, ids)) found.set(row.id, row);
    } else {
      for (const id of ids) {
        const row = (await findByIdStatement(db, id))[0];
        if (row !== undefined) found.set(id, row);
      }
    }
    return found;
  },

  /** What the send-time guard checks of many devices, by id (a device not stored has no entry). */
  senderStates: async (db: Db, ids: readonly number[]): Promise<Map<number, SenderState>> => {
    const found = new Map<number, SenderState>();
    if (onPostgres(db)) {
      for (const { id, ...state } of await senderStatesStatement(db, ids)) found.set(Number(id), state);
    } else {
      for (const asked of ids) {
        for (const { id, ...state } of await senderStateStatement(db, asked)) found.set(Number(id), state);
      }
    }
    return found;
  },

  /**
   * Replaces the webhook secret in one statement, keeping the replaced one as
   * `previous` until `previousUntil`: two rotations at once each keep what they
   * really replaced, never a secret that was already gone.
   */
  rotateWebhookSecret: (
    db: Db,
    accountId: number,
    id: number,
    secret: string,
    previousUntil: number,
    now: number,
  ): Promise<DeviceRow | undefined> =>
    db
      .updateTable('devices')
      .set((eb) => ({
        webhook_secret_previous: eb.ref('webhook_secret'),
        webhook_secret_previous_until: previousUntil,
        webhook_secret: secret,
        updated_at: now,
      }))
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),

  update: (
    db: Db,
    accountId: number,
    id: number,
    changes: Partial<Omit<DeviceRow, 'id' | 'account_id'>>,
  ): Promise<DeviceRow | undefined> =>
    db
      .updateTable('devices')
      .set(changes)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),

  setConnected: async (db: Db, id: number, connected: boolean, serverName?: string): Promise<void> => {
    await db
      .updateTable('devices')
      .set({ connected: connected ? 1 : 0, ...(serverName === undefined ? {} : { server_name: serverName }) })
      .where('id', '=', id)
      .execute();
  },

  /** The device is no longer held by `serverName`: not connected, unless another node's connection is recorded since. */
  setDisconnectedIfServer: async (db: Db, id: number, serverName: string): Promise<void> => {
    await db
      .updateTable('devices')
      .set({ connected: 0 })
      .where('id', '=', id)
      .where('server_name', '=', serverName)
      .execute();
  },

  /** After a crash `connected` may still be set; nothing of this node is connected until the network says so. */
  clearConnectedOf: async (db: Db, serverName: string): Promise<void> => {
    await db
      .updateTable('devices')
      .set({ connected: 0 })
      .where('connected', '=', 1)
      .where((eb) => eb.or([eb('server_name', '=', serverName), eb('server_name', 'is', null)]))
      .execute();
  },

  /** Devices with a stored session that should be connected. */
  /** Paired devices with a recorded network (docs/networks-per-device.md), oldest first. */
  pairedWithNetwork: (db: Db) =>
    db
      .selectFrom('devices')
      .select(['id', 'name', 'account_id', 'paired_status', 'network'])
      .where('paired_status', '=', 'PAIRED')
      .where('network', 'is not', null)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute(),

  pairedIds: async (db: Db): Promise<number[]> => {
    const rows = await db
      .selectFrom('devices')
      .select('id')
      .where('paired_status', '=', 'PAIRED')
      .where('network_session', 'is not', null)
      .where('deleted_at', 'is', null)
      .where('status', '=', 'ACTIVE')
      .execute();
    return rows.map((row) => row.id);
  },

  /** Another live device of the account already paired with this number. */
  pairedTwin: (db: Db, accountId: number, phone: string, exceptId: number) =>
    db
      .selectFrom('devices')
      .select('id')
      .where('account_id', '=', accountId)
      .where('phone', '=', phone)
      .where('id', '!=', exceptId)
      .where('deleted_at', 'is', null)
      .where('paired_status', '=', 'PAIRED')
      .executeTakeFirst(),

  markPaired: (
    db: Db,
    id: number,
    paired: { phone: string; session: string; network: string },
    serverName: string,
    now: number,
  ) =>
    db
      .updateTable('devices')
      .set({
        phone: paired.phone,
        network_session: paired.session,
        network: paired.network,
        paired_status: 'PAIRED',
        server_name: serverName,
        // A new pairing gets its own history sync (src/messages/history.ts).
        history_synced_at: null,
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  markExpired: async (db: Db, id: number, now: number): Promise<void> => {
    await db.updateTable('devices').set({ paired_status: 'EXPIRED', updated_at: now }).where('id', '=', id).execute();
  },

  /**
   * Session gone: UNPAIRED, and the number falls back to the one the device
   * was created for. Only from PAIRED, in the statement itself: of two
   * logouts racing (the API's and the network's), exactly one gets the row.
   */
  markLoggedOut: (db: Db, id: number, fallbackPhone: string | null, now: number) =>
    db
      .updateTable('devices')
      .set({
        paired_status: 'UNPAIRED',
        network_session: null,
        network: null,
        connected: 0,
        phone: fallbackPhone,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('paired_status', '=', 'PAIRED')
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),
};
