// Which errors are store outages (503 with Retry-After, retried by the workers) and which are not (500).
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { storeFault, StoreTimeoutError } from '../../src/store/faults.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('storeFault', () => {
  it.each([
    ['ECONNREFUSED', 'unavailable'],
    ['ECONNRESET', 'unavailable'],
    ['ETIMEDOUT', 'unavailable'],
    ['57P01', 'unavailable'],
    ['57P03', 'unavailable'],
    ['08006', 'unavailable'],
    ['53300', 'unavailable'],
    ['57014', 'unavailable'],
    ['53100', 'cannot-write'],
    ['25006', 'cannot-write'],
    ['SQLITE_BUSY', 'unavailable'],
    ['SQLITE_BUSY_SNAPSHOT', 'unavailable'],
    ['SQLITE_FULL', 'cannot-write'],
    ['SQLITE_IOERR_WRITE', 'cannot-write'],
    ['SQLITE_READONLY', 'cannot-write'],
    ['SQLITE_READONLY_DBMOVED', 'cannot-write'],
    ['SQLITE_CANTOPEN', 'cannot-write'],
  ])('classifies %s as %s', (code, kind) => {
    expect(storeFault(withCode(code))).toEqual({ code, kind });
  });

  it.each(['23505', '23503', '42P01', '22P02', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'ERR_SOMETHING'])(
    'leaves %s (a fault of the request or the code) alone',
    (code) => {
      expect(storeFault(withCode(code))).toBeNull();
    },
  );

  it('knows node-postgres connection losses by their message, and our own timeouts', () => {
    expect(storeFault(new Error('Connection terminated unexpectedly'))?.kind).toBe('unavailable');
    expect(storeFault(new Error('timeout exceeded when trying to connect'))?.kind).toBe('unavailable');
    expect(storeFault(new StoreTimeoutError('a statement', 6000))).toEqual({
      code: 'STORE_TIMEOUT',
      kind: 'unavailable',
    });
    expect(storeFault(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]))?.code).toBe(
      'ECONNREFUSED',
    );
    expect(storeFault(new Error('something else'))).toBeNull();
    expect(storeFault(null)).toBeNull();
    expect(storeFault('text')).toBeNull();
  });

  it("classifies SQLite's own error for a database that may not grow", () => {
    const db = new Database(':memory:');
    try {
      db.exec('create table t (b blob)');
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      let thrown: unknown;
      try {
        db.prepare('insert into t values (randomblob(100000))').run();
      } catch (error) {
        thrown = error;
      }
      expect(storeFault(thrown)).toEqual({ code: 'SQLITE_FULL', kind: 'cannot-write' });
    } finally {
      db.close();
    }
  });
});
