import { describe, expect, it } from 'vitest';
import type { components } from '../../../generated/openapi.js';
import { findCachedTable, fullTextIndexStatement } from '../../../src/sql-search/fulltext-statements.js';

type TableSchema = components['schemas']['TableSchema'];

const table = (over: Partial<TableSchema>): TableSchema => ({
  name: 'products', schema: null, primaryKey: ['id'], rowEstimate: 10,
  columns: [{ name: 'id', type: 'integer', searchable: false }, { name: 'name', type: 'text', searchable: true }, { name: 'description', type: 'text', searchable: true }],
  textColumns: ['name', 'description'], fullTextIndexes: [], ...over,
});

describe('fullTextIndexStatement', () => {
  it('when the engine is PostgreSQL, then a GIN index over to_tsvector of every text column', () => {
    expect(fullTextIndexStatement('postgres', { table: 'products', schema: table({ schema: 'public' }) })).toBe(
      "CREATE INDEX products_fts ON products USING GIN (to_tsvector('english', coalesce(name, '') || ' ' || coalesce(description, '')))",
    );
  });

  it('when a PostgreSQL name needs quoting or a schema other than public, then it is quoted and qualified', () => {
    const schema = table({ name: 'Order Lines', schema: 'sales', textColumns: ['Note'] });
    expect(fullTextIndexStatement('postgres', { table: 'sales.Order Lines', schema })).toBe(
      `CREATE INDEX order_lines_fts ON sales."Order Lines" USING GIN (to_tsvector('english', coalesce("Note", '')))`,
    );
  });

  it('when the engine is MySQL, then ALTER TABLE ... ADD FULLTEXT INDEX over the text columns', () => {
    expect(fullTextIndexStatement('mysql', { table: 'products', schema: table({}) })).toBe('ALTER TABLE products ADD FULLTEXT INDEX products_fts (name, description)');
    expect(fullTextIndexStatement('mysql', { table: 'my-table', schema: table({ name: 'my-table', textColumns: ['body'] }) })).toBe(
      'ALTER TABLE `my-table` ADD FULLTEXT INDEX my_table_fts (body)',
    );
  });

  it('when the engine is SQLite, then an external-content FTS5 table and its rebuild; rowid unless an INTEGER key', () => {
    const withKey = table({ columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'name', type: 'TEXT', searchable: true }], textColumns: ['name'] });
    expect(fullTextIndexStatement('sqlite', { table: 'products', schema: withKey })).toBe(
      "CREATE VIRTUAL TABLE products_fts USING fts5(name, content='products', content_rowid='id'); INSERT INTO products_fts(products_fts) VALUES ('rebuild')",
    );
    const textKey = table({ primaryKey: ['sku'], columns: [{ name: 'sku', type: 'TEXT', searchable: true }], textColumns: ['sku'] });
    expect(fullTextIndexStatement('sqlite', { table: 'products', schema: textKey })).toBe(
      "CREATE VIRTUAL TABLE products_fts USING fts5(sku, content='products'); INSERT INTO products_fts(products_fts) VALUES ('rebuild')",
    );
  });

  it('when the schema is unknown or has no text column, then no statement (the insight names the table only)', () => {
    expect(fullTextIndexStatement('postgres', { table: 'products', schema: null })).toBeNull();
    expect(fullTextIndexStatement('mysql', { table: 'products', schema: table({ textColumns: [] }) })).toBeNull();
  });
});

describe('findCachedTable', () => {
  const cache = [table({ name: 'Products', schema: 'public' }), table({ name: 'products', schema: 'archive' })];

  it('when named exactly, case-insensitively or with a schema, then that table', () => {
    expect(findCachedTable(cache, 'Products')?.schema).toBe('public');
    expect(findCachedTable(cache, 'archive.products')?.schema).toBe('archive');
    expect(findCachedTable(cache, 'PRODUCTS')?.name).toBe('Products');
    expect(findCachedTable(cache, 'orders')).toBeNull();
    expect(findCachedTable(null, 'products')).toBeNull();
  });
});
