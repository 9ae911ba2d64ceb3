/**
 * Statements built once with the query builder, then only bound.
 *
 * The dispatcher writes a status per message (`sent`, `delivered`, `read`),
 * each with a webhook event. Building those statements through Kysely on
 * every call walked the query tree and rendered the SQL each time; at a few
 * thousand messages a second that was about a sixth of the CPU. Here the
 * builder runs once per dialect with a marker in place of each argument; the
 * compiled SQL is kept, and a call binds its arguments where the markers were.
 * Constants written in the builder (`'pending'`, lists for `in`) stay bound
 * as compiled.
 *
 * Owns: the cache of compiled statements (one per dialect per statement).
 * Must never: bind an argument anywhere but where its marker was compiled
 * (a builder that leaves an argument out is refused when compiled).
 */
import { CompiledQuery, type Compilable, type RawBuilder } from 'kysely';
import type { Db } from './schema.js';

/** Stands for the i-th argument while the statement is compiled. */
class Argument {
  constructor(readonly index: number) {}
}

interface Compiled {
  readonly sql: string;
  /** Per bound value: the argument index it takes, or the constant compiled in. */
  readonly slots: ReadonlyArray<{ readonly argument: number } | { readonly constant: unknown }>;
}

export interface PreparedStatement<A extends readonly unknown[], O> {
  /** Runs the statement with these arguments; answers the rows it returned (if any). */
  (db: Db, ...args: A): Promise<O[]>;
}

/**
 * Prepares `build` for repeated use. `build` must use each argument as a
 * value, exactly as it would with real values (never branch on one: it is a
 * marker while compiling), and `arity` must be its number of arguments.
 */
export function prepared<A extends readonly unknown[], O>(
  arity: A['length'],
  build: (db: Db, ...args: A) => Compilable<O>,
): PreparedStatement<A, O> {
  // Keyed by the dialect's adapter class: SQLite and PostgreSQL compile differently, transactions alike.
  const byDialect = new Map<unknown, Compiled>();
  const compile = (db: Db): Compiled => {
    const markers = Array.from({ length: arity }, (_, i) => new Argument(i)) as unknown as A;
    const query = build(db, ...markers).compile();
    const used = new Set<number>();
    const slots = query.parameters.map((value) => {
      if (!(value instanceof Argument)) return { constant: value };
      used.add(value.index);
      return { argument: value.index };
    });
    if (used.size !== arity) throw new Error(`prepared statement binds ${used.size} of its ${arity} arguments`);
    return { sql: query.sql, slots };
  };
  return async (db, ...args) => {
    const dialect = db.getExecutor().adapter.constructor;
    let compiled = byDialect.get(dialect);
    if (compiled === undefined) {
      compiled = compile(db);
      byDialect.set(dialect, compiled);
    }
    const parameters = compiled.slots.map((slot) => ('argument' in slot ? args[slot.argument] : slot.constant));
    const result = await db.executeQuery<O>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows as O[];
  };
}

/** A raw statement (`sql\`…\``) as a builder `prepared` takes, for statements the query builder cannot say. */
export function compiled<O>(db: Db, raw: RawBuilder<O>): Compilable<O> {
  return { compile: () => raw.compile(db) };
}
