/**
 * Typo tolerance over a real index: with the space's vocabulary in memory, a word the selected tables hold
 * costs no lookup, a missing one is corrected to the same word the index lookups chose, the selected tables (and a
 * filter) scope it as they scoped the lookups, and a vocabulary of an older version of the space corrects only words
 * the index confirms missing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TableSchema } from '../../../src/connectors/index.js';
import { indexRowOf } from '../../../src/search-index/documents.js';
import { IndexSpace, IndexStore, spaceName, type SearchScope, type TextQuery } from '../../../src/search-index/index-store.js';
import { correctTypos } from '../../../src/search-index/typos.js';
import { until } from './support.js';

const SLOW = 60_000;
const docs: TableSchema = {
  name: 'docs', schema: null, primaryKey: ['id'], rowEstimate: 0, textColumns: ['body'], fullTextIndexes: [],
  columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'body', type: 'TEXT', searchable: true }],
};
const row = (src: string, id: number, body: string) => indexRowOf(src, docs, { id, body })!;

const shop = [
  ...Array.from({ length: 9 }, (_, i) => row('src_a', i + 1, `${['Wireless headphones', 'Electric kettle', 'Garden hose'][i % 3]} model ${i + 1}`)),
  row('src_a', 10, 'Kettles boil water faster than a pot; a kettle descaled with vinegar lasts'),
  row('src_b', 1, 'Orchids bloom in spring, kettel spelt wrong on purpose'),
  row('src_b', 2, 'Résumé writing for gardeners and héadphones reviewers'),
];

let dir: string;
let store: IndexStore;
let lookupsOnly: IndexStore;
let spaces = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-typos-'));
  store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
  // The same files without a vocabulary: what the index lookups answer.
  lookupsOnly = new IndexStore({ uri: dir, readConsistencySeconds: 0, vocabularyMaxTerms: 0 });
});
afterEach(() => vi.restoreAllMocks());
afterAll(async () => {
  await store?.close();
  await lookupsOnly?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A new space holding `rows`, its vocabulary built (a search starts the build; the test waits for it). */
async function spaceWith(rows = shop): Promise<{ name: string; space: IndexSpace }> {
  spaces += 1;
  const name = spaceName(`usr_t${spaces}`, 'test');
  const space = await store.ensureSpace(name);
  await space.append(rows);
  await space.optimize();
  await space.vocabulary();
  await space.vocabularyBuilt();
  return { name, space };
}

/** Counts the index queries (and rows asked for) of what `run` does. */
async function counted<T>(run: () => Promise<T>): Promise<{ result: T; queries: Array<{ words: string; limit: number }> }> {
  const spy = vi.spyOn(IndexSpace.prototype, 'searchText');
  const result = await run();
  const queries = spy.mock.calls.map(([query, , limit]) => ({ words: (query as TextQuery).words, limit: limit as number }));
  spy.mockRestore();
  return { result, queries };
}

const all: SearchScope = { srcs: null };

