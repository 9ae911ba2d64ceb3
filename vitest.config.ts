// The whole suite in one command: store-independent unit tests once, and every
// integration test twice, against SQLite and against PostgreSQL.
import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/helpers/sequencer.js';

const integration = ['test/**/*.test.ts'];
const unitOnly = ['test/**/*.unit.test.ts'];
// The dashboard in a real browser: once, against SQLite (the store is not what it tests).
const browser = ['test/dashboard/**/*.test.ts'];
// End-to-end suites of the built gateway against a stand-in network: once, against SQLite (the store is not what
// they test).
const endToEnd = ['test/e2e/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Four test files at a time, also on 2 cores: most of a file's time is spent waiting (on timers, child
    // processes, PostgreSQL, the browser), not computing. vitest's own default there would be one file at a time,
    // which took 24 minutes; four take about 9. VITEST_MAX_WORKERS overrides it.
    maxWorkers: 4,
    // The longest files first, but no more than two long ones side by side (they mostly wait), from a committed
    // table of each file's duration (test/helpers/sequencer.ts; refresh it with `node scripts/test-durations.js`
    // after a whole run): vitest's own order in a clean clone, by file size, started the unit project's slowest
    // files last, and the run waited for them on one worker.
    sequence: { sequencer: DurationSequencer },
    // Guards against a hang, not measurements (a test that promises a time asserts it itself): a test that starts
    // two gateway processes took up to 20 s with four files at a time on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/helpers/no-leaks.ts'],
    // One line per test file as it finishes, also without a TTY (CI) and when vitest believes an AI agent runs it
    // (its own choice there is a reporter that prints only failures, so a 10-minute run printed nothing until the
    // end). The run still ends with the summary (`Test Files  N passed`, `Tests  N passed`) that CI reads. On a
    // TTY the default reporter adds its live view of the files in flight.
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: unitOnly,
          globalSetup: ['test/helpers/sqlite-global.ts'],
          // One process runs the unit files one after another, keeping what it loaded: a fresh process a file paid
          // its imports again (the whole unit project: 103 s of import before, 40 s after; docs/testing.md, Where
          // the suite's time goes). The setup file (the leak check) still runs for each file, and the files that
          // mock restore their mocks. The integration projects do the same (below).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: integration,
          exclude: [...unitOnly, ...browser],
          env: { TEST_STORE: 'sqlite' },
          // One migrated store file for the run; each test's store is a copy (docs/testing.md).
          globalSetup: ['test/helpers/sqlite-global.ts'],
          // Files share a worker's process, one after another, as in `unit`: each file's own gateway, store, ports
          // and processes, but the modules loaded once (docs/testing.md, Where the suite's time goes: files in one
          // process).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: integration,
          exclude: [...unitOnly, ...browser, ...endToEnd],
          env: { TEST_STORE: 'postgres' },
          globalSetup: ['test/helpers/postgres-global.ts'],
          // As for `sqlite`.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'dashboard',
          include: browser,
          env: { TEST_STORE: 'sqlite' },
          globalSetup: [
            'test/dashboard/build-global.ts',
            'test/dashboard/browser-global.ts',
            'test/helpers/sqlite-global.ts',
          ],
          testTimeout: 90_000,
          hookTimeout: 60_000,
          // As for `sqlite`: each file's own gateway, the modules loaded once a worker (the project's imports summed
          // over its files: 51 s with a fresh process a file). One Chromium for the project (browser-global.ts),
          // each file connected to it with a context per test.
          isolate: false,
        },
      },
    ],
  },
});
