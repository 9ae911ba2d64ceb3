/**
 * Multi-row INSERTs whose SQL is built once, not per call.
 *
 * Building a 50-row INSERT through the query builder walks every value of
 * every row; on the acceptance path that was a tenth of each request's CPU.
 * Here the statement for n rows is compiled once per dialect (with Kysely, so
 * quoting and placeholders stay the dialect's); later calls only bind the
 * values. Row counts are split into powers of two, so a table needs at most a
 * handful of statement shapes (and prepared statements) however batches vary.
 *
 * Owns: the column order of the bound values and the template cache.
 * Must never: bind a value under a column other than its own (the column list
 * is fixed and every row is read by name).
 */
import { CompiledQuery } from 'kysely';
import type { Database, Db } from './schema.js';

/** The largest statement: 256 rows of ~20 columns stays under SQLite's 32,766 bound values. */
const MAX_ROWS_PER_STATEMENT = 256;

export class BulkInsert<T extends string & keyof Database, R extends Record<string, unknown>> {
  /** Keyed by the dialect's adapter class (as in prepared.ts), then by row count. */
  private readonly templates = new Map<unknown, Map<number, CompiledQuery>>();

  constructor(
    private readonly table: T,
    private readonly columns: ReadonlyArray<string & keyof R>,
  ) {}

  async run(db: Db, rows: readonly R[]): Promise<void> {
    if (rows.length === 0) return;
    const shapes = this.shapesFor(db);
    for (let start = 0; start < rows.length;) {
      let n = MAX_ROWS_PER_STATEMENT;
      while (n > rows.length - start) n >>= 1;
      let template = shapes.get(n);
      if (template === undefined) {
        template = this.compile(db, n);
        shapes.set(n, template);
      }
      const parameters: unknown[] = new Array(n * this.columns.length);
      let p = 0;
      for (let r = start; r < start + n; r++) {
        const row = rows[r]!;
        // A column the row leaves out (one added by a later migration) is stored as null.
        for (const column of this.columns) parameters[p++] = row[column] ?? null;
      }
      await db.executeQuery(CompiledQuery.raw(template.sql, parameters));
      start += n;
    }
  }

  private shapesFor(db: Db): Map<number, CompiledQuery> {
    const key = db.getExecutor().adapter.constructor;
    let shapes = this.templates.get(key);
    if (shapes === undefined) {
      shapes = new Map();
      this.templates.set(key, shapes);
    }
    return shapes;
  }

  private compile(db: Db, n: number): CompiledQuery {
    const row = Object.fromEntries(this.columns.map((column) => [column, null]));
    const rows = Array.from({ length: n }, () => row);
    // The placeholder rows only give the statement its shape; the types of the values do not matter here.
    const compiled = db
      .insertInto(this.table)
      .values(rows as never)
      .compile();
    if (compiled.parameters.length !== n * this.columns.length) {
      throw new Error(
        `BulkInsert(${this.table}): the statement binds ${compiled.parameters.length} values, not ${n} × ${this.columns.length}`,
      );
    }
    return compiled;
  }
}
