/**
 * A space written by this process after its postings were built (src/search-index/written-rows.ts): its searches
 * rank from the postings and the rows written since, in memory, without asking LanceDB, and find what LanceDB finds;
 * once another process writes the space, its searches ask LanceDB again. In a local folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Table } from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryStems } from '../../src/search-index/analyzer.js';
import { HeadingScorer } from '../../src/search-index/heading.js';
import { IndexStore, type IndexRow, type IndexSpace, type TextQuery } from '../../src/search-index/index-store.js';
import { REREAD_SHARE } from '../../src/search-index/written-rows.js';

const NAME = 'space_written_test';
const WORDS = ['harbor', 'engines', 'forest', 'market', 'copper', 'signals', 'meadow', 'valley', 'bridges', 'lantern', 'boiling', 'kettle'];
const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 5 + (i % 3) * k) % WORDS.length]).join(' ');
const row = (i: number): IndexRow => {
  const head = pick(i, 1 + (i % 3));
  return { rid: `r${i}`, src: i % 2 === 0 ? 'itb_even' : 'itb_odd', pk: `{"id":${i}}`, hash: `h${i}`, thash: `t${i}`, text: `${head}\n${pick(i + 3, 4 + (i % 7))}`, head, fields: `{"id":${i},"title":"${head}"}` };
};
const ROWS = Array.from({ length: 500 }, (_, i) => row(i));

let dir: string;
let held: IndexStore;
let other: IndexStore;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-written-'));
  held = new IndexStore({ uri: dir, readConsistencySeconds: 0, rowCacheBytes: 64 * 1024 * 1024 });
  // Another process's view of the same folder: no rows in memory, the index's own ranking.
  other = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
});
afterAll(async () => {
  await Promise.all([held?.close(), other?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The space reopened (as each search does) until its current version's rows and postings are in memory. */
async function heldInMemory(): Promise<IndexSpace> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const space = (await held.space(NAME))!;
    await space.rowsRead();
    if (await space.rowsInMemory()) return space;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the rows were not read into memory');
}

