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
}

export const sqliteMigrationDialect: MigrationDialect = {
  idColumn: (table, name = 'id') =>
    table.addColumn(name, 'integer', (col: ColumnDefinitionBuilder) => col.primaryKey().autoIncrement()),
  blobType: 'blob',
};

export const postgresMigrationDialect: MigrationDialect = {
  idColumn: (table, name = 'id') =>
    table.addColumn(name, 'bigint', (col: ColumnDefinitionBuilder) => col.primaryKey().generatedByDefaultAsIdentity()),
  blobType: 'bytea',
};
