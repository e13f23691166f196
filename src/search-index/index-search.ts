/**
 * Search over Quarry's own index: one query per search space ranks every selected indexed table
 * at once.
 *
 * - natural: BM25 over the rows' text in the space's one statistics space; any word may match, `-word` excludes,
 *   and a word no selected row contains is corrected when it is a likely typo (typos.ts). With relevance feedback
 *   (on by default in the API), the best RANK_DEPTH rows the ranking query read are scored again with RM3's expanded
 *   query from the space's statistics in memory (feedback.ts), without another index query.
 * - semantic: cosine similarity to the query's embedding over the rows of tables searched semantically (at least
 *   MIN_SIMILARITY).
 * - hybrid: both rankings of the same index, fused by a convex combination of normalised scores, the meaning's weight
 *   following how far the two rankings agree (fusion.ts). With relevance feedback the model comes from the fused
 *   ranking's best rows (the mode's own answer), the text ranking's rows are scored again with it, and fused again.
 *
 * A compiled filter (filters.ts) narrows the rows; weights per database scale scores; `sort` orders by columns with
 * ties by relevance; facets count values. Counting every match of an any-word query would score most of the table,
 * so a search costs what ranking its page costs: one query ranks the page's rows (at least RANK_DEPTH,
 * the rows the heading's weight may reorder, weighed in Quarry from the space's statistics: heading.ts) and one more,
 * bringing their stored fields with them, and when that one is there the total is estimated from how many rows hold
 * each query word (vocabulary.ts), never below the rows seen, and says so (`totalIsEstimate`, as Meilisearch's
 * `estimatedTotalHits`; with a filter, phrase or exclusion it is the rows seen, a lower bound). A caller who needs the count
 * asks for it (`exactTotal`): matches are then counted up to COUNT_CAP. Weights, sorting and facets work over the
 * counted matches, so a search that uses them counts up to COUNT_CAP too, and so does hybrid mode (its fusion needs
 * the text's deeper rows); beyond the cap the answer says so
 * (`totalIsEstimate`, `facetsAreEstimate`). Results carry the row's stored fields and a
 * snippet Quarry cuts from its text, marking the words that stem like the query's.
 */
import { highlightByStems, queryStems } from './analyzer.js';
import type { ColumnKind } from './filter-columns.js';
import { rankWithFeedback, rerankWithFeedback, type FeedbackSettings } from './feedback.js';
import { agreementFusion } from './fusion.js';
import { HeadingScorer } from './heading.js';
import type { IndexHit, IndexStore, SearchScope, TextQuery } from './index-store.js';
import type { RowWords } from './row-words.js';
import { correctTypos, type Correction } from './typos.js';
import type { SpaceVocabulary } from './vocabulary.js';
import type { StageTimer } from '../lib/stage-timer.js';

/** Matches counted exactly; a search whose matches reach it reports COUNT_CAP and `totalIsEstimate`. */
export const COUNT_CAP = 1100;
/**
 * Rows the engine ranks for a search that counts nothing, at the least: the heading's weight reorders the text's
 * best rows, and deeper pages rank deeper (offset + limit, never more than MAX_WINDOW).
 */
export const RANK_DEPTH = 100;
/**
 * Headings whose weight is added to the text's scores, whatever the page: the heading's weight of a row on the page
 * does not depend on how many rows the page counts, so a page ranks as it did when every search counted COUNT_CAP.
 */
export const HEADING_DEPTH = COUNT_CAP + 1;
/** Rows below this cosine similarity are not matches of a semantic search. */
export const MIN_SIMILARITY = 0.2;
/** Candidates each ranking of a hybrid search contributes to the fusion, at the least. */
export const HYBRID_DEPTH = 100;
/** Values listed per facet, most frequent first. */
export const FACET_VALUES = 10;

/** An indexed table as search sees it. */
export interface IndexedSource {
  src: string;
  connectionId: string;
  /** As results name it (`schema.table` outside PostgreSQL's public). */
  tableName: string;
  keyColumns: string[];
  textColumns: string[];
  /** Its rows have vectors of the current model. */
  semanticReady: boolean;
}

