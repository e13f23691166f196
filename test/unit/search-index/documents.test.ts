import sqlite3 from 'sqlite3';
import { describe, expect, it } from 'vitest';
import { DIALECTS, type SqlExecutor, type TableSchema } from '../../../src/connectors/index.js';
import {
  contentTables, cursorOf, existingKeysQuery, fieldValue, headingColumn, indexableProblem, indexRowOf, MAX_FIELD_CHARS,
  MAX_INDEX_TEXT_CHARS, MAX_KEY_CHARS, MAX_ROW_BYTES, pageKeysQuery, pageQuery, pageSizesQuery, rowId, tableId,
} from '../../../src/search-index/documents.js';
import { docsTable } from './support.js';

type Engine = SqlExecutor['engine'];

/** Only the engine's quoting and placeholders matter to the statement builders. */
const executor = (engine: Engine): SqlExecutor => ({
  engine, ...DIALECTS[engine], query: () => Promise.reject(new Error('statements are only built here')),
});

const table = (overrides: Partial<TableSchema> = {}): TableSchema => ({ ...docsTable, ...overrides });

const composite = table({
  name: 'lines', schema: 'shop', primaryKey: ['order_id', 'line'],
  columns: [
    { name: 'order_id', type: 'integer', searchable: false },
    { name: 'line', type: 'integer', searchable: false },
    { name: 'note', type: 'text', searchable: true },
    { name: 'search', type: 'tsvector', searchable: false },
  ],
  textColumns: ['note'],
});