describe('rows written since a space\'s postings', () => {
  it('when this process writes the space, then its searches rank the postings and the rows written since from memory, and find what the index finds', async () => {
    const writer = await held.ensureSpace(NAME);
    await writer.append(ROWS);
    await writer.optimize();
    const space = await heldInMemory();
    const lantern = ROWS.filter((r) => r.text.split(/\s+/).includes('lantern'));
    const [changed, deleted] = [lantern[0]!, lantern[1]!];
    await space.upsert([
      { ...changed, text: `${changed.text} lighthouse`, hash: 'changed', fields: '{"changed":true}' },
      { ...row(9999), rid: 'fresh', text: 'lantern lighthouse lighthouse', head: 'lighthouse' },
    ]);
    await space.deleteRows([deleted.rid]);
    expect(await space.rowsInMemory()).toBe(false);
    const table = (space as unknown as { table: Table }).table;
    const asked = vi.spyOn(table, 'query');
    const taken = vi.spyOn(table, 'takeRowIds');
    const reference = (await other.space(NAME))!;
    await reference.prepareVocabulary();
    const vocabulary = (await reference.vocabulary())!;
    try {
      for (const words of ['lantern lighthouse', 'lantern', 'harbor engines', 'zeppelin']) {
        const stems = queryStems(words);
        for (const query of [
          { words, withRows: true, withText: true },
          { words, headings: true, headingScorer: new HeadingScorer(stems, vocabulary.headingStatistics(stems)), withRows: true, withText: true },
        ] satisfies TextQuery[]) {
          const found = await space.searchText(query, { srcs: null }, 600);
          const expected = await reference.searchText(query, { srcs: null }, 600);
          // The same rows match, best first; every row scores with the postings' statistics (the index's count the
          // rows written since too: one more row, another average length), so the scores differ a little.
          expect(found.map((h) => h.rid).sort(), words).toEqual(expected.map((h) => h.rid).sort());
          expect(found.some((h) => h.rid === deleted.rid), words).toBe(false);
          expect(found.map((h) => h.score), words).toEqual([...found.map((h) => h.score)].sort((a, b) => b - a));
          if (words.includes('lighthouse')) expect(found.slice(0, 2).map((h) => h.rid).sort(), words).toEqual(['fresh', changed.rid].sort());
        }
      }
      const [fresh] = await space.searchText({ words: 'lighthouse', withRows: true, withText: true }, { srcs: ['itb_odd'] }, 1);
      expect([fresh!.rid, fresh!.text, fresh!.row]).toEqual(['fresh', 'lantern lighthouse lighthouse', { pk: '{"id":9999}', fields: row(9999).fields }]);
      const [updated] = await space.searchText({ words: 'lighthouse', withRows: true }, { srcs: [changed.src] }, 1);
      expect([updated!.rid, updated!.row]).toEqual([changed.rid, { pk: changed.pk, fields: '{"changed":true}' }]);
      // Nothing was asked of LanceDB: neither a ranking nor a row.
      expect(asked).not.toHaveBeenCalled();
      expect(taken).not.toHaveBeenCalled();

      // Another process writes the space: the rows written since are no longer all known here, the index is asked.
      await (await other.space(NAME))!.upsert([{ ...row(10_000), rid: 'elsewhere', text: 'lighthouse keeper', head: 'keeper' }]);
      const after = (await held.space(NAME))!;
      const found = await after.searchText({ words: 'keeper lighthouse', withRows: true }, { srcs: null }, 10);
      expect(found.map((h) => h.rid)).toContain('elsewhere');
      expect(found.map((h) => h.rid)).toContain('fresh');
      expect(asked).toHaveBeenCalled();
    } finally {
      asked.mockRestore();
      taken.mockRestore();
    }
  }, 120_000);

  it('when few rows were written since, then the space is not read again: its searches find them beside the rows held; once they are many, it is read again', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'quarry-written-reread-'));
    const heard: string[] = [];
    const logger = { info: (_fields: Record<string, unknown>, message: string) => void heard.push(message) } as never;
    const store = new IndexStore({ uri: dir2, readConsistencySeconds: 0, rowCacheBytes: 64 * 1024 * 1024, logger });
    const reads = () => heard.filter((m) => m === 'index postings held in memory').length;
    /** Opens the space as searches do, for a while, letting any read they start finish. */
    const searchedFor = async (ms: number) => {
      let space = (await store.space(NAME))!;
      for (let waited = 0; waited < ms; waited += 100) {
        space = (await store.space(NAME))!;
        await space.searchVocabulary();
        await Promise.all([space.rowsRead(), space.vocabularyBuilt()]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return space;
    };
    try {
      const writer = await store.ensureSpace(NAME);
      await writer.append(ROWS);
      await writer.optimize();
      await writer.prepareVocabulary();
      let space = await searchedFor(500);
      expect(await space.rowsInMemory()).toBe(true);
      const held = reads();
      // A stream's batches: each a new version.
      for (let batch = 0; batch < 5; batch++) await space.upsert([{ ...row(20_000 + batch), rid: `batch${batch}`, text: `lighthouse keeper ${batch}` }]);
      space = await searchedFor(1500);
      expect(reads()).toBe(held);
      expect(await space.rowsInMemory()).toBe(false);
      expect((await space.searchVocabulary())!.current).toBe(false);
      const found = await space.searchText({ words: 'lighthouse', withRows: true }, { srcs: null }, 10);
      expect(found.map((h) => h.rid).sort()).toEqual(['batch0', 'batch1', 'batch2', 'batch3', 'batch4']);

      // As many changes as the space is read again after (a tenth of its rows), in one write: they are not recorded
      // (their words would be counted for nothing), the index answers until the read the next search starts ends.
      await space.upsert(Array.from({ length: REREAD_SHARE * ROWS.length }, (_, i) => ({ ...row(30_000 + i), rid: `many${i}` })));
      const asked = vi.spyOn((space as unknown as { table: Table }).table, 'query');
      try {
        const afterBulk = await space.searchText({ words: 'lighthouse', withRows: true }, { srcs: null }, 10);
        expect(afterBulk.map((h) => h.rid).sort()).toEqual(['batch0', 'batch1', 'batch2', 'batch3', 'batch4']);
        expect(asked).toHaveBeenCalled();
      } finally {
        asked.mockRestore();
      }
      for (let waited = 0; waited < 30_000 && !(await space.rowsInMemory()); waited += 100) space = await searchedFor(100);
      expect(await space.rowsInMemory()).toBe(true);
      expect(reads()).toBe(held + 1);
      expect((await space.searchVocabulary())!.current).toBe(true);
    } finally {
      await store.close();
      rmSync(dir2, { recursive: true, force: true });
    }
  }, 120_000);
});