/** A column to sort or facet by, by its name in the index. */
export interface ColumnRef {
  name: string;
  physical: string[];
  kind: ColumnKind;
}

export interface IndexSearchInput {
  space: string;
  sources: IndexedSource[];
  mode: 'natural' | 'semantic' | 'hybrid';
  text: TextQuery;
  /** The query's embedding (semantic and hybrid). */
  vector: Float32Array | null;
  /** Rows the search must rank (offset + limit). */
  window: number;
  /** The sources are every table of the space and no filter narrows them: the text search needs no filter. */
  wholeSpace: boolean;
  semanticRatio: number;
  /** The compiled `filter` (its tables are already the only sources). */
  where?: string | null;
  typoTolerance?: boolean;
  /** Count matches up to COUNT_CAP; otherwise the total is counted among the rows ranked for the page. */
  exactTotal?: boolean;
  /** Factor on each connection's scores (absent: 1). */
  weights?: Map<string, number>;
  sort?: Array<{ column: ColumnRef; descending: boolean }>;
  facets?: ColumnRef[];
  /** Learns how long the engine's ranking queries took (stage `engine`). */
  timer?: StageTimer;
  /**
   * Pseudo-relevance feedback (RM3, feedback.ts) searched over the whole index: the model's words run as a second
   * text query (`queryExpansion`); absent or null: off. It takes the place of `rerank`.
   */
  feedback?: FeedbackSettings | null;
  /**
   * Pseudo-relevance feedback on the rows the text ranking read: its best RANK_DEPTH rows scored again with the
   * expanded query from the space's statistics in memory, no second index query; absent or null: off (and off while
   * the space's statistics are being gathered).
   */
  rerank?: FeedbackSettings | null;
}

export interface IndexSearchResult {
  /** Ranked best first (or by `sort`), at most `window`. */
  hits: IndexHit[];
  total: number;
  totalIsEstimate: boolean;
  /** Matches per connection id (within the counted matches). */
  matchesByConnection: Map<string, number>;
  facets: Record<string, Array<{ value: unknown; count: number }>>;
  corrections: Correction[];
}

export interface HitDetail {
  primaryKey: Record<string, unknown>;
  fields: Record<string, unknown>;
  snippet: string;
  matchedColumns: string[];
}

const byScore = (a: IndexHit, b: IndexHit) => b.score - a.score || (a.rid < b.rid ? -1 : a.rid > b.rid ? 1 : 0);

