/**
 * Which SQL dialect a handle speaks, for the few statements written once per dialect.
 *
 * Owns: that one question. A repository asks it where PostgreSQL has a form SQLite lacks (arrays, LATERAL) and the
 * difference is worth a statement of its own; everything else is written once for both.
 * Must never: be asked for a rule (a behaviour must not differ by store, only how a statement is spelled).
 */
import { PostgresAdapter } from 'kysely';
import type { Db } from './schema.js';

export function onPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
