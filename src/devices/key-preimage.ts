/**
 * What a network key write replaced, so the write can be undone after its COMMIT.
 *
 * Owns: reading, inside a key write's own transaction, the stored values of the keys the write is about to change
 * (and the session's credentials when it changes them), and writing exactly those back (keys that did not exist
 * are deleted again). network-state.ts undoes a write this way when the connection that made it closed while the
 * COMMIT was on its way (docs/whatsapp.md, "Nothing received is lost").
 * Must never: run outside the caller's transaction (the session row's lock, taken by the fence check before it,
 * keeps every other writer of the session out between the read and the write), look inside the values, or undo
 * more than the one write it was read for.
 */
import type { Db } from '../store/schema.js';
import type { NetworkKeyChange } from '../network/state.js';

/** Rows per statement: far below either database's limit on bound parameters. */
const CHUNK = 200;

export interface KeyPreImage {
  /** Keys that existed before the write, with their values then. */
  readonly present: ReadonlyArray<{ readonly kind: string; readonly id: string; readonly value: Uint8Array }>;
  /** Keys the write changed that did not exist before it. */
  readonly absent: ReadonlyArray<{ readonly kind: string; readonly id: string }>;
  /** The credentials before the write, when the write changes them (null: none were stored). */
  readonly creds?: Uint8Array | null;
}

/** The stored values of the keys in `changes` (and the credentials, with `creds`), read inside `trx`. */
export async function readPreImage(
  trx: Db,
  session: string,
  changes: readonly NetworkKeyChange[],
  creds: boolean,
): Promise<KeyPreImage> {
  const byKind = new Map<string, string[]>();
  for (const c of changes) byKind.set(c.kind, [...(byKind.get(c.kind) ?? []), c.id]);
  const present: Array<{ kind: string; id: string; value: Uint8Array }> = [];
  const absent: Array<{ kind: string; id: string }> = [];
  for (const [kind, ids] of byKind) {
    const found = new Map<string, Uint8Array>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await trx
        .selectFrom('network_auth_keys')
        .select(['key_id', 'value'])
        .where('session_id', '=', session)
        .where('kind', '=', kind)
        .where('key_id', 'in', ids.slice(i, i + CHUNK))
        .execute();
      for (const row of rows) found.set(row.key_id, row.value);
    }
    for (const id of ids) {
      const value = found.get(id);
      if (value === undefined) absent.push({ kind, id });
      else present.push({ kind, id, value });
    }
  }
  if (!creds) return { present, absent };
  const row = await trx.selectFrom('network_auth').select('creds').where('session_id', '=', session).executeTakeFirst();
  return { present, absent, creds: row?.creds ?? null };
}

/** Puts back what `image` read, inside `trx` (whose fence the caller checked). */
export async function restorePreImage(trx: Db, session: string, image: KeyPreImage): Promise<void> {
  for (let i = 0; i < image.present.length; i += CHUNK) {
    await trx
      .insertInto('network_auth_keys')
      .values(
        image.present
          .slice(i, i + CHUNK)
          .map((k) => ({ session_id: session, kind: k.kind, key_id: k.id, value: k.value })),
      )
      .onConflict((oc) =>
        oc.columns(['session_id', 'kind', 'key_id']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })),
      )
      .execute();
  }
  const byKind = new Map<string, string[]>();
  for (const k of image.absent) byKind.set(k.kind, [...(byKind.get(k.kind) ?? []), k.id]);
  for (const [kind, ids] of byKind) {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await trx
        .deleteFrom('network_auth_keys')
        .where('session_id', '=', session)
        .where('kind', '=', kind)
        .where('key_id', 'in', ids.slice(i, i + CHUNK))
        .execute();
    }
  }
  if (image.creds !== undefined) {
    await trx.updateTable('network_auth').set({ creds: image.creds }).where('session_id', '=', session).execute();
  }
}
