/**
 * One ranking from many: the index's ranking of every indexed table and each live table's ranking from its own
 * database. Scores are comparable only inside the index, so the index's ranking stands alone when no table is
 * searched live; otherwise all rankings are merged by reciprocal rank fusion and the answer says it is approximate.
 * Every source ranks its top (offset + limit) rows, so a page is cut from the same merged order whatever was asked before.
 */
import { fuse, type Ranked } from '../../search-core/rrf.js';
import type { RankedRow } from '../../sql-search/types.js';
import type { HitDetail, IndexedSource, IndexSearchResult } from '../../search-index/index-search.js';
import type { IndexHit } from '../../search-index/index-store.js';
import { keyText, targetName, type LiveOutcome, type TableOutcome } from './live-search.js';
import type { DatabasePlan } from './search-plan.js';

/** A row of some source's ranking, with the plan of the database it came from. */
export type Candidate = Ranked & { plan: DatabasePlan } & (
  | { kind: 'index'; hit: IndexHit; source: IndexedSource; detail?: HitDetail }
  | { kind: 'live'; outcome: LiveOutcome; table: TableOutcome; row: RankedRow }
);

export interface Answer {
  page: Array<{ item: Candidate; score: number }>;
  total: number;
  totalIsEstimate: boolean;
  approximate: boolean;
}

/** The merged ranking's page at `offset`, with the totals of every source. */
export function merge(plans: DatabasePlan[], sources: IndexedSource[], indexed: IndexSearchResult, live: LiveOutcome[], offset: number, limit: number): Answer {
  const planOf = new Map(plans.map((p) => [p.record.id, p]));
  const sourceOf = new Map(sources.map((s) => [s.src, s]));
  const indexList: Candidate[] = indexed.hits.map((hit, i) => {
    const source = sourceOf.get(hit.src)!;
    return { kind: 'index', id: `i:${hit.rid}`, rank: i + 1, hit, source, plan: planOf.get(source.connectionId)! };
  });
  const liveLists: Candidate[][] = live.flatMap((outcome) => outcome.tables.map((table) => table.ranking.rows.map((row, i): Candidate => ({
    kind: 'live', id: `${outcome.record.id}:${targetName(table.queries.target)}:${keyText(row.keys)}`, rank: i + 1,
    outcome, table, row, plan: planOf.get(outcome.record.id)!,
  }))));
  const liveTotal = live.reduce((sum, o) => sum + o.tables.reduce((s, t) => s + t.ranking.total, 0), 0);
  const liveEstimate = live.some((o) => o.tables.some((t) => t.ranking.totalIsEstimate));
  const total = indexed.total + liveTotal;
  const totalIsEstimate = indexed.totalIsEstimate || liveEstimate;
  if (liveLists.length === 0) {
    return { page: indexList.slice(offset, offset + limit).map((item) => ({ item, score: item.kind === 'index' ? item.hit.score : 0 })), total, totalIsEstimate, approximate: false };
  }
  const fused = fuse(indexList.length > 0 ? [indexList, ...liveLists] : liveLists);
  return { page: fused.slice(offset, offset + limit), total, totalIsEstimate, approximate: indexList.length > 0 || liveLists.length > 1 };
}
