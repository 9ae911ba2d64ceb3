/**
 * What the migrator sees of a PostgreSQL database: the tables of the store's own schema (`current_schema()`) only.
 *
 * Owns: the listing of tables the migrator uses to find its bookkeeping tables. Kysely's own listing walks every
 * schema of the database and looks each one up by name while it runs, so another process dropping a schema of its
 * own at that moment (another gateway's, a tenant's, a test's) failed the listing with "schema does not exist", and
 * with it the start-up. This one reads the catalogs of one schema and calls no function that looks up names.
 * Must never: list another schema's tables (the migrator would take their bookkeeping for ours); serve anything but
 * the migrator (tables come without their columns).
 */
import {
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Dialect,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map(({ name }) => ({ name }));
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, ns.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(this.db);
    return rows.map(({ name, schema, kind }) => ({ name, schema, isView: kind === 'v', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

/** `dialect`, with the migrator's view of the database narrowed to the store's own schema. */
export function introspectingOwnSchema(dialect: Dialect): Dialect {
  return {
    createDriver: () => dialect.createDriver(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => new OwnSchemaIntrospector(db),
  };
}
