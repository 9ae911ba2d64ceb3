// The whole suite in one command: store-independent unit tests once, and every
// integration test twice, against SQLite and against PostgreSQL.
import { defineConfig } from 'vitest/config';

const integration = ['test/**/*.test.ts'];
const unitOnly = ['test/**/*.unit.test.ts'];
// The dashboard in a real browser: once, against SQLite (the store is not what it tests).
const browser = ['test/dashboard/**/*.test.ts'];

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
        test: {
          name: 'sqlite',
          include: integration,
          exclude: [...unitOnly, ...browser],
          env: { TEST_STORE: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: integration,
          exclude: [...unitOnly, ...browser],
          env: { TEST_STORE: 'postgres' },
          globalSetup: ['test/helpers/postgres-global.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'dashboard',
          include: browser,
          env: { TEST_STORE: 'sqlite' },
          globalSetup: ['test/dashboard/build-global.ts'],
          testTimeout: 90_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
