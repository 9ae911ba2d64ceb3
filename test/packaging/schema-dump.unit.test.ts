// test/helpers/pg-databases.ts: a PostgreSQL test store is made from the dump of the run's migrated template schema,
// its name replaced and psql's own commands left out.
import { describe, expect, it } from 'vitest';
import { TEMPLATE_SCHEMA, schemaFromDump } from '../helpers/pg-databases.js';

describe('a test schema made from the template dump', () => {
  const dump = [
    '\\restrict abc',
    `SELECT pg_catalog.set_config('search_path', '', false);`,
    `CREATE SCHEMA ${TEMPLATE_SCHEMA};`,
    `CREATE TABLE ${TEMPLATE_SCHEMA}.messages (id bigint);`,
    `CREATE TRIGGER t AFTER INSERT ON ${TEMPLATE_SCHEMA}.events EXECUTE FUNCTION ${TEMPLATE_SCHEMA}.f();`,
    `INSERT INTO ${TEMPLATE_SCHEMA}.kysely_migration VALUES ('001-${TEMPLATE_SCHEMA}s', '2026');`,
    `SELECT pg_catalog.setval('${TEMPLATE_SCHEMA}.messages_seq_seq', 1, false);`,
    '\\unrestrict abc',
  ].join('\n');

  it('names the new schema wherever the template schema was named, and nothing else', () => {
    const made = schemaFromDump(dump, 'gw_test_1');
    expect(made).toContain('CREATE SCHEMA gw_test_1;');
    expect(made).toContain('CREATE TABLE gw_test_1.messages (id bigint);');
    expect(made).toContain('ON gw_test_1.events EXECUTE FUNCTION gw_test_1.f();');
    expect(made).toContain(`setval('gw_test_1.messages_seq_seq'`);
    // A longer word that only begins with the template's name is left alone.
    expect(made).toContain(`'001-${TEMPLATE_SCHEMA}s'`);
    expect(made).not.toMatch(new RegExp(`\\b${TEMPLATE_SCHEMA}\\b`));
  });

  it('leaves out psql’s own commands, which the server would refuse', () => {
    expect(
      schemaFromDump(dump, 'gw_test_1')
        .split('\n')
        .filter((line) => line.startsWith('\\')),
    ).toEqual([]);
  });
});
