// The whole suite in one command: store-independent unit tests once, and every
// integration test twice, against SQLite and against PostgreSQL.
import { defineConfig } from 'vitest/config';

const integration = ['test/**/*.test.ts'];
const unitOnly = ['test/**/*.unit.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    setupFiles: ['test/helpers/no-leaks.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: unitOnly } },
      {
        extends: true,
        test: { name: 'sqlite', include: integration, exclude: unitOnly, env: { TEST_STORE: 'sqlite' } },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: integration,
          exclude: unitOnly,
          env: { TEST_STORE: 'postgres' },
          globalSetup: ['test/helpers/postgres-global.ts'],
        },
      },
    ],
  },
});
