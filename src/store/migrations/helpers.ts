/**
 * What migrations need to know about the dialect, as capabilities rather than
 * dialect names scattered through the files.
 */
import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';

export interface MigrationDialect {
  /** Adds an integer primary key the database numbers by itself. */
  idColumn<T extends string>(table: CreateTableBuilder<T, never>, name?: string): CreateTableBuilder<T, never>;
  /** Column type for large binary values. */
  readonly blobType: 'blob' | 'bytea';
  /**
   * Webhook claims read the due deliveries lane by lane, through an index that leads by lane (PostgreSQL,
   * migration 013i): several processes claim there, and a claim's cost must not grow with the backlog of lanes
   * already at their bound. SQLite's one process claims with the one scan.
   */
  readonly laneClaims: boolean;
}

export const sqliteMigrationDialect: MigrationDialect = {
  idColumn: (table, name = 'id') =>
    table.addColumn(name, 'integer', (col: ColumnDefinitionBuilder) => col.primaryKey().autoIncrement()),
  blobType: 'blob',
  laneClaims: false,
};

export const postgresMigrationDialect: MigrationDialect = {
  idColumn: (table, name = 'id') =>
    table.addColumn(name, 'bigint', (col: ColumnDefinitionBuilder) => col.primaryKey().generatedByDefaultAsIdentity()),
  blobType: 'bytea',
  laneClaims: true,
};
