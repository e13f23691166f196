/**
 * Quarry's index as one engine of searchDatabases (search-core/engine.ts): one query per search space ranks every
 * indexed table of the plan at once (index-search.ts), so its ranking is one list whose scores compare across
 * databases; the page's rows get their stored fields and a snippet marked where they stem like the query.
 */
import type { DatabaseAnswer, DetailAsk, Engine, EngineHit, EnginePlan, RankAsk, Ranking, ResultRow } from '../search-core/engine.js';
import type { StageTimer } from '../lib/stage-timer.js';
import { indexTextQuery, queryStems } from './analyzer.js';
import type { FeedbackSettings } from './feedback.js';
import { hitDetails, searchIndex, type ColumnRef, type IndexedSource } from './index-search.js';
import type { IndexHit, IndexStore } from './index-store.js';

/** How the rows are narrowed, ordered, counted and weighed (the request's filter, sort, facets and weights). */
export interface IndexRefinements {
  where: string | null;
  sort: Array<{ column: ColumnRef; descending: boolean }>;
  facets: ColumnRef[];
  weights: Map<string, number>;
}

/** How the index ranks: by words, meaning or both, and what it does beyond the words as typed. */
export interface IndexRanking {
  mode: 'natural' | 'semantic' | 'hybrid';
  semanticRatio: number;
  typoTolerance: boolean;
  exactTotal: boolean;
  /** Query expansion: a second text query with the feedback model's words; null: off. */
  feedback: FeedbackSettings | null;
  /** Relevance feedback on the rows the text ranking read; null: off. */
  rerank: FeedbackSettings | null;
}

/** The index's part of one search. */
export interface IndexPlan extends EnginePlan {
  /** The caller's search space (one per user and environment). */
  space: string;
  /** The indexed tables it ranks. */
  sources: IndexedSource[];
  /** The databases the index answers for (those with an indexed table selected, even when a filter left it out). */
  databases: string[];
  /** The sources are every table of the space and nothing narrows them: the text query needs no filter. */
  wholeSpace: boolean;
  refinements: IndexRefinements;
  ranking: IndexRanking;
  /** Learns how long the index's own queries took. */
  timer?: StageTimer;
}

/** A row of the index's ranking: the hit as the index returned it. */
export type IndexRef = IndexHit;

export function indexPlanLists(sources: IndexedSource[]): number {
  return sources.length > 0 ? 1 : 0;
}

export class IndexEngine implements Engine<IndexPlan, IndexRef> {
  readonly name = 'index';

  constructor(private readonly store: Pick<IndexStore, 'space'>) {}

  async rank(plan: IndexPlan, ask: RankAsk): Promise<Ranking<IndexRef>> {
    const { refinements: r, ranking } = plan;
    const found = await searchIndex(this.store, {
      space: plan.space, sources: plan.sources, mode: ranking.mode, text: indexTextQuery(ask.words), vector: ask.vector, window: ask.window.top,
      semanticRatio: ranking.semanticRatio, wholeSpace: plan.wholeSpace,
      where: r.where, sort: r.sort, facets: r.facets, weights: r.weights,
      typoTolerance: ranking.typoTolerance, exactTotal: ranking.exactTotal, feedback: ranking.feedback, rerank: ranking.rerank, timer: plan.timer,
    });
    const sourceOf = new Map(plan.sources.map((s) => [s.src, s]));
    const hits = found.hits.map((hit, i): EngineHit<IndexRef> => ({
      id: `i:${hit.rid}`, rank: i + 1, score: hit.score, databaseId: sourceOf.get(hit.src)!.connectionId, engine: this.name, ref: hit,
    }));
    const databases = new Map(plan.databases.map((id): [string, DatabaseAnswer] => [id, {
      status: 'ok', error: null, tookMs: null, matches: found.matchesByConnection.get(id) ?? 0, approximate: false, byRankOnly: false,
    }]));
    return {
      // An empty ranking adds no list: the live lists alone are then fused as if the index had not been asked.
      lists: hits.length > 0 ? [hits] : [],
      scored: true,
      total: found.total,
      totalIsEstimate: found.totalIsEstimate,
      databases,
      tables: plan.sources.map((s) => ({ databaseId: s.connectionId, table: s.tableName, scanned: false })),
      corrections: found.corrections,
      facets: found.facets,
      facetsAreEstimate: found.totalIsEstimate,
    };
  }

  /** Stored fields and a snippet marking the query's stems, and those of the words typo tolerance read instead. */
  async details(plan: IndexPlan, rows: IndexRef[], ask: DetailAsk): Promise<Array<ResultRow | null>> {
    const stems = queryStems([indexTextQuery(ask.words).words, ...ask.corrections.map((c) => c.correctedTo)].join(' '));
    const details = await hitDetails(this.store, plan.space, rows, plan.sources, stems);
    const sourceOf = new Map(plan.sources.map((s) => [s.src, s]));
    return rows.map((hit) => {
      const detail = details.get(hit.rid);
      // A row a sync removed since it was ranked is left out.
      if (!detail) return null;
      const source = sourceOf.get(hit.src)!;
      return {
        table: source.tableName,
        primaryKey: Object.fromEntries(source.keyColumns.map((c) => [c, detail.fields[c] ?? detail.primaryKey[c] ?? null])),
        fields: detail.fields,
        snippet: detail.snippet,
        matchedColumns: detail.matchedColumns,
      };
    });
  }
}