describe('correctTypos with the space\'s vocabulary', () => {
  it('when every word of the query is held by the selected tables, then the check asks the index nothing', async () => {
    const { space } = await spaceWith();
    const { result, queries } = await counted(() => correctTypos(space, { words: 'Wireless headphones for the electric kettles' }, all));
    expect(result.corrections).toEqual([]);
    expect(queries).toEqual([]);
  }, SLOW);

  it('when a word is misspelt, then it is corrected from the vocabulary without a lookup, to the word the lookups chose', async () => {
    const { name, space } = await spaceWith();
    const scope: SearchScope = { srcs: ['src_a'] };
    for (const typo of ['kettel', 'headfones', 'wirelesss', 'ketlte', 'eletcric', 'gardn']) {
      const { result, queries } = await counted(() => correctTypos(space, { words: `${typo} model` }, scope));
      expect(queries, typo).toEqual([]);
      const before = await correctTypos((await lookupsOnly.space(name))!, { words: `${typo} model` }, scope);
      expect(result.corrections, typo).toEqual(before.corrections);
    }
    const { result } = await counted(() => correctTypos(space, { words: 'kettel', require: ['kettel'] }, scope));
    expect(result).toEqual({ query: { words: 'kettle', require: ['kettle'] }, corrections: [{ word: 'kettel', correctedTo: 'kettle' }] });
  }, SLOW);

  it('when a word is held only by a table the search does not select, then it is missing there and corrected from the selected ones', async () => {
    const { name, space } = await spaceWith();
    expect((await correctTypos(space, { words: 'kettel' }, all)).corrections).toEqual([]);
    const onlyA = await correctTypos(space, { words: 'kettel orchids' }, { srcs: ['src_a'] });
    expect(onlyA.corrections).toEqual([{ word: 'kettel', correctedTo: 'kettle' }]);
    const before = await correctTypos((await lookupsOnly.space(name))!, { words: 'kettel orchids' }, { srcs: ['src_a'] });
    expect(onlyA.corrections).toEqual(before.corrections);
  }, SLOW);

  it('when a filter narrows the rows, then a word the tables hold is looked up in the filtered rows, and a correction must be in them', async () => {
    const { space } = await spaceWith();
    const filtered: SearchScope = { srcs: null, where: "src = 'src_a'" };
    const { result, queries } = await counted(() => correctTypos(space, { words: 'kettel' }, filtered));
    expect(result.corrections).toEqual([{ word: 'kettel', correctedTo: 'kettle' }]);
    expect(queries).toEqual([{ words: 'kettel', limit: 1 }, { words: 'kettle', limit: 1 }]);
    const none = await correctTypos(space, { words: 'orchid' }, { srcs: null, where: "src = 'src_a'" });
    expect(none.corrections).toEqual([]);
  }, SLOW);

  it('when the space is written after its vocabulary was built, then that one is used until the new one is built, and a word it lacks is looked up before it is corrected', async () => {
    const { space } = await spaceWith();
    const built = await space.vocabulary();
    await space.upsert([row('src_a', 11, 'A copper teapot')]);
    // The first search after the write starts the new build and is answered with the one built before.
    const held = await space.searchVocabulary();
    expect(held?.vocabulary).toBe(built);
    expect(held?.current).toBe(false);
    // "teapot" is only in the row written since: the index has it, so it is no typo.
    const stale = await counted(() => correctTypos(space, { words: 'teapot' }, all, held));
    expect(stale.result.corrections).toEqual([]);
    expect(stale.queries).toEqual([{ words: 'teapot', limit: 1 }]);
    // A typo of a word the older vocabulary holds: one lookup says it is missing, and the vocabulary corrects it.
    const typo = await counted(() => correctTypos(space, { words: 'kettel' }, { srcs: ['src_a'] }, held));
    expect(typo.result.corrections).toEqual([{ word: 'kettel', correctedTo: 'kettle' }]);
    expect(typo.queries).toEqual([{ words: 'kettel', limit: 1 }]);
    // Under a filter too: "kettler" is a row written since, not a typo of the "kettle" the older vocabulary holds.
    await space.upsert([row('src_a', 12, 'A copper kettler')]);
    const filtered = await counted(() => correctTypos(space, { words: 'kettler' }, { srcs: null, where: "src = 'src_a'" }, held));
    expect(filtered.result.corrections).toEqual([]);
    expect(filtered.queries).toEqual([{ words: 'kettler', limit: 1 }]);
    // A build starts at most once per four times the last one's duration: wait until one has.
    await until(async () => (await space.vocabulary()) !== null, 'the new vocabulary');
    const fresh = await counted(() => correctTypos(space, { words: 'teapot teapod' }, all));
    expect(fresh.result.corrections).toEqual([{ word: 'teapod', correctedTo: 'teapot' }]);
    expect(fresh.queries).toEqual([]);
  }, SLOW);

  it('when a space holds more words than the limit, then it keeps no vocabulary and words are looked up', async () => {
    spaces += 1;
    const name = spaceName(`usr_t${spaces}`, 'test');
    const small = new IndexStore({ uri: dir, readConsistencySeconds: 0, vocabularyMaxTerms: 5 });
    try {
      const space = await small.ensureSpace(name);
      await space.append(shop);
      await space.vocabulary();
      await space.vocabularyBuilt();
      expect(await space.vocabulary()).toBeNull();
      const { result, queries } = await counted(() => correctTypos(space, { words: 'kettel' }, all));
      expect(result.corrections).toEqual([]);
      expect(queries).toEqual([{ words: 'kettel', limit: 1 }]);
    } finally {
      await small.close();
    }
  }, SLOW);

  it('when the vocabularies of two spaces do not fit the limit together, then the one searched longest ago gives its up', async () => {
    const shared = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
    const sizes: number[] = [];
    const names = [1, 2].map(() => spaceName(`usr_t${(spaces += 1)}`, 'test'));
    for (const name of names) {
      const space = await shared.ensureSpace(name);
      await space.append(shop);
      await space.vocabulary();
      await space.vocabularyBuilt();
      sizes.push((await space.vocabulary())!.terms);
    }
    await shared.close();
    const small = new IndexStore({ uri: dir, readConsistencySeconds: 0, vocabularyMaxTerms: sizes[0]! + 1 });
    try {
      const [first, second] = await Promise.all(names.map(async (name) => (await small.space(name))!));
      await first!.vocabulary();
      await first!.vocabularyBuilt();
      expect(await first!.vocabulary()).not.toBeNull();
      await second!.vocabulary();
      await second!.vocabularyBuilt();
      expect(await second!.vocabulary()).not.toBeNull();
      expect(await first!.vocabulary()).toBeNull();
    } finally {
      await small.close();
    }
  }, SLOW);
});
