/**
 * The search index's store against a real LanceDB folder: writes by row id, per-table deletes and counts, BM25 text
 * search with exclusions, vectors, folding new rows into the indexes, and the id alphabet that keeps caller text out
 * of LanceDB filters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TableSchema } from '../../../src/connectors/index.js';
import { indexRowOf } from '../../../src/search-index/documents.js';
import { IndexStore, isObjectStore, spaceName, type IndexRow, type IndexSpace } from '../../../src/search-index/index-store.js';
import { loadLance } from '../../../src/search-index/lance.js';

/** LanceDB writes files and builds indexes: allow for a loaded machine. */
const SLOW = 60_000;

const docs: TableSchema = {
  name: 'docs', schema: null, primaryKey: ['id'], rowEstimate: 0, textColumns: ['body'], fullTextIndexes: [],
  columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'body', type: 'TEXT', searchable: true }],
};
const row = (src: string, id: number, body: string): IndexRow => indexRowOf(src, docs, { id, body })!;
const ids = (hits: Array<{ rid: string }>, rows: IndexRow[]) => hits.map((h) => rows.find((r) => r.rid === h.rid)?.pk ?? h.rid);

let dir: string;
let store: IndexStore;
let spaces = 0;

/** A new, empty space per test: tests never see each other's rows. */
async function freshSpace(): Promise<{ name: string; space: IndexSpace }> {
  spaces += 1;
  const name = spaceName(`usr_t${spaces}`, 'test');
  return { name, space: await store.ensureSpace(name) };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
  store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const kitchen = [
  row('src_a', 1, 'Descale the kettle with vinegar'),
  row('src_a', 2, 'Sharpen kitchen knives on a whetstone'),
  row('src_a', 3, 'Vinegar and baking soda clean the oven'),
  row('src_b', 1, 'Kettles boil water faster than a pot'),
  row('src_b', 2, 'Repot orchids in spring'),
];

describe('spaces', () => {
  it('when a space was never created, then space() finds none; ensureSpace creates it with its indexes, and again is harmless', async () => {
    const name = spaceName('usr_new', 'live');
    expect(name).toBe('space_usr_new_live');
    expect(await store.space(name)).toBeNull();
    await store.ensureSpace(name);
    await store.ensureSpace(name);
    expect(await store.space(name)).not.toBeNull();
    const { lancedb } = await loadLance();
    const raw = await (await lancedb.connect(dir)).openTable(name);
    expect((await raw.listIndices()).map((i) => `${i.columns.join(',')}:${i.indexType}`).sort()).toEqual(['head:FTS', 'rid:BTree', 'src:Bitmap', 'text:FTS']);
    await store.dropSpace(name);
    expect(await store.space(name)).toBeNull();
  }, SLOW);

  it('when a user or environment is outside the id alphabet, then no space name is made', () => {
    expect(() => spaceName("usr_1' OR 1=1", 'test')).toThrow(/not a search space name/);
    expect(() => spaceName('usr_1', 'te st')).toThrow(/not a search space name/);
  });
});

describe('rows', () => {
  it('when rows are upserted, then new ones are added and a changed one replaces its old version', async () => {
    const { space } = await freshSpace();
    await space.upsert(kitchen);
    expect(await space.countRows()).toBe(5);
    expect(await space.countRows('src_a')).toBe(3);

    const changed = row('src_a', 2, 'Sharpen kitchen knives with a honing rod');
    await space.upsert([changed, row('src_a', 4, 'Freeze leftover herbs in oil')]);
    expect(await space.countRows('src_a')).toBe(4);
    const stored = await space.existing([changed.rid, kitchen[0]!.rid, 'not_there']);
    expect(stored.size).toBe(2);
    expect(stored.get(changed.rid)).toEqual({ hash: changed.hash, thash: changed.thash, vmodel: null });
    const [back] = await space.rows([changed.rid]);
    expect(back).toMatchObject({ rid: changed.rid, src: 'src_a', pk: '{"id":2}', fields: JSON.stringify({ id: 2, body: 'Sharpen kitchen knives with a honing rod' }) });
  }, SLOW);

  it('when rows or whole tables are deleted, then only those leave and a scan of a table lists the rest', async () => {
    const { space } = await freshSpace();
    await space.upsert(kitchen);
    await space.deleteRows([kitchen[0]!.rid]);
    expect(await space.countRows('src_a')).toBe(2);
    const scanned = [];
    for await (const batch of space.scanSource('src_a')) scanned.push(...batch);
    expect(scanned.map((r) => r.pk).sort()).toEqual(['{"id":2}', '{"id":3}']);
    expect(scanned.every((r) => kitchen.some((k) => k.rid === r.rid))).toBe(true);

    await space.deleteSources(['src_b']);
    expect(await space.countRows('src_b')).toBe(0);
    expect(await space.countRows()).toBe(2);
    await space.deleteRows([]);
    await space.deleteSources([]);
    expect(await space.countRows()).toBe(2);
  }, SLOW);

  it('when an id outside the safe alphabet reaches a filter, then it is refused and nothing is touched', async () => {
    const { space } = await freshSpace();
    await space.upsert(kitchen);
    await expect(space.deleteRows(["x' OR '1'='1"])).rejects.toThrow(/not an index id/);
    await expect(space.deleteSources(["src_a') OR (1=1"])).rejects.toThrow(/not an index id/);
    await expect(space.countRows("src_a' OR src <> '")).rejects.toThrow(/not an index id/);
    await expect(space.searchText({ words: 'kettle' }, { srcs: ['src a'] }, 10)).rejects.toThrow(/not an index id/);
    await expect(space.existing(['a'.repeat(81)])).rejects.toThrow(/not an index id/);
    expect(await space.countRows()).toBe(5);
  }, SLOW);
});

describe('searchText', () => {
  let space: IndexSpace;
  beforeAll(async () => {
    ({ space } = await freshSpace());
    await space.upsert(kitchen);
    await space.optimize();
  }, SLOW);

  it('when a query has several words, then any may match and a row with more of them ranks first', async () => {
    const hits = await space.searchText({ words: 'kettle vinegar' }, { srcs: ['src_a', 'src_b'] }, 10);
    expect(ids(hits, kitchen)[0]).toBe('{"id":1}');
    expect(hits[0]!.src).toBe('src_a');
    expect(hits.map((h) => h.rid).sort()).toEqual([kitchen[0]!.rid, kitchen[2]!.rid, kitchen[3]!.rid].sort());
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  }, SLOW);

  it('when a query word is inflected, then the stem matches', async () => {
    const hits = await space.searchText({ words: 'kettles' }, { srcs: ['src_a', 'src_b'] }, 10);
    expect(hits.map((h) => h.rid).sort()).toEqual([kitchen[0]!.rid, kitchen[3]!.rid].sort());
  }, SLOW);

  it('when tables are selected, then rows of other tables are not returned', async () => {
    const hits = await space.searchText({ words: 'kettle' }, { srcs: ['src_b'] }, 10);
    expect(hits).toEqual([{ rid: kitchen[3]!.rid, src: 'src_b', score: expect.any(Number) }]);
    expect(await space.searchText({ words: 'kettle' }, { srcs: [] }, 10)).toEqual([]);
  }, SLOW);

  it('when words are excluded, then rows holding any of them are left out', async () => {
    const hits = await space.searchText({ words: 'kettle vinegar', exclude: ['oven', 'water'] }, { srcs: ['src_a', 'src_b'] }, 10);
    expect(hits.map((h) => h.rid)).toEqual([kitchen[0]!.rid]);
    const blank = await space.searchText({ words: 'kettle', exclude: ['  ', ''] }, { srcs: ['src_a', 'src_b'] }, 10);
    expect(blank).toHaveLength(2);
  }, SLOW);

  it('when a limit is given, then at most that many rows come back, best first', async () => {
    const all = await space.searchText({ words: 'kettle vinegar' }, { srcs: ['src_a', 'src_b'] }, 10);
    expect(await space.searchText({ words: 'kettle vinegar' }, { srcs: ['src_a', 'src_b'] }, 1)).toEqual([all[0]]);
    expect(await space.searchText({ words: 'kettle vinegar' }, { srcs: ['src_a', 'src_b'] }, 0)).toEqual([]);
  }, SLOW);
});

describe('headings', () => {
  const articles: TableSchema = {
    name: 'articles', schema: null, primaryKey: ['id'], rowEstimate: 0, textColumns: ['title', 'body'], fullTextIndexes: [],
    columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'title', type: 'TEXT', searchable: true }, { name: 'body', type: 'TEXT', searchable: true }],
  };
  const article = (id: number, title: string, body: string) => indexRowOf('src_h', articles, { id, title, body })!;
  // The same words once in each row's text: one in its title, one in its body only.
  const rows = [
    article(1, 'Notes from the workshop', 'A study of boundary layer separation on swept wings.'),
    article(2, 'Boundary layer separation', 'Notes from a study on swept wings and a workshop.'),
  ];

  it('when the query words are in one row\'s title and only in the body of another, then the title ranks first; without headings they tie', async () => {
    const { space } = await freshSpace();
    await space.upsert(rows);
    await space.optimize();
    const ranked = await space.searchText({ words: 'boundary separation', headings: true }, { srcs: ['src_h'] }, 10);
    expect(ranked.map((h) => h.rid)).toEqual([rows[1]!.rid, rows[0]!.rid]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    const plain = await space.searchText({ words: 'boundary separation' }, { srcs: ['src_h'] }, 10);
    expect(plain[0]!.score).toBeCloseTo(plain[1]!.score, 5);
  }, SLOW);

  it('when the page ranks fewer rows than the heading depth, then a row whose heading is not among the page\'s best headings still gets its weight', async () => {
    const { space } = await freshSpace();
    const deep = [
      article(1, 'Kettle guide with many more words in its long title', 'kettle kettle kettle kettle kettle'),
      article(2, 'Kettle', 'Something else entirely'),
    ];
    await space.upsert(deep);
    await space.optimize();
    const [shallow] = await space.searchText({ words: 'kettle', headings: true }, { srcs: ['src_h'] }, 1);
    const [weighed] = await space.searchText({ words: 'kettle', headings: true, headingDepth: 10 }, { srcs: ['src_h'] }, 1);
    expect(shallow!.rid).toBe(deep[0]!.rid);
    expect(weighed!.rid).toBe(deep[0]!.rid);
    expect(weighed!.score).toBeGreaterThan(shallow!.score);
  }, SLOW);

  it('when a space is opened for each search, then its columns are read once per version of it, not once per search', async () => {
    const { lancedb } = await loadLance();
    const { name, space } = await freshSpace();
    await space.upsert(rows);
    // The table class LanceDB opens: its schema() is what decoding the columns costs.
    const opened = await (await lancedb.connect(dir)).openTable(name);
    const schema = vi.spyOn(Object.getPrototypeOf(opened) as { schema(): Promise<unknown> }, 'schema');
    try {
      for (let i = 0; i < 3; i++) {
        const found = await (await store.space(name))!.searchText({ words: 'workshop', headings: true }, { srcs: ['src_h'] }, 10);
        expect(found).toHaveLength(2);
      }
      expect(schema).toHaveBeenCalledTimes(1);
      // A write makes a new version (whose columns the write itself may read): the searches after it read them at
      // most once between them, and see the new row.
      await space.upsert([article(3, 'Workshop', 'A third row')]);
      schema.mockClear();
      for (let i = 0; i < 3; i++) expect(await (await store.space(name))!.searchText({ words: 'workshop', headings: true }, { srcs: ['src_h'] }, 10)).toHaveLength(3);
      expect(schema.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      schema.mockRestore();
    }
  }, SLOW);

  it('when a space was made before rows had headings, then ensureSpace adds the heading column and its index, and search works on it', async () => {
    const { lancedb, arrow } = await loadLance();
    const name = spaceName('usr_legacy', 'test');
    const connection = await lancedb.connect(dir);
    const text = (field: string) => new arrow.Field(field, new arrow.Utf8(), true);
    await connection.createEmptyTable(name, new arrow.Schema(['rid', 'src', 'pk', 'hash', 'thash', 'text', 'fields'].map(text)));
    const space = await store.ensureSpace(name);
    const legacy = await connection.openTable(name);
    expect((await legacy.schema()).fields.map((f) => f.name)).toContain('head');
    expect((await legacy.listIndices()).map((i) => i.columns.join(','))).toContain('head');
    await space.upsert(rows);
    await space.optimize();
    expect(await space.searchText({ words: 'workshop', headings: true }, { srcs: ['src_h'] }, 10)).toHaveLength(2);
  }, SLOW);
});

describe('vectors', () => {
  const unit = (...values: number[]) => {
    const norm = Math.hypot(...values);
    return values.map((v) => v / norm);
  };

  it('when a space has no vectors yet, then vector search and reuse find nothing', async () => {
    const { space } = await freshSpace();
    await space.upsert(kitchen);
    expect(await space.searchVector(Float32Array.from([1, 0, 0]), { srcs: ['src_a'] }, 10, 0.2)).toEqual([]);
    expect(await space.vectorsFor([kitchen[0]!.thash], 'fake:m')).toEqual(new Map());
  }, SLOW);

  it('when rows carry vectors, then the nearest rank first by cosine similarity, down to the minimum, from the selected tables only', async () => {
    const { space } = await freshSpace();
    await space.upsert(kitchen);
    await space.ensureVectorColumn(3);
    const [a1, a2, a3, b1] = kitchen;
    await space.upsert([
      { ...a1!, vector: unit(1, 0, 0), vmodel: 'fake:m' },
      { ...a2!, vector: unit(1, 1, 0), vmodel: 'fake:m' },
      { ...a3!, vector: unit(-1, 0, 0), vmodel: 'fake:m' },
      { ...b1!, vector: unit(1, 0.1, 0), vmodel: 'fake:m' },
    ]);
    const hits = await space.searchVector(Float32Array.from([1, 0, 0]), { srcs: ['src_a'] }, 10, 0.2);
    expect(hits.map((h) => h.rid)).toEqual([a1!.rid, a2!.rid]);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 5);
    const both = await space.searchVector(Float32Array.from([1, 0, 0]), { srcs: ['src_a', 'src_b'] }, 10, 0.2);
    expect(both.map((h) => h.rid)).toEqual([a1!.rid, b1!.rid, a2!.rid]);
    // The row without a vector (src_b 2) is never a semantic match.
    expect(both.map((h) => h.rid)).not.toContain(kitchen[4]!.rid);
    expect(await space.existing([a1!.rid, kitchen[4]!.rid])).toEqual(new Map([
      [a1!.rid, { hash: a1!.hash, thash: a1!.thash, vmodel: 'fake:m' }],
      [kitchen[4]!.rid, { hash: kitchen[4]!.hash, thash: kitchen[4]!.thash, vmodel: null }],
    ]));
  }, SLOW);

  it('when vectors are looked up by text hash, then only those of the same model are reused; a new dimension drops them all', async () => {
    const { space } = await freshSpace();
    await space.ensureVectorColumn(3);
    const [a1, a2] = kitchen;
    await space.upsert([{ ...a1!, vector: unit(0, 1, 0), vmodel: 'fake:m' }, { ...a2!, vector: unit(0, 0, 1), vmodel: 'fake:old' }]);
    const found = await space.vectorsFor([a1!.thash, a2!.thash, kitchen[2]!.thash], 'fake:m');
    expect([...found.keys()]).toEqual([a1!.thash]);
    expect(found.get(a1!.thash)!.map((v) => Math.round(v * 1e6) / 1e6)).toEqual([0, 1, 0]);

    await space.ensureVectorColumn(3); // same length: kept
    expect((await space.vectorsFor([a1!.thash], 'fake:m')).size).toBe(1);
    await space.ensureVectorColumn(4);
    expect((await space.vectorsFor([a1!.thash], 'fake:m')).size).toBe(0);
    expect(await space.countRows()).toBe(2);
    expect((await space.existing([a1!.rid])).get(a1!.rid)!.vmodel).toBeNull();
  }, SLOW);
});