describe('indexRowOf', () => {
  const row = { id: 7, title: ' Kettle ', body: 'Descale it with vinegar', views: 12 };

  it('when a row is indexed, then its text is the text columns joined, and its fields and key are JSON', () => {
    const indexed = indexRowOf('itb_1', table(), row)!;
    expect(indexed).toMatchObject({ src: 'itb_1', pk: '{"id":7}', text: 'Kettle\nDescale it with vinegar' });
    expect(JSON.parse(indexed.fields)).toEqual(row);
    expect(indexed.rid).toBe(rowId('itb_1', '{"id":7}'));
    expect(indexed.rid).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('when a table has several text columns, then the first is the heading; with one, there is none', () => {
    expect(headingColumn(table())).toBe('title');
    expect(indexRowOf('itb_1', table(), row)!.head).toBe('Kettle');
    expect(headingColumn(composite)).toBeNull();
    expect(indexRowOf('itb_1', composite, { order_id: 1, line: 2, note: 'Gift wrap' })!.head).toBe('');
  });

  it('when the text columns change order, then the heading follows the first one and the row is written again', () => {
    const swapped = table({ textColumns: ['body', 'title'] });
    const before = indexRowOf('itb_1', table(), row)!;
    const after = indexRowOf('itb_1', swapped, row)!;
    expect(after.text).toBe('Descale it with vinegar\nKettle');
    expect(after.head).toBe('Descale it with vinegar');
    expect(after.hash).not.toBe(before.hash);
  });

  it('when the text changes, then both hashes change and the id stays', () => {
    const before = indexRowOf('itb_1', table(), row)!;
    const after = indexRowOf('itb_1', table(), { ...row, body: 'Descale it with citric acid' })!;
    expect(after.rid).toBe(before.rid);
    expect(after.hash).not.toBe(before.hash);
    expect(after.thash).not.toBe(before.thash);
  });

  it('when only a field outside the text changes, then the row hash changes but the text hash (and so its vector) stays', () => {
    const before = indexRowOf('itb_1', table(), row)!;
    const after = indexRowOf('itb_1', table(), { ...row, views: 13 })!;
    expect(after.hash).not.toBe(before.hash);
    expect(after.thash).toBe(before.thash);
    expect(indexRowOf('itb_1', table(), { ...row })!.hash).toBe(before.hash);
  });

  it('when the same key is in another table, or another key in the same table, then the id differs', () => {
    const a = indexRowOf('itb_1', table(), row)!.rid;
    expect(indexRowOf('itb_2', table(), row)!.rid).not.toBe(a);
    expect(indexRowOf('itb_1', table(), { ...row, id: 8 })!.rid).not.toBe(a);
  });

  it('when the primary key is longer than MAX_KEY_CHARS as JSON, then the row is not indexed', () => {
    const keyed = table({ primaryKey: ['title'] });
    const fits = 'k'.repeat(MAX_KEY_CHARS - '{"title":""}'.length);
    expect(indexRowOf('itb_1', keyed, { ...row, title: fits })).not.toBeNull();
    expect(indexRowOf('itb_1', keyed, { ...row, title: `${fits}k` })).toBeNull();
  });

  it('when text is empty, null or bytes, then it adds nothing; very long text is cut', () => {
    expect(indexRowOf('itb_1', table(), { id: 1, title: '   ', body: null })!.text).toBe('');
    expect(indexRowOf('itb_1', table(), { id: 1, title: Buffer.from('secret'), body: 'b' })!.text).toBe('b');
    expect(indexRowOf('itb_1', table(), { id: 1, title: 'x'.repeat(MAX_INDEX_TEXT_CHARS + 10), body: '' })!.text).toHaveLength(MAX_INDEX_TEXT_CHARS);
  });

  it('when a table has a tsvector column, then its fields leave it out and its composite key keeps key order', () => {
    const indexed = indexRowOf('itb_1', composite, { line: 2, order_id: 10, note: 'gift wrap', search: "'gift':1" })!;
    expect(indexed.pk).toBe('{"order_id":10,"line":2}');
    expect(JSON.parse(indexed.fields)).toEqual({ order_id: 10, line: 2, note: 'gift wrap' });
  });
});

describe('fieldValue', () => {
  it('when a value is not plain JSON, then it becomes the text a result shows', () => {
    expect(fieldValue(new Date('2026-11-25T10:00:00Z'))).toBe('2026-11-25T10:00:00.000Z');
    expect(fieldValue(new Date('not a date'))).toBeNull();
    expect(fieldValue(42n)).toBe(42);
    expect(fieldValue(2n ** 63n)).toBe('9223372036854775808');
    expect(fieldValue(Buffer.from('hi'))).toBe('aGk=');
    expect(fieldValue(undefined)).toBeNull();
    expect(fieldValue(null)).toBeNull();
    expect(fieldValue(true)).toBe(true);
    expect(fieldValue(1.5)).toBe(1.5);
  });

  it('when a text is longer than MAX_FIELD_CHARS, then the stored copy is cut', () => {
    expect(fieldValue('y'.repeat(MAX_FIELD_CHARS + 1))).toBe('y'.repeat(MAX_FIELD_CHARS));
    expect(fieldValue('short')).toBe('short');
  });
});

describe('pageKeysQuery', () => {
  it('when the first page of a single-key table is read, then it is ordered by the key with no cursor', () => {
    expect(pageKeysQuery(executor('sqlite'), table(), null, 500)).toEqual({ sql: 'SELECT "id" FROM "docs" ORDER BY "id" LIMIT 500', params: [] });
  });

  it.each([
    ['sqlite', 'SELECT "id" FROM "docs" WHERE "id" > ? ORDER BY "id" LIMIT 100'],
    ['mysql', 'SELECT `id` FROM `docs` WHERE `id` > ? ORDER BY `id` LIMIT 100'],
    ['postgres', 'SELECT "id" FROM "docs" WHERE "id" > $1 ORDER BY "id" LIMIT 100'],
  ] as const)('when a %s page follows a cursor, then it reads the rows after it', (engine, sql) => {
    expect(pageKeysQuery(executor(engine), table(), [41], 100)).toEqual({ sql, params: [41] });
  });

  it('when a composite key on PostgreSQL is paged, then the row value comparison is used and the name is schema-qualified', () => {
    expect(pageKeysQuery(executor('postgres'), composite, [10, 2], 50)).toEqual({
      sql: 'SELECT "order_id", "line" FROM "shop"."lines" WHERE ("order_id", "line") > ($1, $2) ORDER BY "order_id", "line" LIMIT 50',
      params: [10, 2],
    });
  });

  it('when a page size is fractional or zero, then it is a whole number of at least one', () => {
    expect(pageKeysQuery(executor('mysql'), table(), null, 0).sql).toMatch(/LIMIT 1$/);
    expect(pageQuery(executor('mysql'), table(), null, 2.7).sql).toMatch(/LIMIT 2$/);
  });

  it('when an identifier holds a quote, then it is quoted by the engine, never closed early', () => {
    const odd = table({ name: 'we"ird', primaryKey: ['i`d'], columns: [{ name: 'i`d', type: 'INTEGER', searchable: false }] });
    expect(pageKeysQuery(executor('sqlite'), odd, null, 1).sql).toBe('SELECT "i`d" FROM "we""ird" ORDER BY "i`d" LIMIT 1');
    expect(pageKeysQuery(executor('mysql'), odd, null, 1).sql).toBe('SELECT `i``d` FROM `we"ird` ORDER BY `i``d` LIMIT 1');
  });
});

describe('pageQuery: every value cut in SQL', () => {
  const textCut = `${MAX_INDEX_TEXT_CHARS}`;
  const fieldCut = `${MAX_FIELD_CHARS}`;

  it('when a SQLite page is read, then text and blobs are cut with substr (to the indexed text for text columns), keys are not', () => {
    const { sql } = pageQuery(executor('sqlite'), table(), [41], 100);
    expect(sql).toContain('SELECT "id" AS "id", ');
    expect(sql).toContain(`CASE WHEN typeof("body") IN ('text', 'blob') THEN substr("body", 1, ${textCut}) ELSE "body" END AS "body"`);
    expect(sql).toContain(`CASE WHEN typeof("views") IN ('text', 'blob') THEN substr("views", 1, ${fieldCut}) ELSE "views" END AS "views"`);
    expect(sql).toMatch(new RegExp(`WHERE "id" > \\? AND \\(.*\\) <= ${MAX_ROW_BYTES} ORDER BY "id" LIMIT 100$`));
  });

  it('when a MySQL page is read, then text columns are cut with LEFT, numbers read as they are, JSON only when it fits', () => {
    const mixed = table({
      columns: [
        { name: 'id', type: 'int(11)', searchable: false },
        { name: 'title', type: 'varchar(200)', searchable: true },
        { name: 'body', type: 'longtext', searchable: true },
        { name: 'views', type: 'bigint(20)', searchable: false },
        { name: 'photo', type: 'longblob', searchable: false },
        { name: 'meta', type: 'json', searchable: false },
      ],
    });
    const { sql } = pageQuery(executor('mysql'), mixed, null, 10);
    expect(sql).toContain(`LEFT(\`body\`, ${textCut}) AS \`body\``);
    expect(sql).toContain(`LEFT(\`photo\`, ${fieldCut}) AS \`photo\``);
    expect(sql).toContain('`views` AS `views`');
    expect(sql).toContain(`CASE WHEN LENGTH(\`meta\`) <= ${fieldCut} THEN \`meta\` END AS \`meta\``);
  });

  it('when a PostgreSQL page is read, then text is cut with left(), bytes with substring, other types only read when they fit', () => {
    const mixed = table({
      columns: [
        { name: 'id', type: 'bigint', searchable: false },
        { name: 'title', type: 'character varying(200)', searchable: true },
        { name: 'body', type: 'text', searchable: true },
        { name: 'views', type: 'integer', searchable: false },
        { name: 'photo', type: 'bytea', searchable: false },
        { name: 'tags', type: 'text[]', searchable: false },
      ],
    });
    const { sql, params } = pageQuery(executor('postgres'), mixed, [5], 10, [90]);
    expect(sql).toContain(`left("body"::text, ${textCut}) AS "body"`);
    expect(sql).toContain(`substring("photo" from 1 for ${fieldCut}) AS "photo"`);
    expect(sql).toContain('"views" AS "views"');
    expect(sql).toContain(`CASE WHEN octet_length("tags"::text) <= ${fieldCut} THEN "tags" END AS "tags"`);
    expect(sql).toContain('WHERE "id" > $1 AND "id" <= $2 AND');
    expect(params).toEqual([5, 90]);
  });

  it('when the sizes of a page are asked, then only keys and the bytes of the cut values come back', () => {
    const { sql } = pageSizesQuery(executor('postgres'), table({ columns: [{ name: 'id', type: 'integer', searchable: false }, { name: 'body', type: 'text', searchable: true }] }), null, 7);
    expect(sql).toBe(`SELECT "id", (COALESCE(pg_column_size("id"), 0) + COALESCE(pg_column_size(left("body"::text, ${textCut})), 0)) AS quarry_bytes FROM "docs" ORDER BY "id" LIMIT 7`);
  });
});

describe('pageQuery on SQLite itself', () => {
  it('when a value is huge, then only its cut reaches JavaScript, and a row over MAX_ROW_BYTES is left out', async () => {
    const db = new sqlite3.Database(':memory:');
    const run = (sql: string, params: unknown[] = []) => new Promise<void>((ok, fail) => db.run(sql, params, (e) => (e ? fail(e) : ok())));
    const all = (sql: string, params: unknown[]) => new Promise<Record<string, unknown>[]>((ok, fail) => db.all(sql, params, (e, rows) => (e ? fail(e) : ok(rows as Record<string, unknown>[]))));
    try {
      const wide = table({
        columns: [
          { name: 'id', type: 'INTEGER', searchable: false }, { name: 'n', type: 'INTEGER', searchable: false },
          ...Array.from({ length: 30 }, (_, i) => ({ name: `t${i}`, type: 'TEXT', searchable: true })),
        ],
        textColumns: Array.from({ length: 30 }, (_, i) => `t${i}`),
      });
      await run(`CREATE TABLE docs (id INTEGER PRIMARY KEY, n INTEGER, ${wide.textColumns.map((c) => `${c} TEXT`).join(', ')})`);
      await run('INSERT INTO docs (id, t0) VALUES (1, ?)', ['x'.repeat(3_000_000)]);
      await run(`INSERT INTO docs (id, ${wide.textColumns.join(', ')}) VALUES (2, ${wide.textColumns.map(() => '?').join(', ')})`, wide.textColumns.map(() => 'y'.repeat(MAX_INDEX_TEXT_CHARS)));
      await run('INSERT INTO docs (id, n) VALUES (3, 42)');
      const page = pageQuery(executor('sqlite'), wide, null, 10);
      const rows = await all(page.sql, page.params);
      expect(rows.map((r) => r.id)).toEqual([1, 3]);
      expect((rows[0]!.t0 as string).length).toBe(MAX_INDEX_TEXT_CHARS);
      expect(rows[1]!.n).toBe(42);
      const sizes = pageSizesQuery(executor('sqlite'), wide, null, 10);
      const sized = await all(sizes.sql, sizes.params);
      expect(Number(sized[1]!.quarry_bytes)).toBeGreaterThan(MAX_ROW_BYTES);
    } finally {
      db.close();
    }
  });
});

describe('existingKeysQuery', () => {
  it.each([
    ['sqlite', 'SELECT "id" FROM "docs" WHERE ("id" IN (?, ?, ?))'],
    ['mysql', 'SELECT `id` FROM `docs` WHERE (`id` IN (?, ?, ?))'],
    ['postgres', 'SELECT "id" FROM "docs" WHERE ("id" IN ($1, $2, $3))'],
  ] as const)('when %s keys of a single-key table are checked, then one IN list binds them', (engine, sql) => {
    expect(existingKeysQuery(executor(engine), table(), [[1], [5], [9]], null)).toEqual({ sql, params: [1, 5, 9] });
  });

  it('when a truncated sync checks keys, then only rows up to the last one it read count', () => {
    expect(existingKeysQuery(executor('postgres'), table(), [[1], [5]], [3])).toEqual({
      sql: 'SELECT "id" FROM "docs" WHERE ("id" IN ($1, $2)) AND "id" <= $3', params: [1, 5, 3],
    });
  });

  it('when composite keys are checked, then each key is one AND group, and the bound follows the keys\' parameters', () => {
    expect(existingKeysQuery(executor('postgres'), composite, [[10, 1], [10, 2]], [10, 1])).toEqual({
      sql: 'SELECT "order_id", "line" FROM "shop"."lines" WHERE (("order_id" = $1 AND "line" = $2) OR ("order_id" = $3 AND "line" = $4)) AND ("order_id", "line") <= ($5, $6)',
      params: [10, 1, 10, 2, 10, 1],
    });
    expect(existingKeysQuery(executor('mysql'), composite, [[10, 1]], null)).toEqual({
      sql: 'SELECT `order_id`, `line` FROM `lines` WHERE ((`order_id` = ? AND `line` = ?))', params: [10, 1],
    });
  });
});

describe('tables', () => {
  const fts = (name: string) => ({ name, kind: 'fts5' as const, columns: ['title', 'body'] });

  it('when a SQLite schema has an external-content FTS5 table, then only its content table is searched', () => {
    const schema = [
      table({ name: 'tips', fullTextIndexes: [fts('tips_fts')] }),
      table({ name: 'tips_fts', primaryKey: ['rowid'], fullTextIndexes: [fts('tips_fts')] }),
      table({ name: 'standalone_fts', primaryKey: ['rowid'], fullTextIndexes: [fts('standalone_fts')] }),
      table({ name: 'numbers', textColumns: [] }),
    ];
    expect(contentTables(schema).map((t) => t.name)).toEqual(['tips', 'standalone_fts']);
  });

  it('when a PostgreSQL table shares its name with an FTS5 table elsewhere, then it is still searched', () => {
    const schema = [table({ name: 'a', fullTextIndexes: [fts('b')] }), table({ name: 'b', schema: 'public' })];
    expect(contentTables(schema).map((t) => t.name)).toEqual(['a', 'b']);
  });

  it('when a table has no primary key or no text, then it cannot be indexed and says why', () => {
    expect(indexableProblem(table())).toBeNull();
    expect(indexableProblem(table({ primaryKey: [] }))).toMatch(/primary key/);
    expect(indexableProblem(table({ textColumns: [] }))).toMatch(/text columns/);
  });

  it('when a table is outside PostgreSQL\'s public schema, then its id is schema-qualified', () => {
    expect(tableId(composite)).toBe('shop.lines');
    expect(tableId(table({ schema: 'public' }))).toBe('docs');
    expect(tableId(table())).toBe('docs');
  });

  it('when a row is read, then its cursor is its key values in key order, as JSON-safe scalars', () => {
    expect(cursorOf(composite, { note: 'x', line: 3, order_id: 9n })).toEqual(['9', 3]);
  });
});
