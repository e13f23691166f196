import { describe, expect, it } from 'vitest';
import { assertReadOnlySql } from '../../../src/connectors/read-only-guard.js';
import type { Engine } from '../../../src/connectors/types.js';

const ENGINES: Engine[] = ['postgres', 'mysql', 'sqlite'];

function refused(sql: string, engine: Engine): boolean {
  try {
    assertReadOnlySql(sql, engine);
    return false;
  } catch (err) {
    expect(err).toMatchObject({ code: 'DATABASE_ERROR', details: { reason: 'not_read_only' } });
    return true;
  }
}

describe('assertReadOnlySql', () => {
  it.each(ENGINES)('when one SELECT, WITH or VALUES statement is given on %s, then it passes', (engine) => {
    for (const sql of [
      'SELECT 1',
      '  select * from t where a = ? ;  ',
      '(SELECT 1) UNION (SELECT 2)',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      'VALUES (1), (2)',
      "SELECT 'it''s; DELETE FROM t' AS s",
      'SELECT 1 /* ; DROP TABLE t */',
      "SELECT 1 -- ; DROP TABLE t\n",
    ]) {
      expect(refused(sql, engine), sql).toBe(false);
    }
  });

  it.each(ENGINES)('when a write or DDL statement is given on %s, then it is refused', (engine) => {
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'UPDATE t SET a = 1',
      'DELETE FROM t',
      'CREATE TABLE x (a int)',
      'DROP TABLE t',
      'ALTER TABLE t ADD b int',
      'TRUNCATE t',
      'VACUUM',
      "VACUUM INTO '/tmp/copy.db'",
      "ATTACH DATABASE '/tmp/x.db' AS x",
      'PRAGMA query_only = OFF',
      'SET SESSION TRANSACTION READ WRITE',
      'BEGIN',
      'COMMIT',
      'GRANT ALL ON t TO u',
      '',
      '   ;',
    ]) {
      expect(refused(sql, engine), sql).toBe(true);
    }
  });

  it.each(ENGINES)('when a second statement follows the first on %s, then it is refused', (engine) => {
    expect(refused('SELECT 1; DELETE FROM t', engine)).toBe(true);
    expect(refused('SELECT 1;DELETE FROM t;', engine)).toBe(true);
    expect(refused("SELECT ';'; DELETE FROM t", engine)).toBe(true);
  });

  it('when a PostgreSQL dollar-quoted or E-string hides a semicolon, then it is understood', () => {
    expect(refused('SELECT $$a; b$$', 'postgres')).toBe(false);
    expect(refused('SELECT $tag$ ; DELETE $tag$', 'postgres')).toBe(false);
    expect(refused("SELECT E'\\'; DELETE FROM t --'", 'postgres')).toBe(false);
    expect(refused("SELECT E'\\'; DELETE FROM t", 'postgres')).toBe(true);
    expect(refused('SELECT $1::text; DELETE FROM t', 'postgres')).toBe(true);
    expect(refused('SELECT /* nested /* ; */ still comment */ 1', 'postgres')).toBe(false);
  });

  it('when a MySQL string uses backslash escapes, then the guard reads it as MySQL does', () => {
    expect(refused("SELECT 'a\\'; DELETE FROM t; -- '", 'mysql')).toBe(false);
    expect(refused("SELECT 'a\\'; DELETE FROM t", 'mysql')).toBe(true);
  });

  it('when MySQL syntax would hide a statement from a naive reader, then it is refused', () => {
    expect(refused('SELECT 1 /*! ; DELETE FROM t */', 'mysql')).toBe(true);
    expect(refused('SELECT 1 /*M!100000 INTO OUTFILE "/tmp/x" */', 'mysql')).toBe(true);
    expect(refused("SELECT * FROM t INTO OUTFILE '/tmp/x'", 'mysql')).toBe(true);
    expect(refused("SELECT * FROM t INTO DUMPFILE '/tmp/x'", 'mysql')).toBe(true);
    expect(refused('SELECT 1 --1; DELETE FROM t', 'mysql')).toBe(true);
    expect(refused('SELECT 1 # ; DELETE FROM t\n', 'mysql')).toBe(false);
  });

  it('when a quote or comment is left open, then it is refused', () => {
    for (const engine of ENGINES) {
      expect(refused("SELECT 'open", engine)).toBe(true);
      expect(refused('SELECT 1 /* open', engine)).toBe(true);
    }
    expect(refused('SELECT $$open', 'postgres')).toBe(true);
  });
});
