// src/store/sqlite.ts, boundLimits: a bare parameter as LIMIT or OFFSET is prepared as `cast(? as integer)`, so that
// SQLite keeps the statement's plan across runs instead of preparing it again each time its bindings are set. The
// rows are the same; only the statement text changes, and only there.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { boundLimits } from '../../src/store/sqlite.js';

describe('boundLimits', () => {
  it('casts bare LIMIT and OFFSET parameters, whatever their case, and nothing else', () => {
    expect(boundLimits('select * from t where a = ? order by b limit ?')).toBe(
      'select * from t where a = ? order by b limit cast(? as integer)',
    );
    expect(boundLimits('select * from t LIMIT ? OFFSET ?')).toBe(
      'select * from t LIMIT cast(? as integer) OFFSET cast(? as integer)',
    );
    expect(boundLimits('select * from (select * from t limit ?) u where c in (?, ?) limit ?')).toBe(
      'select * from (select * from t limit cast(? as integer)) u where c in (?, ?) limit cast(? as integer)',
    );
    for (const unchanged of [
      'select * from t limit 10',
      'select * from t limit (? + 0)',
      'select delimit ? from t',
      'select * from t where limits = ?',
    ]) {
      expect(boundLimits(unchanged)).toBe(unchanged);
    }
  });

  it('answers the same rows, with the parameters in the same places', () => {
    const db = new Database(':memory:');
    try {
      db.exec('create table t (n integer)');
      const insert = db.prepare('insert into t values (?)');
      for (let n = 1; n <= 20; n++) insert.run(n);
      const sql = 'select n from t where n > ? order by n limit ? offset ?';
      for (const [after, limit, offset] of [
        [0, 5, 0],
        [3, 4, 2],
        [10, 100, 0],
        [0, 0, 0],
        [5, -1, 3],
      ]) {
        expect(db.prepare(boundLimits(sql)).all(after, limit, offset)).toEqual(
          db.prepare(sql).all(after, limit, offset),
        );
      }
    } finally {
      db.close();
    }
  });
});
