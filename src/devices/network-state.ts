/**
 * The network's persistence port (src/network/state.ts) over the gateway's
 * store: sessions, their keys and their sent-message records, as the sealed
 * bytes the network hands over.
 *
 * Owns: the tables `network_auth`, `network_auth_keys`, `network_sent`,
 * `network_offers`; the
 * single-writer fence (every claim moves it; a write checks it in the same
 * transaction, so a writer that lost its claim changes nothing), and, in a
 * cluster, the device lease's fence checked in that transaction too (a node
 * whose lease moved on writes nothing, even before the new holder claims the
 * session); refusing a write whose connection closed, checked in the same
 * synchronous step as the COMMIT on SQLite, and undoing it (key-preimage.ts)
 * when the connection closed while the COMMIT was on its way (PostgreSQL);
 * deleting a session's state with its device's session.
 * Must never: swallow a failed write (the network must hear of it), write
 * outside one transaction per call, or look inside the values.
 */
import { sql, type ControlledTransaction } from 'kysely';
import type { Clock } from '../clock.js';
import {
  RefusedNetworkStateError,
  StaleNetworkStateError,
  type NetworkKeyChange,
  type NetworkKeyRow,
  type NetworkOffer,
  type NetworkSentRecord,
  type NetworkStateChanges,
  type NetworkStateStore,
  type NetworkStateWriter,
} from '../network/state.js';
import type { Database, Db } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { readPreImage, restorePreImage, type KeyPreImage } from './key-preimage.js';

/** Rows per multi-row statement: far below either database's limit on bound parameters. */
const CHUNK = 200;

/**
 * Deletes at most `limit` rows created before `before` from a table keyed by (session_id, key), in one statement
 * (row values work in both stores), and answers how many went.
 */