export async function searchIndex(store: Pick<IndexStore, 'space'>, input: IndexSearchInput): Promise<IndexSearchResult> {
  const result: IndexSearchResult = { hits: [], total: 0, totalIsEstimate: false, matchesByConnection: new Map(), facets: {}, corrections: [] };
  const space = input.sources.length > 0 ? await store.space(input.space) : null;
  if (!space) return result;
  const columns = [...new Set([...(input.sort ?? []).flatMap((s) => s.column.physical), ...(input.facets ?? []).flatMap((f) => f.physical)])];
  const scope: SearchScope = {
    srcs: input.wholeSpace && !input.where ? null : input.sources.map((s) => s.src),
    where: input.where ?? null,
    columns,
  };
  const semanticScope: SearchScope = { ...scope, srcs: input.sources.filter((s) => s.semanticReady).map((s) => s.src) };

  // The space's words and headings in memory (null while they are gathered): typo checks and headings read them.
  // Of an older version while the space's current words are gathered (a written space): its statistics are as good.
  const held = input.mode === 'semantic' ? null : await space.searchVocabulary();
  const vocabulary = held?.vocabulary ?? null;
  // The text ranking, with typos corrected: the check runs beside the query as typed, which is the answer unless a
  // word turns out to be missing and is corrected (then the query runs again with the correction). The engine
  // returns rows of equal score in no fixed order: ties go by id, so pages never overlap or skip a row.
  let textQuery: TextQuery = input.text;
  const reranks = Boolean(input.rerank) && !input.feedback && vocabulary !== null;
  const searchText = async (limit: number, withRows = false): Promise<IndexHit[]> => {
    const ranking = (query: TextQuery) => {
      // The rows brought with their stored fields are the page's: their text comes too, for the feedback to read.
      const ask = () => space.searchText({ ...rankingQuery(query, vocabulary, withRows), ...(withRows && reranks ? { withWords: true } : {}) }, scope, limit);
      return input.timer ? input.timer.time('engine', ask) : ask();
    };
    const [asTyped, corrected] = await Promise.all([
      ranking(input.text),
      input.typoTolerance ? correctTypos(space, input.text, scope, held) : null,
    ]);
    if (!corrected || corrected.corrections.length === 0) return asTyped.sort(byScore);
    result.corrections = corrected.corrections;
    textQuery = corrected.query;
    return (await ranking(corrected.query)).sort(byScore);
  };
  // With feedback, the text ranking is the query expanded from its own best rows (feedback.ts): the rows
  // it read scored again (rerank), or the expanded query searched over the index (feedback).
  const rankText = async (limit: number, withRows = false): Promise<IndexHit[]> => {
    const first = await searchText(limit, withRows);
    if (input.feedback) {
      return (await rankWithFeedback(space, { ...textQuery, headings: true, headingDepth: HEADING_DEPTH }, first, scope, limit, input.feedback)).sort(byScore);
    }
    return input.mode === 'hybrid' ? first : rerank(first, first);
  };
  /**
   * The text ranking `first` with its best RANK_DEPTH rows scored again with RM3's expanded query, the model built
   * from `feedback`'s best rows: the answer's own best rows, so the text ranking's in natural mode and the fused
   * ranking's in hybrid mode.
   */
  const rerank = async (first: IndexHit[], feedback: IndexHit[]): Promise<IndexHit[]> => {
    if (!reranks || first.length === 0 || textQuery.fuzziness) return first;
    const started = performance.now();
    const pool = first.slice(0, RANK_DEPTH);
    const known = new Set(pool.map((hit) => hit.rid));
    const read = [...pool, ...feedback.slice(0, input.rerank!.docs).filter((hit) => !known.has(hit.rid))];
    // Rows ranked deeper than the page (counting, hybrid) come without their text, and so do the rows only the
    // meaning ranking found: the rows to score and the feedback rows are read by id.
    // Rows held in memory bring their words counted already (row-words.ts), others their text.
    const texts: Map<string, string | RowWords> = read.every((hit) => hit.words !== undefined || hit.text !== undefined)
      ? new Map(read.map((hit) => [hit.rid, hit.words ?? hit.text!]))
      : await space.texts(read.map((hit) => hit.rid));
    const reranked = await rerankWithFeedback(textQuery.words, first, texts, (stems) => vocabulary!.textStatistics(stems), RANK_DEPTH, input.rerank!, feedback);
    for (const hit of reranked) {
      delete hit.text;
      delete hit.words;
    }
    input.timer?.add('rerank', performance.now() - started);
    return reranked;
  };

  // Weights, sorting and facets work over the counted matches: they need them counted.
  const counts = input.exactTotal === true || (input.weights?.size ?? 0) > 0 || (input.sort?.length ?? 0) > 0 || (input.facets?.length ?? 0) > 0;
  /** Matches counted at most; one more row found says more match. */
  let cap = COUNT_CAP;
  let counted: IndexHit[];
  let ranked: IndexHit[];
  if (input.mode === 'natural') {
    if (!counts) cap = Math.max(input.window, RANK_DEPTH);
    // Rows ranked for the page alone are few: on a local disk they bring their stored fields with them (no second
    // read of the page). On an object store each row's fields are a request of their own: only the page's rows are
    // read, once ranked (the details step), unless the space's rows are in memory (row-cache.ts).
    const carried = !counts && (!space.onObjectStore || (await space.rowsInMemory()));
    counted = await rankText(cap + 1, carried);
    ranked = counted;
  } else if (input.mode === 'semantic') {
    counted = input.vector ? (await space.searchVector(input.vector, semanticScope, COUNT_CAP + 1, MIN_SIMILARITY)).sort(byScore) : [];
    ranked = counted;
  } else {
    const depth = Math.max(input.window, HYBRID_DEPTH);
    // A ranking with no weight (semanticRatio 0 or 1) neither ranks nor adds rows of its own.
    // The fusion normalises the text's best rows as the heading's weight reorders them, which rows deeper than the
    // fusion's depth may enter: the text ranking reads COUNT_CAP rows, and so counts them, whatever was asked.
    const textLimit = Math.max(depth, COUNT_CAP + 1);
    const [firstByText, byMeaning] = await Promise.all([
      input.semanticRatio < 1 ? rankText(textLimit) : Promise.resolve([]),
      input.vector && input.semanticRatio > 0 ? space.searchVector(input.vector, semanticScope, depth, MIN_SIMILARITY) : Promise.resolve([]),
    ]);
    const fuse = (byText: IndexHit[]) => agreementFusion(byText.slice(0, depth), byMeaning, input.semanticRatio, { text: 0, vector: MIN_SIMILARITY });
    // Pseudo-relevance feedback takes the answer's own best rows as relevant: hybrid's answer is the fusion, so the
    // model comes from the fused ranking's best rows, weighted by their fused scores, rows only the meaning found
    // among them. The text ranking's rows are then scored again with the expanded query and fused once more.
    const fusedFirst = fuse(firstByText);
    const byText = await rerank(firstByText, fusedFirst);
    ranked = byText === firstByText ? fusedFirst : fuse(byText);
    // Every text match counts, and so does every row only the meaning ranking found.
    const seen = new Set(ranked.map((h) => h.rid));
    counted = [...ranked, ...byText.filter((h) => !seen.has(h.rid) && seen.add(h.rid)), ...byMeaning.filter((h) => !seen.has(h.rid) && seen.add(h.rid))];
    // Rows outside the fused lists rank after them, by nothing but their column values when sorted.
    const fused = new Set(ranked.map((h) => h.rid));
    for (const hit of counted) if (!fused.has(hit.rid)) hit.score = 0;
    ranked = counted;
  }

  const connectionOf = new Map(input.sources.map((s) => [s.src, s.connectionId]));
  // Rows a failed clean-up left behind belong to no source: never an answer.
  counted = counted.filter((h) => connectionOf.has(h.src)).slice(0, cap + 1);
  ranked = ranked.filter((h) => connectionOf.has(h.src));
  if (input.weights && input.weights.size > 0) {
    ranked = ranked.map((h) => ({ ...h, score: h.score * (input.weights!.get(connectionOf.get(h.src)!) ?? 1) })).sort(byScore);
  }
  if (input.sort && input.sort.length > 0) ranked = sortByColumns(ranked, input.sort);

  const within = counted.slice(0, cap);
  for (const hit of within) {
    const id = connectionOf.get(hit.src)!;
    result.matchesByConnection.set(id, (result.matchesByConnection.get(id) ?? 0) + 1);
  }
  for (const facet of input.facets ?? []) result.facets[facet.name] = facetCounts(within, facet);
  result.hits = ranked.slice(0, input.window);
  result.total = within.length;
  result.totalIsEstimate = counted.length > cap;
  // More match than the page's rows: the total is estimated from how many rows hold each word, without reading them.
  if (result.totalIsEstimate && !counts && input.mode === 'natural' && vocabulary) {
    estimateTotal(result, vocabulary, textQuery, scope, input.sources);
  }
  return result;
}

