/** planSearch and routeSearch: which engine reads which table of each database, from the catalog alone; each engine's plan made from that route. */
import { describe, expect, it } from 'vitest';
import { planIndex } from '../../../../src/search-index/index-engine.js';
import { planLive } from '../../../../src/services/search/live-search.js';
import { planSearch, routeSearch, routeWithoutIndex, type SearchRoute } from '../../../../src/services/search/search-plan.js';
import { refine } from '../../../../src/services/search/search-refinements.js';
import { readPage, readQuery, type SearchRequest } from '../../../../src/services/search/search-request.js';
import { caller, fakeCatalog, indexed, record, table } from './fakes.js';

const secret = Buffer.alloc(32, 1);

/** The route with the part each engine plans from it. */
const withEnginePlans = (route: SearchRoute) => ({ ...route, index: planIndex(route), live: planLive(route) });

async function route(request: SearchRequest, records = [record('db_1'), record('db_2')]) {
  const catalog = fakeCatalog(
    { db_1: [table('posts'), table('drafts')], db_2: [table('notes')] },
    [indexed('db_1', 'posts'), indexed('db_1', 'drafts', { syncedAt: null }), indexed('db_2', 'notes')],
  );
  const asked = readQuery(request);
  const plans = await planSearch({ catalog, providerId: 'model-a' }, records, request, asked.mode);
  const refined = refine(request, plans.flatMap((p) => p.sources), records.map((r) => r.id), (src) => ({ databaseId: src, table: src }));
  const page = readPage(caller(), request, asked, secret);
  return withEnginePlans(routeSearch(plans, request, refined, { mode: asked.mode, semanticRatio: asked.semanticRatio, page, space: 'space_1', everyConnection: true }));
}

describe('planSearch', () => {
  it('when a table has a finished sync, then the index answers it; a table without one is searched live and says why', async () => {
    const { plans, index, live } = await route({ query: 'word' });
    expect(plans[0]!.sources.map((s) => s.tableName)).toEqual(['posts']);
    expect(plans[0]!.live).toEqual([{ table: 'drafts', reason: 'not_synced_yet' }]);
    expect(plans[1]!.live).toEqual([]);
    expect(index.sources.map((s) => s.src)).toEqual(['src_db_1_posts', 'src_db_2_notes']);
    expect(index.databases).toEqual(['db_1', 'db_2']);
    expect(index.lists).toBe(1);
    expect(live.databases.map((d) => [d.record.id, [...d.skip]])).toEqual([['db_1', ['posts']]]);
  });

  it('when a connection has indexing off or the caller asks for live results, then every table is searched live', async () => {
    const off = await route({ query: 'word' }, [record('db_1', { indexEnabled: false })]);
    expect(off.plans[0]!.live.map((t) => t.reason)).toEqual(['indexing_off', 'indexing_off']);
    expect(off.index.sources).toEqual([]);
    const asked = await route({ query: 'word', live: true });
    expect(asked.plans.flatMap((p) => p.live.map((t) => t.reason))).toEqual(['live_requested', 'live_requested', 'live_requested']);
  });

  it('when the mode is boolean, then no table is read from the index (it matches words, not phrases)', async () => {
    const { plans, index } = await route({ query: '"a phrase"', searchMode: 'boolean' });
    expect(plans.flatMap((p) => p.live.map((t) => t.reason))).toEqual(['boolean_mode', 'boolean_mode', 'boolean_mode']);
    expect(index.lists).toBe(0);
  });

  it("when a database's tables cannot be read, then it is left to the live search, which reports why", async () => {
    const catalog = fakeCatalog({}, [], ['db_1']);
    const [plan] = await planSearch({ catalog, providerId: 'm' }, [record('db_1')], { query: 'word' }, 'natural');
    expect(plan!.searchLive).toBe(true);
    expect(plan!.sources).toEqual([]);
  });

  it('when a filter is asked, then tables searched live are left out as not_indexed and the live engine reads nothing', async () => {
    const { excluded, live, byIndexOnly } = await route({ query: 'word', filter: { column: 'price', op: 'gt', value: 1 } } as SearchRequest);
    expect(byIndexOnly).toBe(true);
    expect(excluded).toEqual([{ databaseId: 'db_1', table: 'drafts', reason: 'not_indexed' }]);
    expect(live.databases).toEqual([]);
  });

  it('when the index is down, then its tables move to the live engine as index_unavailable', async () => {
    const request = { query: 'word' };
    const down = withEnginePlans(routeWithoutIndex(await route(request)));
    expect(down.index.sources).toEqual([]);
    expect(down.index.lists).toBe(0);
    expect(down.plans[1]!.live).toEqual([{ table: 'notes', reason: 'index_unavailable' }]);
    expect(down.live.databases.map((d) => d.record.id)).toEqual(['db_1', 'db_2']);
  });

  it('when semantic tables are embedded with another model, then they are listed as not searched by meaning', async () => {
    const catalog = fakeCatalog({ db_1: [table('posts')] }, [indexed('db_1', 'posts', { semantic: true, vectorModel: 'old-model' })]);
    const [plan] = await planSearch({ catalog, providerId: 'new-model' }, [record('db_1')], { query: 'word' }, 'semantic');
    expect(plan!.notSemantic.map((t) => t.reason)).toEqual(['model_changed']);
    expect(plan!.sources[0]!.semanticReady).toBe(false);
  });
});
