import { describe, expect, it } from 'vitest';
import { AllowList, columnsInExpression } from '../../../src/connectors/schema-common.js';
import { parseFts5, sqliteAffinity } from '../../../src/connectors/schema-sqlite.js';

describe('columnsInExpression', () => {
  const columns = ['id', 'title', 'body', 'Mixed Case', 'text'];

  it('when a to_tsvector index expression is read, then its columns come out in order, literals and casts ignored', () => {
    const expr = "to_tsvector('english'::regconfig, ((title || ' '::text) || body))";
    expect(columnsInExpression(expr, columns)).toEqual(['title', 'body']);
  });

  it('when columns are quoted or coalesced, then they are still found once', () => {
    const expr = `to_tsvector('simple'::regconfig, ((COALESCE("Mixed Case", ''::text) || ' '::text) || COALESCE(title, body, title)))`;
    expect(columnsInExpression(expr, columns)).toEqual(['Mixed Case', 'title', 'body']);
  });

  it('when a string literal contains a column name, then it is not reported', () => {
    expect(columnsInExpression("to_tsvector('english'::regconfig, 'title body'::text)", columns)).toEqual([]);
  });
});

describe('parseFts5', () => {
  it('when the table stores its own content, then its columns and indexed flags are read', () => {
    expect(parseFts5('CREATE VIRTUAL TABLE notes USING fts5(title, body UNINDEXED, tokenize = "porter ascii")')).toEqual({
      columns: [{ name: 'title', indexed: true }, { name: 'body', indexed: false }],
      content: null,
      contentRowid: 'rowid',
    });
  });

  it('when the table has external content, then the content table and rowid column are read', () => {
    expect(parseFts5("create virtual table docs_fts using FTS5(\"title\", body, content='docs', content_rowid='id')")).toEqual({
      columns: [{ name: 'title', indexed: true }, { name: 'body', indexed: true }],
      content: 'docs',
      contentRowid: 'id',
    });
  });

  it('when the virtual table is not FTS5, then null', () => {
    expect(parseFts5('CREATE VIRTUAL TABLE r USING rtree(id, minX, maxX)')).toBeNull();
    expect(parseFts5('CREATE VIRTUAL TABLE f USING fts4(a, b)')).toBeNull();
  });
});

describe('sqliteAffinity', () => {
  it.each([
    ['TEXT', 'TEXT'], ['VARCHAR(255)', 'TEXT'], ['NCHAR(10)', 'TEXT'], ['CLOB', 'TEXT'],
    ['INTEGER', 'INTEGER'], ['BIGINT', 'INTEGER'], ['CHARINT', 'INTEGER'],
    ['', 'BLOB'], ['BLOB', 'BLOB'], ['REAL', 'REAL'], ['DOUBLE', 'REAL'], ['DECIMAL(10,2)', 'NUMERIC'], ['DATETIME', 'NUMERIC'],
  ])('when the declared type is "%s", then the affinity is %s', (declared, affinity) => {
    expect(sqliteAffinity(declared)).toBe(affinity);
  });
});

describe('AllowList', () => {
  const allow = new AllowList(['Products', 'sales.orders']);

  it('when a bare name is listed, then it means the default schema, case-insensitively', () => {
    expect(allow.allows('public', 'products', 'public')).toBe(true);
    expect(allow.allows('other', 'products', 'public')).toBe(false);
  });

  it('when schema.table is listed, then that schema is named and matched', () => {
    expect(allow.schemas()).toEqual(['sales']);
    expect(allow.allows('sales', 'orders', 'public')).toBe(true);
    expect(allow.allows('public', 'orders', 'public')).toBe(false);
  });
});
