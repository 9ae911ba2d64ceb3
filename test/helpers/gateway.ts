// Builds a gateway for a test against the store this project runs on
// (TEST_STORE=sqlite: a temp directory holding a copy of the run's migrated
// store file; postgres: a schema made from the run's migrated
// template; either empty when a test asks for a fresh store), with a known API
// token, and tears it all down afterwards.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Clock } from '../../src/clock.js';
import { sqliteFileOf } from '../../src/store/store.js';
import { migratedCopy, migratedSchema, onServer, processDatabaseUrl } from './pg-databases.js';

export const TEST_TOKEN = 'mgw_test_token_for_the_default_account_0000';
export const storeKind = (process.env.TEST_STORE ?? 'sqlite') as 'sqlite' | 'postgres';

export interface StoreLocation {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  drop(): Promise<void>;
}

function pgAdminUrl(): string | null {
  return storeKind === 'postgres' ? inject('pgAdminUrl') : null;
}

/** True when the postgres project has no server (tests are then skipped, loudly, by the global setup). */
export const noStoreAvailable = storeKind === 'postgres' && pgAdminUrl() === null;

export interface LocationOptions {
  /**
   * PostgreSQL: false for an empty schema in this test process's database, as an operator's new store is (tests of
   * migrations, of a first start, of what a fresh store looks like). Otherwise (the default) a schema made from the
   * run's template (test/helpers/pg-databases.ts), already migrated: the same tables a gateway's start-up makes,
   * without paying for them. On SQLite, false for an empty data directory; otherwise the directory holds a copy of
   * the run's migrated store file (test/helpers/sqlite-global.ts), as a gateway's first start would leave it.
   */
  readonly migrated?: boolean;
}

export async function newStoreLocation(options: LocationOptions = {}): Promise<StoreLocation> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-test-'));
  const admin = pgAdminUrl();
  if (storeKind === 'sqlite' || admin === null) {
    // The run's migrated store file (test/helpers/sqlite-global.ts), where this project made one.
    const template = storeKind === 'sqlite' ? inject('sqliteTemplate') : undefined;
    if (options.migrated !== false && template !== undefined)
      await copyFile(template, sqliteFileOf({ databaseUrl: null, dataDir })!);
    return { databaseUrl: null, dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const template = inject('pgTemplate');
  if (options.migrated !== false && template !== null) {
    const made =
      template.dump !== null
        ? await migratedSchema(admin, template.database, template.dump)
        : await migratedCopy(admin, template.database);
    return {
      databaseUrl: made.url,
      dataDir,
      async drop() {
        await made.drop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `gw_test_${randomBytes(6).toString('hex')}`;
  const database = await scratchDatabaseUrl();
  await onServer(database, (c) => c.query(`create schema ${schema}`));
  const url = new URL(database);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    databaseUrl: url.toString(),
    dataDir,
    async drop() {
      await onServer(database, (c) => c.query(`drop schema if exists ${schema} cascade`));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * PostgreSQL: the database where a test makes schemas of its own (an empty store, schemas it churns): this test
 * process's database of the run (test/helpers/pg-databases.ts), or the server's own without a template.
 */
export async function scratchDatabaseUrl(): Promise<string> {
  const admin = pgAdminUrl();
  if (admin === null) throw new Error('scratchDatabaseUrl needs the postgres project with a server');
  const template = inject('pgTemplate');
  return template === null ? admin : processDatabaseUrl(admin, template.database);
}

export function testConfig(location: StoreLocation, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    dataDir: location.dataDir,
    databaseUrl: location.databaseUrl,
    bootstrapToken: TEST_TOKEN,
    serverName: 'test-node',
    logLevel: 'silent',
    ...overrides,
  };
}

export interface Answer<T = any> {
  status: number;
  headers: Record<string, string | number | string[] | undefined>;
  body: T;
}

export interface TestGateway {
  app: FastifyInstance;
  location: StoreLocation;
  config: Config;
  /** Sends a request with the default token unless `token` is given (null: none). */
  request<T = any>(
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    token?: string | null,
  ): Promise<Answer<T>>;
  /** Closes the app; drops the store unless `keepStore`. */
  close(options?: { keepStore?: boolean }): Promise<void>;
}

export interface StartOptions {
  location?: StoreLocation;
  clock?: Clock;
  config?: Partial<Config>;
  build?: Partial<BuildOptions>;
}

export async function startGateway(options: StartOptions = {}): Promise<TestGateway> {
  const location = options.location ?? (await newStoreLocation());
  const config = testConfig(location, options.config);
  const app = await buildApp({ config, logger: false, clock: options.clock, ...options.build });
  let closed = false;
  return {
    app,
    location,
    config,
    async request(method, url, body, token = TEST_TOKEN) {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const response = await app.inject({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { payload: body as object }),
      });
      let parsed: unknown = response.body;
      try {
        parsed = JSON.parse(response.body);
      } catch {
        // Not JSON (metrics, docs): keep the text.
      }
      return { status: response.statusCode, headers: response.headers, body: parsed as never };
    },
    async close({ keepStore = false } = {}) {
      if (closed) return;
      closed = true;
      await app.close();
      if (!keepStore) await location.drop();
    },
  };
}