/** The ranking query: headings weighed from the space's statistics when they are in memory. */
function rankingQuery(query: TextQuery, vocabulary: SpaceVocabulary | null, withRows: boolean): TextQuery {
  const stems = vocabulary ? queryStems(query.words) : null;
  return {
    ...query,
    headings: true,
    headingDepth: HEADING_DEPTH,
    withRows,
    ...(vocabulary && stems ? { headingScorer: new HeadingScorer(stems, vocabulary.headingStatistics(stems)) } : {}),
  };
}

/**
 * The matches of an any-word query beyond the rows ranked, estimated per connection from the rows that hold each of
 * its words (vocabulary.ts); never below the rows seen. Required and excluded words and filters select rows the
 * word counts cannot tell apart: such a total stays the rows seen, a lower bound.
 */
function estimateTotal(result: IndexSearchResult, vocabulary: SpaceVocabulary, query: TextQuery, scope: SearchScope, sources: IndexedSource[]): void {
  if (scope.where || (query.require?.length ?? 0) > 0 || (query.exclude?.length ?? 0) > 0) return;
  const stems = queryStems(query.words);
  let total = 0;
  for (const connectionId of new Set(sources.map((s) => s.connectionId))) {
    const srcs = sources.filter((s) => s.connectionId === connectionId).map((s) => s.src);
    const seen = result.matchesByConnection.get(connectionId) ?? 0;
    const estimated = Math.max(seen, Math.round(vocabulary.estimateRows(stems, srcs)));
    if (estimated > 0) result.matchesByConnection.set(connectionId, estimated);
    total += estimated;
  }
  result.total = Math.max(result.total, total);
}

