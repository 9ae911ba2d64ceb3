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
   * The index webhook claims walk lane by lane was made by migration 013i (PostgreSQL). SQLite's claim scanned the
   * due rows then, and got the same index later, from 013j: this tells the two migrations apart.
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
