/**
 * A space on an object store with its rows in memory (src/search-index/row-cache.ts): a search answers what it
 * answers reading every row from the store, the same rows, scores, text and stored fields, while asking the store for
 * no row of the table's data; a write makes a new version, whose searches read the rows written since from the store
 * and the others from memory until the new version's rows are read.
 * On s3rver (loopback) behind the conditional-write proxy, and in a local folder (where the rows in memory spare a
 * search LanceDB's read of each column it brings back).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryStems } from '../../src/search-index/analyzer.js';
import { HeadingScorer } from '../../src/search-index/heading.js';
import { RM3 } from '../../src/search-index/feedback.js';
import { searchIndex, type IndexedSource } from '../../src/search-index/index-search.js';
import { IndexStore, type IndexRow, type IndexSpace, type TextQuery } from '../../src/search-index/index-store.js';
import { S3RVER_CREDENTIALS, startS3rver, type S3rverStore } from '../support/s3rver.js';

const BUCKET = 'quarry-rows';
const NAME = 'space_rowcache_test';
const WORDS = ['harbor', 'engines', 'forest', 'market', 'copper', 'signals', 'meadow', 'valley', 'bridges', 'lantern', 'boiling', 'kettle'];
const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 5 + (i % 3) * k) % WORDS.length]).join(' ');
const row = (i: number): IndexRow => {
  const head = pick(i, 1 + (i % 3));
  return { rid: `r${i}`, src: i % 2 === 0 ? 'itb_even' : 'itb_odd', pk: `{"id":${i}}`, hash: `h${i}`, thash: `t${i}`, text: `${head}\n${pick(i + 3, 4 + (i % 7))}`, head, fields: `{"id":${i},"title":"${head}"}` };
};

const SOURCES: IndexedSource[] = ['itb_even', 'itb_odd'].map((src) => ({
  src, connectionId: `db_${src}`, tableName: src, keyColumns: ['id'], textColumns: ['title'], semanticReady: false,
}));

let s3: S3rverStore;
let plain: IndexStore;
let cached: IndexStore;
/** What the cached store told its operator. */
const told: Array<{ fields: Record<string, unknown>; message: string }> = [];

beforeAll(async () => {
  s3 = await startS3rver(BUCKET);
  const options = {
    uri: `s3://${BUCKET}/index`, readConsistencySeconds: 0,
    storageOptions: { aws_endpoint: s3.url, aws_region: 'us-east-1', allow_http: 'true', aws_access_key_id: S3RVER_CREDENTIALS.accessKeyId, aws_secret_access_key: S3RVER_CREDENTIALS.secretAccessKey },
  };
  plain = new IndexStore(options);
  cached = new IndexStore({
    ...options, rowCacheBytes: 64 * 1024 * 1024,
    logger: { info: (fields: Record<string, unknown>, message: string) => void told.push({ fields, message }) } as never,
  });
}, 60_000);
afterAll(async () => {
  await plain?.close();
  await cached?.close();
  await s3?.close();
});

const ROWS = Array.from({ length: 500 }, (_, i) => row(i));

/** The space with ROWS written as a sync ends: folded into the text index (unfolded rows are found by a scan of their text). */
async function synced(store: IndexStore): Promise<IndexSpace> {
  const written = await store.ensureSpace(NAME);
  await written.append(ROWS);
  await written.optimize();
  return written;
}

/** The ranking as a search asks for it: headings weighed from the space's statistics, the page's rows and text. */
async function ranked(space: IndexSpace, words: string, srcs: string[] | null) {
  const vocabulary = (await space.vocabulary())!;
  const stems = queryStems(words);
  const query: TextQuery = { words, headings: true, headingScorer: new HeadingScorer(stems, vocabulary.headingStatistics(stems)), withRows: true, withText: true };
  // Every row that matches (fewer than 600): rows of equal text score tie, and where a limit cuts through ties the
  // index keeps whichever it met first; the heading weight added after would then lift different rows into view.
  return space.searchText(query, { srcs }, 600);
}

type Hit = Awaited<ReturnType<typeof ranked>>[number];

/**
 * The same ranking, rows of equal score in either order (rows of equal text tie here, and the index orders ties as it
 * finds them, the postings by row): rank by rank the same scores to the index's 32-bit floats, the same rows with the
 * same text and fields above the last score, and as many at it.
 */
function expectSameRanking(found: Hit[], expected: Hit[], label: string): void {
  expect(found.length, label).toBe(expected.length);
  found.forEach((hit, i) => expect(Math.abs(hit.score - expected[i]!.score), `${label} ${hit.rid}`).toBeLessThan(1e-5 * Math.max(1, hit.score)));
  const last = expected.at(-1)?.score ?? 0;
  const above = (hits: Hit[]) => hits.filter((h) => h.score > last + 1e-5 * Math.max(1, last)).map((h) => JSON.stringify([h.rid, h.src, h.text, h.row])).sort();
  expect(above(found), label).toEqual(above(expected));
}

