import { describe, expect, it } from 'vitest';
import { DIALECTS, type SqlExecutor } from '../../../src/connectors/index.js';
import { contentHash, cursorOf, indexableProblem, MAX_TEXT_CHARS, pageQuery, primaryKeyJson, searchableText, tableId } from '../../../src/semantic/row-text.js';
import { docsTable } from './support.js';

const executor = (engine: 'postgres' | 'mysql' | 'sqlite') => ({ engine, ...DIALECTS[engine] }) as unknown as SqlExecutor;

describe('searchable text and content hash', () => {
  it('when a row is read, then its text columns are joined in schema order, empty ones left out', () => {
    expect(searchableText(docsTable, { id: 1, title: '  Chair ', body: null })).toBe('Chair');
    expect(searchableText(docsTable, { id: 1, title: 'Chair', body: 'Soft seat' })).toBe('Chair\nSoft seat');
    expect(searchableText(docsTable, { id: 1, title: 'x'.repeat(5000), body: 'tail' })).toHaveLength(MAX_TEXT_CHARS);
  });

  it('when the text is the same, then the hash is the same; any change of text changes it', () => {
    const a = contentHash(searchableText(docsTable, { id: 1, title: 'Chair', body: 'Soft seat' }));
    expect(contentHash(searchableText(docsTable, { id: 2, title: 'Chair', body: 'Soft seat' }))).toBe(a);
    expect(contentHash(searchableText(docsTable, { id: 1, title: 'Chair', body: 'Soft seat!' }))).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('when the primary key is taken, then it is JSON in key order with bigints and dates as text', () => {
    const table = { ...docsTable, primaryKey: ['tenant', 'id'] };
    expect(primaryKeyJson(table, { id: 10n, tenant: 'acme', title: 't' })).toBe('{"tenant":"acme","id":"10"}');
    expect(cursorOf(table, { id: 3, tenant: new Date('2026-01-02T03:04:05Z') })).toEqual(['2026-01-02T03:04:05.000Z', 3]);
  });

  it('when a table lacks a primary key or text columns, then it is not indexable', () => {
    expect(indexableProblem(docsTable)).toBeNull();
    expect(indexableProblem({ ...docsTable, primaryKey: [] })).toMatch(/primary key/);
    expect(indexableProblem({ ...docsTable, textColumns: [] })).toMatch(/text columns/);
    expect(tableId({ ...docsTable, schema: 'public' })).toBe('docs');
    expect(tableId({ ...docsTable, schema: 'sales' })).toBe('sales.docs');
  });
});

describe('pageQuery (keyset paging in primary key order)', () => {
  it('when there is no cursor, then the first page is read in key order', () => {
    expect(pageQuery(executor('sqlite'), docsTable, null, 64)).toEqual({ sql: 'SELECT "id", "title", "body" FROM "docs" ORDER BY "id" LIMIT 64', params: [] });
  });

  it('when a cursor is given, then the next page starts after it with bound values, per engine', () => {
    const table = { ...docsTable, name: 'docs`x', schema: 'sales', primaryKey: ['tenant', 'id'] };
    expect(pageQuery(executor('postgres'), table, ['acme', 7], 10)).toEqual({
      sql: 'SELECT "tenant", "id", "title", "body" FROM "sales"."docs`x" WHERE ("tenant", "id") > ($1, $2) ORDER BY "tenant", "id" LIMIT 10',
      params: ['acme', 7],
    });
    expect(pageQuery(executor('mysql'), { ...table, schema: null }, ['acme', 7], 10).sql).toBe(
      'SELECT `tenant`, `id`, `title`, `body` FROM `docs``x` WHERE (`tenant`, `id`) > (?, ?) ORDER BY `tenant`, `id` LIMIT 10',
    );
  });
});
