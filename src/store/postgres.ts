/**
 * The PostgreSQL dialect of the store: a node-postgres pool.
 *
 * Owns: the pool and how PostgreSQL values come back to JavaScript.
 * Must never: return 64-bit integers as strings to the rest of the code (all
 * our BIGINT values are epoch milliseconds or ids well inside 2^53).
 */
import pg from 'pg';
import { PostgresDialect } from 'kysely';

pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openPostgres(url: string, poolSize = 10): { dialect: PostgresDialect; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return { dialect: new PostgresDialect({ pool }), pool };
}