describe('rows of a space on an object store in memory', () => {
  it('when the version\'s rows are in memory, then a search ranks the same rows with the same fields without reading the table\'s data from the store', async () => {
    await synced(plain);
    const reference = (await plain.space(NAME))!;
    await reference.prepareVocabulary();
    const space = (await cached.space(NAME))!;
    await space.prepareVocabulary();
    await space.rowsRead();
    expect(await space.rowsInMemory()).toBe(true);
    // The operator is told what is held, so a benchmark (or a dashboard) knows when searches stop reading the store.
    expect(told.filter((t) => t.message === 'index rows held in memory')).toEqual([{ message: 'index rows held in memory', fields: expect.objectContaining({ space: NAME, rows: 500, megabytes: expect.any(Number), ms: expect.any(Number) }) }]);

    for (const [words, srcs] of [['harbor engines', null], ['copper signals meadow', ['itb_even']], ['lantern', null], ['kettle boiling valley', ['itb_odd', 'itb_even']]] as const) {
      const expected = await ranked(reference, words, srcs as string[] | null);
      const before = s3.requests.length;
      const found = await ranked(space, words, srcs as string[] | null);
      const reads = s3.requests.slice(before).filter((r) => r.method === 'GET' && r.path.includes('/data/'));
      expect(reads, words).toEqual([]);
      expect(found.length, words).toBeGreaterThan(0);
      expectSameRanking(found, expected, words);
    }
  }, 120_000);

  it('when the space is written, then its searches find the new rows, and read them from memory once the new version is read', async () => {
    const writer = (await plain.space(NAME))!;
    await writer.append([{ ...row(9999), rid: 'fresh', text: 'harbor harbor harbor lighthouse', head: 'lighthouse' }]);
    await writer.optimize();
    // Right after the write the new version's rows may or may not be read yet: either way the new row is found.
    const stale = (await cached.space(NAME))!;
    await stale.prepareVocabulary();
    expect((await ranked(stale, 'lighthouse', null)).map((h) => [h.rid, h.text])).toEqual([['fresh', 'harbor harbor harbor lighthouse']]);
    // Searches open the space again and again: one of them reads the new version's rows, in the background.
    let space = stale;
    for (let waited = 0; waited < 30_000 && !(await space.rowsInMemory()); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      space = (await cached.space(NAME))!;
      await space.rowsRead();
    }
    expect(await space.rowsInMemory()).toBe(true);
    const before = s3.requests.length;
    const found = await ranked(space, 'lighthouse', null);
    expect(s3.requests.slice(before).filter((r) => r.method === 'GET' && r.path.includes('/data/'))).toEqual([]);
    expect(found.map((h) => [h.rid, h.text, h.row])).toEqual([['fresh', 'harbor harbor harbor lighthouse', { pk: '{"id":9999}', fields: row(9999).fields }]]);
  }, 120_000);
});

