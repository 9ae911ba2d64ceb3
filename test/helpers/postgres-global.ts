// Finds a PostgreSQL server for the postgres project before any test file runs:
// TEST_DATABASE_URL, else the machine's server on 127.0.0.1:5432. Test files
// make their own schemas in it and drop them. With no server at all the
// postgres tests are skipped with a loud message, except under CI, where that
// is a failure.
import { takesConnections } from './pg-reachable.js';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string | null;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await takesConnections(url, 3000)) {
    project.provide('pgAdminUrl', url);
    return;
  }
  const message = `PostgreSQL is not reachable at ${url.replace(/:[^:@/]*@/, ':***@')}; set TEST_DATABASE_URL.`;
  if (process.env.CI) throw new Error(`${message} CI must run the PostgreSQL tests.`);
  console.error(`\n${'!'.repeat(78)}\n!! SKIPPING every PostgreSQL test: ${message}\n${'!'.repeat(78)}\n`);
  project.provide('pgAdminUrl', null);
}