describe('optimize', () => {
  it('when rows were written after the text index was built, then optimize folds them in (no unindexed rows left) and they stay searchable', async () => {
    const { name, space } = await freshSpace();
    await space.upsert(kitchen);
    const { lancedb } = await loadLance();
    const raw = await (await lancedb.connect(dir, { readConsistencyInterval: 0 })).openTable(name);
    const unindexed = async () => (await raw.listIndices()).find((i) => i.columns.includes('text'))!.numUnindexedRows;
    expect(await unindexed()).toBe(kitchen.length);
    await space.optimize();
    expect(await unindexed()).toBe(0);
    expect((await space.searchText({ words: 'whetstone' }, { srcs: ['src_a'] }, 10)).map((h) => h.rid)).toEqual([kitchen[1]!.rid]);

    // Unindexed rows are still found (by a flat scan) before the next fold.
    const late = row('src_a', 9, 'Whetstone grit explained');
    await space.upsert([late]);
    expect(await unindexed()).toBe(1);
    expect((await space.searchText({ words: 'whetstone' }, { srcs: ['src_a'] }, 10)).map((h) => h.rid).sort()).toEqual([kitchen[1]!.rid, late.rid].sort());
    await space.optimize();
    expect(await unindexed()).toBe(0);
  }, SLOW);
});

describe('two stores on one folder', () => {
  it('when one store writes, then another with a zero read-consistency interval sees the rows on its next read', async () => {
    const { name, space } = await freshSpace();
    const reader = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
    try {
      const seen = (await reader.space(name))!;
      expect(await seen.countRows()).toBe(0);
      await space.upsert(kitchen);
      expect(await seen.countRows()).toBe(5);
    } finally {
      await reader.close();
    }
  }, SLOW);
});

describe('isObjectStore', () => {
  it('when the index URI names an object store, then it is one; a folder or a file: URI is not', () => {
    expect(['s3://bucket/index', 'gs://bucket/index', 'az://container/index', 'S3://b/i'].map(isObjectStore)).toEqual([true, true, true, true]);
    expect(['/var/lib/quarry/index', './data/index', 'file:///var/lib/quarry/index', 'C:\\quarry\\index'].map(isObjectStore)).toEqual([false, false, false, false]);
  });
});
