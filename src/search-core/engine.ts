/**
 * What searchDatabases asks of an engine, whichever it is: Quarry's own index (src/search-index/index-engine.ts) or the
 * users' databases searched live (src/services/search/live-search.ts). Each engine makes its own plan (what it reads
 * of this search) from the search's route: the selected connections' tables as the catalog knows them, routed between
 * the engines, and the request. It ranks its part of the search into ranked lists, and later gives the details
 * (fields, snippet) of the rows that made the page. The search service asks every engine at once, fuses their lists
 * (search-merge.ts) and pages the result (search-page.ts) without knowing which engine a row came from.
 */
import type { CompiledQuery } from './query.js';
import type { Ranked } from './rrf.js';

/** One row of an engine's ranked list. */
export interface EngineHit<Ref> extends Ranked {
  /** The engine's own score; shown only when its ranking stands alone (`Ranking.scored`). */
  score: number;
  databaseId: string;
  /** The engine that ranked it, by the name the search knows it by (it is asked for the row's details). */
  engine: string;
  /** The engine's own handle on the row, given back to it for the row's details. */
  ref: Ref;
}

/** How one database took part in one engine's ranking. */
export interface DatabaseAnswer {
  status: 'ok' | 'timeout' | 'error';
  /** Why it did not answer, in words safe to show. */
  error: { code: string; message: string } | null;
  /** Its own time; null when one query ranked every database at once (it took as long as the whole ranking). */
  tookMs: number | null;
  matches: number;
  /** Its ranking is the best of a bounded set of candidates, not of every match. */
  approximate: boolean;
  /** Its rows are merged with others by rank alone: their order is approximate whenever the answer is fused. */
  byRankOnly: boolean;
}

/** A word read as another (typo tolerance). */
export interface Correction {
  word: string;
  correctedTo: string;
}

export type FacetCounts = Record<string, Array<{ value: unknown; count: number }>>;

/** One engine's answer to one reading of the query. */
export interface Ranking<Ref> {
  /** Ranked lists, each best first; rows of different lists are compared by rank only. */
  lists: Array<Array<EngineHit<Ref>>>;
  /** Its scores are comparable across its (one) list: when no other list takes part they are the results' scores. */
  scored: boolean;
  total: number;
  totalIsEstimate: boolean;
  /** Every database the engine was planned to read, whether it answered or not. */
  databases: Map<string, DatabaseAnswer>;
  /** The tables it read; `scanned`: without a full-text index (a bounded scan). */
  tables: Array<{ databaseId: string; table: string; scanned: boolean }>;
  corrections: Correction[];
  /** Counted values of the asked facets (empty when none were asked or the engine cannot count them). */
  facets: FacetCounts;
  facetsAreEstimate: boolean;
}

/** The rows every engine ranks and the page cut from their fused order. */
export interface PageWindow {
  offset: number;
  limit: number;
  /** offset + limit: every engine ranks this many, so the fused order never depends on the page asked before. */
  top: number;
}

/** What one ranking of the search asks every engine (a relaxed reading of the query asks again). */
export interface RankAsk {
  words: CompiledQuery;
  /** The query's embedding (semantic and hybrid), or null. */
  vector: Float32Array | null;
  window: PageWindow;
  /** Lists the other engines add to the fusion (which of this engine's rows can still reach the page). */
  mergedWith: number;
  /** The search's deadline (ms since the epoch): a database that has not answered by then is reported, not waited for. */
  deadline: number;
}

/** What the details of a page ask: the words the ranking matched, to mark in snippets. */
export interface DetailAsk {
  words: CompiledQuery;
  corrections: Correction[];
  deadline: number;
}

/** A page row as results show it. */
export interface ResultRow {
  table: string;
  primaryKey: Record<string, unknown>;
  fields: Record<string, unknown>;
  snippet: string;
  matchedColumns: string[];
}

/** What every plan says before ranking: the fewest ranked lists it adds to the fusion. */
export interface EnginePlan {
  lists: number;
}

/** `Search`: what the engine reads of the search's route to make its plan; `Ref`: its handle on a ranked row. */
export interface Engine<Search, Plan extends EnginePlan, Ref> {
  /** How the search knows it; every hit it ranks carries it (`EngineHit.engine`). */
  readonly name: string;
  /** Its part of the search: what it reads of the route, and how. Made again when the route changes (the index is down). */
  plan(search: Search): Plan;
  /** Ranks the plan's part of the search for one reading of the query. */
  rank(plan: Plan, ask: RankAsk): Promise<Ranking<Ref>>;
  /** The page rows' details, in order; null for a row that vanished since it was ranked. */
  details(plan: Plan, rows: Ref[], ask: DetailAsk): Promise<Array<ResultRow | null>>;
}

/** A value as JSON can carry it: dates as ISO text, big integers and bytes as text. */
export function plainValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

/** A row's key values as one text (a result's id, and a row's identity across its engine's lists). */
export const keyText = (values: unknown[]): string => values.map((v) => String(plainValue(v))).join(',');
