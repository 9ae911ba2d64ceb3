// A test process's migrated schemas, used again. When a test drops its store,
// the schema is emptied back to what the template holds (every row deleted,
// the template's rows and sequence values written again) and handed to the
// next test of the process that asks for a store, instead of a schema made
// from the dump and dropped each time. Making and dropping one cost the server
// about 86 ms of CPU and the test about 290 ms of waiting (the new tables' and
// indexes' files made, synced and removed); emptying one about 13 ms and 16 ms
// (docs/testing.md, Where the suite's time goes).
//
// A schema is used again only when it is the template's in all but its rows:
// its tables, columns, defaults, indexes, constraints, triggers, functions and
// table options are compared with those of a fresh one. A test that changed
// any of them (a table's options, an index dropped) leaves a schema that is
// dropped, as is one that cannot be emptied (a lock held past the timeout).
// Must never: hand out a schema another store of this process still uses, or
// leave a row of one test where the next can read it.
import type pg from 'pg';

/** A table at least this large is truncated (its files replaced) rather than deleted from (its dead rows kept). */
const TRUNCATE_FROM_BYTES = 256 * 1024;

/** The schema's definition as text, its own name replaced, so that two schemas made from one dump compare equal. */
const DEFINITION = `
  select md5(string_agg(replace(line, $2, '<schema>'), E'\\n' order by line)) as definition from (
    select 'class ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '') as line
      from pg_class c where c.relnamespace = $1::regnamespace
    union all
    select 'column ' || c.relname || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
        || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where c.relnamespace = $1::regnamespace and a.attnum > 0 and not a.attisdropped
    union all
    select 'index ' || pg_get_indexdef(i.indexrelid)
      from pg_index i join pg_class c on c.oid = i.indexrelid where c.relnamespace = $1::regnamespace
    union all
    select 'constraint ' || conname || ' ' || pg_get_constraintdef(oid) from pg_constraint
      where connamespace = $1::regnamespace
    union all
    select 'trigger ' || t.tgenabled::text || ' ' || pg_get_triggerdef(t.oid)
      from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = $1::regnamespace and not t.tgisinternal
    union all
    select 'function ' || p.proname || ' ' || p.prosrc from pg_proc p where p.pronamespace = $1::regnamespace
  ) as lines`;

interface Pool {
  /** Emptied schemas no store uses now. */
  readonly free: string[];
  /** A fresh schema's definition, taken from the first schema this process made. */
  definition: Promise<string> | null;
}

function poolOf(database: string): Pool {
  const held = globalThis as { gwSchemaPools?: Map<string, Pool> };
  held.gwSchemaPools ??= new Map();
  let pool = held.gwSchemaPools.get(database);
  if (pool === undefined) {
    pool = { free: [], definition: null };
    held.gwSchemaPools.set(database, pool);
  }
  return pool;
}

async function definitionOf(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ definition: string }>(DEFINITION, [schema, schema]);
  return rows[0]!.definition;
}

/**
 * The dump's rows and sequence values, as statements for `schema` in place of `dumped` (null when the dump holds a
 * row this cannot read: one that spans lines).
 */
export function templateRows(dump: string, dumped: string, schema: string): string[] | null {
  const lines = dump
    .split('\n')
    .filter((line) => line.startsWith('INSERT INTO ') || line.startsWith('SELECT pg_catalog.setval('));
  if (lines.some((line) => !line.endsWith(');'))) return null;
  return lines.map((line) => line.replaceAll(`${dumped}.`, `${schema}.`));
}

export class SchemaPool {
  private readonly pool: Pool;

  constructor(
    /** Runs `work` on a connection of its own to this process's database (pg-databases.ts, `onServer`). */
    private readonly connected: <T>(work: (client: pg.Client) => Promise<T>) => Promise<T>,
    database: string,
    private readonly dump: string,
    /** The schema the dump was made of. */
    private readonly dumped: string,
  ) {
    this.pool = poolOf(database);
  }

  /** An emptied schema of this process's, or null when there is none. */
  take(): string | null {
    return this.pool.free.pop() ?? null;
  }

  /** Notes a schema just made from the dump, before any test used it: the first gives the template's definition. */
  async made(schema: string): Promise<void> {
    this.pool.definition ??= this.connected((c) => definitionOf(c, schema));
    await this.pool.definition.catch(() => undefined);
  }

  /** Empties `schema` and keeps it for the next store, or drops it where it cannot be used again. */
  async release(schema: string): Promise<void> {
    const emptied = await this.empty(schema).catch(() => false);
    if (emptied) this.pool.free.push(schema);
    else await this.connected((c) => c.query(`drop schema if exists ${schema} cascade`));
  }

  private async empty(schema: string): Promise<boolean> {
    const rows = templateRows(this.dump, this.dumped, schema);
    const expected = await this.pool.definition;
    if (rows === null || expected === undefined || expected === null) return false;
    return this.connected(async (c) => {
      if ((await definitionOf(c, schema)) !== expected) return false;
      const { rows: tables } = await c.query<{ name: string; bytes: string }>(
        `select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
          where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p')`,
        [schema],
      );
      const large = tables.filter((t) => Number(t.bytes) >= TRUNCATE_FROM_BYTES).map((t) => `${schema}."${t.name}"`);
      const small = tables.filter((t) => Number(t.bytes) < TRUNCATE_FROM_BYTES).map((t) => `${schema}."${t.name}"`);
      await c.query(
        [
          'begin',
          `set local lock_timeout = '5s'`,
          // Triggers stay silent: the rows written back are the template's as they are, derived rows included.
          `set local session_replication_role = replica`,
          ...(large.length > 0 ? [`truncate ${large.join(', ')} cascade`] : []),
          ...small.map((table) => `delete from ${table}`),
          ...rows.map((statement) => statement.replace(/;$/, '')),
          'commit',
        ].join(';\n'),
      );
      return true;
    });
  }
}
