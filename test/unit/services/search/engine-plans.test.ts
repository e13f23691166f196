/** IndexEngine.plan and LiveEngine.plan: each engine's part of a search, made by the engine from the search's route. */
import { describe, expect, it } from 'vitest';
import { RM3 } from '../../../../src/search-index/feedback.js';
import { IndexEngine } from '../../../../src/search-index/index-engine.js';
import { LiveEngine } from '../../../../src/services/search/live-search.js';
import { planSearch, routeSearch, routeWithoutIndex } from '../../../../src/services/search/search-plan.js';
import { refine } from '../../../../src/services/search/search-refinements.js';
import { readPage, readQuery, type SearchRequest } from '../../../../src/services/search/search-request.js';
import { caller, fakeCatalog, indexed, record, table } from './fakes.js';

// Planning reads neither LanceDB nor a database: the engines are made over nothing they could reach.
const index = new IndexEngine({} as never);
const live = new LiveEngine({ catalog: { liveSchema: () => Promise.reject(new Error('not read by planning')) }, onError: () => undefined, timeoutMs: 1_000 });

/** db_1: posts synced, drafts not; db_2: notes synced (and an indexed table of db_2 the request may leave out). */
async function route(request: SearchRequest, options: { everyConnection?: boolean } = {}) {
  const records = [record('db_1'), record('db_2')];
  const catalog = fakeCatalog(
    { db_1: [table('posts'), table('drafts')], db_2: [table('notes', { columns: [{ name: 'id', type: 'integer', searchable: false }, { name: 'body', type: 'text', searchable: true }] })] },
    [indexed('db_1', 'posts'), indexed('db_2', 'notes', { filterableColumns: [], syncedColumns: { filterable: [], sortable: [] } })],
  );
  const asked = readQuery(request);
  const plans = await planSearch({ catalog, providerId: 'model-a' }, records, request, asked.mode);
  const tableOf = (src: string) => ({ databaseId: src, table: src });
  const refined = refine(request, plans.flatMap((p) => p.sources), records.map((r) => r.id), tableOf);
  const page = readPage(caller(), request, asked, Buffer.alloc(32, 1));
  return routeSearch(plans, request, refined, {
    mode: asked.mode, semanticRatio: asked.semanticRatio, page, space: 'space_1', everyConnection: options.everyConnection ?? true,
  });
}

describe('IndexEngine.plan', () => {
  it('when every connection and every indexed table is read, then it ranks them all in one list over the whole space', async () => {
    const plan = index.plan(await route({ query: 'word' }));
    expect(plan.sources.map((s) => s.src)).toEqual(['src_db_1_posts', 'src_db_2_notes']);
    expect(plan.lists).toBe(1);
    expect(plan.databases).toEqual(['db_1', 'db_2']);
    expect(plan.wholeSpace).toBe(true);
    expect(plan.space).toBe('space_1');
    // Relevance feedback is on unless asked off; query expansion only when asked.
    expect(plan.ranking).toMatchObject({ mode: 'natural', typoTolerance: true, feedback: null, rerank: RM3 });
  });

  it("when a key's cap leaves a connection out or the request names tables, then the space is not searched whole", async () => {
    expect(index.plan(await route({ query: 'word' }, { everyConnection: false })).wholeSpace).toBe(false);
    expect(index.plan(await route({ query: 'word', tables: ['posts', 'notes'] })).wholeSpace).toBe(false);
  });

  it('when a filter leaves a table out, then the index ranks the others and still answers for its database', async () => {
    const request = { query: 'word', filter: { column: 'price', op: 'gt', value: 1 } } as SearchRequest;
    const plan = index.plan(await route(request));
    expect(plan.sources.map((s) => s.src)).toEqual(['src_db_1_posts']);
    expect(plan.databases).toEqual(['db_1', 'db_2']);
    expect(plan.refinements.where).not.toBeNull();
  });

  it('when the caller asks for query expansion, then it is planned with RM3 instead of relevance feedback; asked off, neither', async () => {
    const expanded = index.plan(await route({ query: 'word', queryExpansion: true } as SearchRequest));
    expect([expanded.ranking.feedback, expanded.ranking.rerank]).toEqual([RM3, null]);
    const plain = index.plan(await route({ query: 'word', relevanceFeedback: false } as SearchRequest));
    expect([plain.ranking.feedback, plain.ranking.rerank]).toEqual([null, null]);
  });

  it('when the index is down, then it has nothing to rank and adds no list', async () => {
    const plan = index.plan(routeWithoutIndex(await route({ query: 'word' })));
    expect(plan.sources).toEqual([]);
    expect(plan.lists).toBe(0);
    expect(plan.databases).toEqual([]);
  });
});

describe('LiveEngine.plan', () => {
  it('when a database has a table left to it, then it reads that database without the tables the index answers, one list each', async () => {
    const plan = live.plan(await route({ query: 'word', tables: ['posts', 'drafts'] }));
    expect(plan.databases.map((d) => [d.record.id, [...d.skip]])).toEqual([['db_1', ['posts']]]);
    expect(plan.lists).toBe(1);
    expect(plan.filters.tables).toEqual(['posts', 'drafts']);
  });

  it('when the search is semantic or filters, then the live databases read nothing (they rank words, not meaning or columns)', async () => {
    expect(live.plan(await route({ query: 'word', searchMode: 'hybrid', semanticRatio: 1 } as SearchRequest)).databases).toHaveLength(1);
    expect(live.plan({ ...(await route({ query: 'word' })), mode: 'semantic' }).databases).toEqual([]);
    expect(live.plan(await route({ query: 'word', sort: [{ column: 'price', direction: 'asc' }] } as SearchRequest)).databases).toEqual([]);
  });

  it('when the index is down, then every database is read live, its indexed tables too', async () => {
    const plan = live.plan(routeWithoutIndex(await route({ query: 'word' })));
    expect(plan.databases.map((d) => [d.record.id, [...d.skip]])).toEqual([['db_1', []], ['db_2', []]]);
    expect(plan.lists).toBe(2);
  });
});