/** A hit's value of a column: the first of its physical columns that has one (a table has at most one of them). */
function valueOf(hit: IndexHit, column: ColumnRef): unknown {
  for (const physical of column.physical) {
    const value = hit.values?.[physical];
    if (value !== null && value !== undefined) return value;
  }
  return null;
}

/** By the sort columns (rows without a value last), then by score, then by id: a total order, stable across pages. */
function sortByColumns(hits: IndexHit[], sort: NonNullable<IndexSearchInput['sort']>): IndexHit[] {
  const compare = (a: unknown, b: unknown): number => {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
    return String(a) < String(b) ? -1 : 1;
  };
  return [...hits].sort((x, y) => {
    for (const { column, descending } of sort) {
      const a = valueOf(x, column);
      const b = valueOf(y, column);
      if (a === null || b === null) {
        const nulls = compare(a, b);
        if (nulls !== 0) return nulls;
        continue;
      }
      const order = compare(a, b);
      if (order !== 0) return descending ? -order : order;
    }
    return byScore(x, y);
  });
}

/** The most frequent values of a column among the counted matches (dates as ISO timestamps). */
function facetCounts(hits: IndexHit[], facet: ColumnRef): Array<{ value: unknown; count: number }> {
  const counts = new Map<string, { value: unknown; count: number }>();
  for (const hit of hits) {
    const raw = valueOf(hit, facet);
    if (raw === null) continue;
    const value = facet.kind === 'date' ? new Date(Number(raw)).toISOString() : raw;
    const key = `${typeof value}:${String(value)}`;
    const entry = counts.get(key) ?? { value, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  }
  return [...counts.values()]
    .sort((a, b) => b.count - a.count || (String(a.value) < String(b.value) ? -1 : 1))
    .slice(0, FACET_VALUES);
}

/** The stored fields, primary key, snippet and matched columns of the page's rows, by rid. */
export async function hitDetails(
  store: Pick<IndexStore, 'space'>,
  spaceName: string,
  hits: IndexHit[],
  sources: IndexedSource[],
  stems: Set<string>,
): Promise<Map<string, HitDetail>> {
  const details = new Map<string, HitDetail>();
  const carried = hits.filter((h) => h.row).map((h) => ({ rid: h.rid, src: h.src, ...h.row! }));
  const missing = hits.filter((h) => !h.row).map((h) => h.rid);
  const space = missing.length > 0 ? await store.space(spaceName) : null;
  const sourceOf = new Map(sources.map((s) => [s.src, s]));
  for (const row of [...carried, ...(space ? await space.rows(missing) : [])]) {
    const source = sourceOf.get(row.src);
    if (!source) continue;
    const fields = JSON.parse(row.fields) as Record<string, unknown>;
    const primaryKey = JSON.parse(row.pk) as Record<string, unknown>;
    details.set(row.rid, { primaryKey, fields, ...highlightByStems(fields, source.textColumns, stems) });
  }
  return details;
}
