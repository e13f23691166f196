/**
 * Quarry's index as one engine of searchDatabases (search-core/engine.ts): one query per search space ranks every
 * indexed table of the plan at once (index-search.ts), so its ranking is one list whose scores compare across
 * databases; the page's rows get their stored fields and a snippet marked where they stem like the query.
 */
import type { DatabaseAnswer, DetailAsk, Engine, EngineHit, EnginePlan, RankAsk, Ranking, ResultRow } from '../search-core/engine.js';
import type { StageTimer } from '../lib/stage-timer.js';
import { indexTextQuery, queryStems } from './analyzer.js';
import { RM3, type FeedbackSettings } from './feedback.js';
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

/**
 * What the index plans its part of a search from: each database the search reads with the tables its planning gave
 * the index, those a filter left in, and what the request asks of the ranking.
 */
export interface IndexSearch {
  plans: Array<{ record: { id: string }; sources: IndexedSource[]; wholeIndex: boolean }>;
  refined: IndexRefinements & { sources: IndexedSource[] };
  request: { tables?: string[] | null };
  mode: 'natural' | 'semantic' | 'hybrid' | 'boolean';
  semanticRatio: number;
  page: { typoTolerance: boolean; exactTotal: boolean; queryExpansion: boolean; relevanceFeedback: boolean };
  /** The caller's search space. */
  space: string;
  /** Every connection of the environment is read (no publishable key's or plan's cap left one out). */
  everyConnection: boolean;
  timer?: StageTimer;
}

/** The index's part of a search: the tables a filter left in, ranked in one query (one list, when there are any). */
export function planIndex(search: IndexSearch): IndexPlan {
  const { refined, mode, page } = search;
  return {
    space: search.space,
    sources: refined.sources,
    lists: refined.sources.length > 0 ? 1 : 0,
    databases: search.plans.filter((p) => p.sources.length > 0).map((p) => p.record.id),
    // Every connection of the environment, every table: no filter (a publishable key's or a plan's cap may leave some out).
    wholeSpace: search.everyConnection && search.plans.every((p) => p.wholeIndex) && (search.request.tables ?? []).length === 0,
    refinements: { where: refined.where, sort: refined.sort, facets: refined.facets, weights: refined.weights },
    ranking: {
      mode: mode === 'boolean' ? 'natural' : mode, semanticRatio: search.semanticRatio, typoTolerance: page.typoTolerance, exactTotal: page.exactTotal,
      feedback: page.queryExpansion ? RM3 : null, rerank: page.relevanceFeedback ? RM3 : null,
    },
    timer: search.timer,
  };
}

export class IndexEngine implements Engine<IndexSearch, IndexPlan, IndexRef> {
  readonly name = 'index';

  constructor(private readonly store: Pick<IndexStore, 'space'>) {}

  plan(search: IndexSearch): IndexPlan {
    return planIndex(search);
  }

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