describe('rows of a space in a local folder in memory', () => {
  it('when the space is written after its rows were read, then a search reads the ranked rows it still holds from memory and takes only the rows written since from the index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-rowcache-'));
    const folder = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
    const held = new IndexStore({ uri: dir, readConsistencySeconds: 0, rowCacheBytes: 64 * 1024 * 1024 });
    try {
      const written = await synced(folder);
      const space = (await held.space(NAME))!;
      await space.prepareVocabulary();
      await space.rowsRead();
      expect(await space.rowsInMemory()).toBe(true);
      // Through another handle, as a stream's batch: a row changed, a row added, a row deleted (all three hold "lantern").
      const lantern = ROWS.filter((r) => r.text!.split(/\s+/).includes('lantern'));
      const [changed, deleted] = [lantern[0]!, lantern[1]!];
      await written.upsert([
        { ...changed, text: `${changed.text} lighthouse`, hash: 'changed', fields: '{"changed":true}' },
        { ...row(9999), rid: 'fresh', text: 'lantern lighthouse lighthouse', head: 'lighthouse' },
      ]);
      await written.deleteRows([deleted.rid]);
      // The same handle, so no new read of the rows starts: they stay the older version's.
      expect(await space.rowsInMemory()).toBe(false);
      const reference = (await folder.space(NAME))!;
      await reference.prepareVocabulary();
      const vocabulary = (await reference.vocabulary())!;
      for (const words of ['lantern lighthouse', 'lantern', 'harbor engines']) {
        const stems = queryStems(words);
        const query: TextQuery = { words, headings: true, headingScorer: new HeadingScorer(stems, vocabulary.headingStatistics(stems)), withRows: true, withText: true };
        const expected = await reference.searchText(query, { srcs: null }, 600);
        const found = await space.searchText(query, { srcs: null }, 600);
        expect(found.length, words).toBeGreaterThan(0);
        expectSameRanking(found, expected, words);
        expect(found.some((h) => h.rid === deleted.rid), words).toBe(false);
        if (words.includes('lighthouse')) expect(found.slice(0, 2).map((h) => h.rid).sort(), words).toEqual(['fresh', changed.rid].sort());
        // Where each row was read: the counted words of a row held in memory, the text of a row taken from the index.
        const origin = await space.searchText({ ...query, withText: false, withWords: true }, { srcs: null }, 600);
        const takenRows = origin.filter((h) => h.text !== undefined && h.words === undefined).map((h) => h.rid).sort();
        const heldRows = origin.filter((h) => h.words !== undefined && h.text === undefined);
        expect(takenRows, words).toEqual(origin.map((h) => h.rid).filter((rid) => rid === 'fresh' || rid === changed.rid).sort());
        expect(heldRows.length + takenRows.length, words).toBe(origin.length);
      }
      // A word no row holds: nothing, from memory or from the index alone.
      const nothing: TextQuery = { words: 'zeppelin', headings: true, headingScorer: new HeadingScorer(['zeppelin'], vocabulary.headingStatistics(['zeppelin'])), withRows: true };
      expect(await space.searchText(nothing, { srcs: null }, 10)).toEqual([]);
      expect(await reference.searchText(nothing, { srcs: null }, 10)).toEqual([]);
      const [fresh] = await space.searchText({ words: 'lighthouse', withRows: true, withText: true }, { srcs: null }, 1);
      expect([fresh!.rid, fresh!.text, fresh!.row]).toEqual(['fresh', 'lantern lighthouse lighthouse', { pk: '{"id":9999}', fields: row(9999).fields }]);
    } finally {
      await Promise.all([folder.close(), held.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('when the budget holds the version\'s rows, then a search ranks from memory as from the folder; when it does not, then the rows are not read through and searches read the folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-rowcache-'));
    const heard: string[] = [];
    const logger = { info: (_fields: Record<string, unknown>, message: string) => void heard.push(message) } as never;
    const folder = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
    const held = new IndexStore({ uri: dir, readConsistencySeconds: 0, rowCacheBytes: 64 * 1024 * 1024, logger });
    // 500 rows take about 100 KB: a 20 KB budget is known to be too small from the first batch read.
    const small = new IndexStore({ uri: dir, readConsistencySeconds: 0, rowCacheBytes: 20 * 1024, logger });
    try {
      await synced(folder);
      const reference = (await folder.space(NAME))!;
      await reference.prepareVocabulary();
      for (const [store, inMemory] of [[held, true], [small, false]] as const) {
        const space = (await store.space(NAME))!;
        await space.prepareVocabulary();
        await space.rowsRead();
        expect(await space.rowsInMemory()).toBe(inMemory);
        for (const [words, srcs] of [['harbor engines', null], ['copper signals meadow', ['itb_even']]] as const) {
          const expected = await ranked(reference, words, srcs as string[] | null);
          const found = await ranked(space, words, srcs as string[] | null);
          expect(found.length, words).toBeGreaterThan(0);
          expectSameRanking(found, expected, words);
          // What relevance feedback reads: the rows' words counted in memory when held, else their text; a natural
          // search scored again with RM3 ranks the same rows with the same scores either way.
          const forFeedback = await space.searchText({ words, withWords: true }, { srcs: srcs as string[] | null }, 40);
          expect(forFeedback.every((h) => (inMemory ? h.words !== undefined && h.text === undefined : h.text !== undefined && h.words === undefined)), words).toBe(true);
          const natural = async (store: IndexStore) => (await searchIndex(store, {
            space: NAME, sources: SOURCES, mode: 'natural', text: { words }, vector: null, window: 20, wholeSpace: srcs === null,
            semanticRatio: 0, rerank: RM3,
          })).hits.map((h) => [h.rid, h.score]);
          const fromFolder = await natural(folder);
          expect(fromFolder.length, words).toBeGreaterThan(0);
          // The same rows in the same order; the scores to the index's 32-bit floats (from memory they are summed in 64).
          const fromStore = await natural(store);
          expect(fromStore.map(([rid]) => rid), words).toEqual(fromFolder.map(([rid]) => rid));
          fromStore.forEach(([rid, score], i) => expect(Math.abs((score as number) - (fromFolder[i]![1] as number)), `${words} ${rid}`).toBeLessThan(1e-5));
        }
      }
      expect(heard).toEqual(['index rows held in memory', 'index row words counted', 'index postings held in memory', 'index rows too large to hold in memory']);
    } finally {
      await Promise.all([folder.close(), held.close(), small.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