async function pruneOlderThan(
  db: Db,
  table: 'network_offers' | 'network_sent',
  key: 'chat' | 'message_id',
  before: number,
  limit: number,
): Promise<number> {
  const result = await sql`
    delete from ${sql.table(table)} where created_at < ${before} and (session_id, ${sql.ref(key)}) in (
      select session_id, ${sql.ref(key)} from ${sql.table(table)} where created_at < ${before} limit ${limit}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** SQL of network state that other transactions (logging a device out, deleting it) take part in. */
export const networkStateRepository = {
  /** Deletes every row of a session, inside the caller's transaction. */
  discard: async (db: Db, session: string): Promise<void> => {
    await db.deleteFrom('network_auth_keys').where('session_id', '=', session).execute();
    await db.deleteFrom('network_sent').where('session_id', '=', session).execute();
    await db.deleteFrom('network_offers').where('session_id', '=', session).execute();
    await db.deleteFrom('network_auth').where('session_id', '=', session).execute();
  },

  /**
   * Sessions no device holds and nobody touched since `before`: pairing attempts that never became a
   * device's (the process stopped mid-attempt). At most `limit`.
   */
  orphans: async (db: Db, before: number, limit: number): Promise<string[]> => {
    const rows = await db
      .selectFrom('network_auth')
      .select('session_id')
      .where('updated_at', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('devices')
              .select('devices.id')
              .whereRef('devices.network_session', '=', 'network_auth.session_id'),
          ),
        ),
      )
      .limit(limit)
      .execute();
    return rows.map((row) => row.session_id);
  },
};

/**
 * Whether this node may still write a session's state (the cluster's fence by the lease of the device that
 * has the session); false refuses the write. Runs inside the write's transaction.
 */
export type SessionFence = (db: Db, session: string) => Promise<boolean>;

/**
 * Commits `trx` unless `live` answers false (then rolls it back and rejects with RefusedNetworkStateError).
 * The answer and the COMMIT are one synchronous step up to the driver: no await lies between them, and Kysely
 * reaches the driver without one, so on SQLite (a synchronous driver) nothing else of the process runs in between.
 * On PostgreSQL the COMMIT is a round trip: a socket closing during it is seen only after it (write() undoes it).
 */
async function commitIfLive(
  trx: ControlledTransaction<Database>,
  live: (() => boolean) | undefined,
  session: string,
): Promise<void> {
  if (live !== undefined && !live()) {
    await trx.rollback().execute();
    throw new RefusedNetworkStateError(session);
  }
  try {
    await trx.commit().execute();
  } catch (error) {
    // A failed COMMIT leaves the connection held by the transaction: ending it gives the connection back.
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
    throw error;
  }
}

class SqlStateWriter implements NetworkStateWriter {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly session: string,
    private readonly fence: number,
    private readonly lease: SessionFence | undefined,
  ) {}

  async readCreds(): Promise<Uint8Array | null> {
    const row = await this.store.db
      .selectFrom('network_auth')
      .select('creds')
      .where('session_id', '=', this.session)
      .executeTakeFirst();
    return row?.creds ?? null;
  }

  async readKeys(kind: string, ids: readonly string[]): Promise<Map<string, Uint8Array>> {
    const found = new Map<string, Uint8Array>();
    for (const part of chunks([...new Set(ids)])) {
      const rows = await this.store.db
        .selectFrom('network_auth_keys')
        .select(['key_id', 'value'])
        .where('session_id', '=', this.session)
        .where('kind', '=', kind)
        .where('key_id', 'in', part)
        .execute();
      for (const row of rows) found.set(row.key_id, row.value);
    }
    return found;
  }

  async scanKeys(after: { kind: string; id: string } | null, limit: number): Promise<NetworkKeyRow[]> {
    let query = this.store.db
      .selectFrom('network_auth_keys')
      .select(['kind', 'key_id', 'value'])
      .where('session_id', '=', this.session);
    if (after !== null) {
      query = query.where((eb) =>
        eb.or([eb('kind', '>', after.kind), eb.and([eb('kind', '=', after.kind), eb('key_id', '>', after.id)])]),
      );
    }
    const rows = await query.orderBy('kind').orderBy('key_id').limit(limit).execute();
    return rows.map((row) => ({ kind: row.kind, id: row.key_id, value: row.value }));
  }

  /** The writes of this writer that carry `live`, one after another: one is undone before the next starts. */
  private liveWrites: Promise<unknown> = Promise.resolve();

  write(changes: NetworkStateChanges): Promise<void> {
    if (changes.live === undefined) return this.writeNow(changes, undefined);
    const live = changes.live;
    const write = this.liveWrites.then(() => this.writeNow(changes, live));
    this.liveWrites = write.catch(() => undefined);
    return write;
  }

  private async writeNow(changes: NetworkStateChanges, live: (() => boolean) | undefined): Promise<void> {
    const keys = changes.keys ?? [];
    // Nothing to start for a connection already gone (its library retries a refused write: each try stays cheap).
    if (live !== undefined && !live()) throw new RefusedNetworkStateError(this.session);
    // The last change of a key within one write wins, as it would have had the changes been written one by one.
    const latest = new Map<string, NetworkKeyChange>();
    for (const change of keys) latest.set(`${change.kind}\u0000${change.id}`, change);
    const upserts = [...latest.values()].filter((c) => c.value !== null);
    const deletes = [...latest.values()].filter((c) => c.value === null);
    // A transaction ended by hand: the liveness check and the COMMIT go in one synchronous step (below).
    const trx = await this.store.db.startTransaction().execute();
    let before: KeyPreImage | null = null;
    try {
      await this.checkFence(trx, changes.creds);
      // What the write replaces, in case its connection closes while the COMMIT is on its way (below).
      if (live !== undefined)
        before = await readPreImage(trx, this.session, [...latest.values()], changes.creds !== undefined);
      for (const part of chunks(upserts)) {
        await trx
          .insertInto('network_auth_keys')
          .values(
            part.map((c) => ({ session_id: this.session, kind: c.kind, key_id: c.id, value: c.value as Uint8Array })),
          )
          .onConflict((oc) =>
            oc.columns(['session_id', 'kind', 'key_id']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
          )
          .execute();
      }
      const deletesByKind = new Map<string, string[]>();
      for (const c of deletes) deletesByKind.set(c.kind, [...(deletesByKind.get(c.kind) ?? []), c.id]);
      for (const [kind, ids] of deletesByKind) {
        for (const part of chunks(ids)) {
          await trx
            .deleteFrom('network_auth_keys')
            .where('session_id', '=', this.session)
            .where('kind', '=', kind)
            .where('key_id', 'in', part)
            .execute();
        }
      }
    } catch (error) {
      await trx.rollback().execute();
      throw error;
    }
    await commitIfLive(trx, live, this.session);
    if (live === undefined || before === null || live()) return;
    // The connection closed while the COMMIT was on its way (a PostgreSQL round trip): whatever the write went with
    // (a decrypted message) cannot reach the network as done any more, so the write is undone and refused, as if
    // the check before the COMMIT had seen the close. A failed undo is the write's error: the network must hear it.
    const image = before;
    await this.store.db.transaction().execute(async (undo) => {
      await this.checkFence(undo);
      await restorePreImage(undo, this.session, image);
    });
    throw new RefusedNetworkStateError(this.session);
  }

  async recordSent(messageId: string, payload: Uint8Array, at: number): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      await this.checkFence(trx);
      await trx
        .insertInto('network_sent')
        .values({ session_id: this.session, message_id: messageId, payload, acked_at: null, created_at: at })
        .onConflict((oc) =>
          oc.columns(['session_id', 'message_id']).doUpdateSet((eb) => ({ payload: eb.ref('excluded.payload') })),
        )
        .execute();
    });
  }

  async markSentAcked(messageId: string, at: number): Promise<void> {
    await this.store.db
      .updateTable('network_sent')
      .set({ acked_at: at })
      .where('session_id', '=', this.session)
      .where('message_id', '=', messageId)
      .where('acked_at', 'is', null)
      .execute();
  }

  async readSent(messageId: string): Promise<NetworkSentRecord | null> {
    const row = await this.store.db
      .selectFrom('network_sent')
      .select(['payload', 'acked_at', 'created_at'])
      .where('session_id', '=', this.session)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row === undefined ? null : { payload: row.payload, ackedAt: row.acked_at, createdAt: row.created_at };
  }

  async scanSent(after: string | null, limit: number): Promise<Array<{ id: string; payload: Uint8Array }>> {
    let query = this.store.db
      .selectFrom('network_sent')
      .select(['message_id', 'payload'])
      .where('session_id', '=', this.session);
    if (after !== null) query = query.where('message_id', '>', after);
    const rows = await query.orderBy('message_id').limit(limit).execute();
    return rows.map((row) => ({ id: row.message_id, payload: row.payload }));
  }

  async recordOffer(chat: string, payload: Uint8Array, at: number): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      await this.checkFence(trx);
      await trx
        .insertInto('network_offers')
        .values({ session_id: this.session, chat, payload, created_at: at })
        .onConflict((oc) =>
          oc
            .columns(['session_id', 'chat'])
            .doUpdateSet((eb) => ({ payload: eb.ref('excluded.payload'), created_at: eb.ref('excluded.created_at') })),
        )
        .execute();
    });
  }

  async readOffer(chat: string, since: number): Promise<NetworkOffer | null> {
    const row = await this.store.db
      .selectFrom('network_offers')
      .select(['payload', 'created_at'])
      .where('session_id', '=', this.session)
      .where('chat', '=', chat)
      .where('created_at', '>=', since)
      .executeTakeFirst();
    return row === undefined ? null : { chat, payload: row.payload, createdAt: Number(row.created_at) };
  }

  async scanOffers(after: string | null, limit: number): Promise<NetworkOffer[]> {
    let query = this.store.db
      .selectFrom('network_offers')
      .select(['chat', 'payload', 'created_at'])
      .where('session_id', '=', this.session);
    if (after !== null) query = query.where('chat', '>', after);
    const rows = await query.orderBy('chat').limit(limit).execute();
    return rows.map((row) => ({ chat: row.chat, payload: row.payload, createdAt: Number(row.created_at) }));
  }

  /**
   * Touches the session row only if this writer's fence is still current. On PostgreSQL the
   * row lock it takes also orders concurrent writers; SQLite's write lock does the same.
   */
  private async checkFence(trx: Db, creds?: Uint8Array): Promise<void> {
    if (this.lease !== undefined && !(await this.lease(trx, this.session)))
      throw new StaleNetworkStateError(this.session);
    const result = await trx
      .updateTable('network_auth')
      .set({ updated_at: this.clock.now(), ...(creds === undefined ? {} : { creds }) })
      .where('session_id', '=', this.session)
      .where('fence', '=', this.fence)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw new StaleNetworkStateError(this.session);
  }
}

export class SqlNetworkStateStore implements NetworkStateStore {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The cluster's lease fence (PostgreSQL); none with one node. */
    private readonly lease?: SessionFence,
  ) {}

  async claim(session: string, options: { readonly create: boolean }): Promise<NetworkStateWriter | null> {
    const now = this.clock.now();
    const fence = await this.store.db.transaction().execute(async (trx) => {
      if (options.create) {
        await trx
          .insertInto('network_auth')
          .values({ session_id: session, creds: null, fence: 0, created_at: now, updated_at: now })
          .onConflict((oc) => oc.column('session_id').doNothing())
          .execute();
      }
      const row = await trx
        .updateTable('network_auth')
        .set((eb) => ({ fence: eb('fence', '+', 1), updated_at: now }))
        .where('session_id', '=', session)
        .returning('fence')
        .executeTakeFirst();
      return row?.fence;
    });
    return fence === undefined ? null : new SqlStateWriter(this.store, this.clock, session, Number(fence), this.lease);
  }

  async discard(session: string): Promise<void> {
    await this.store.db.transaction().execute((trx) => networkStateRepository.discard(trx, session));
  }

  pruneOffers(before: number, limit: number): Promise<number> {
    return pruneOlderThan(this.store.db, 'network_offers', 'chat', before, limit);
  }

  pruneSent(before: number, limit: number): Promise<number> {
    return pruneOlderThan(this.store.db, 'network_sent', 'message_id', before, limit);
  }
}
