/**
 * Search over Quarry's own index (issue 27): one query per search space ranks every selected indexed table at once.
 *
 * - natural: BM25 over the rows' text in the space's one statistics space; any word may match, `-word` excludes.
 * - semantic: cosine similarity to the query's embedding over the rows of tables searched semantically (at least
 *   MIN_SIMILARITY).
 * - hybrid: both rankings of the same index, fused by a convex combination of normalised scores (fusion.ts).
 *
 * Counting every match of an any-word query would score most of the table, so matches are counted up to COUNT_CAP;
 * beyond it the total says so (`totalIsEstimate`). Results carry the row's stored fields and a snippet Quarry cuts
 * from its text, marking the words that stem like the query's.
 */
import { highlightByStems } from './analyzer.js';
import { convexFusion } from './fusion.js';
import type { IndexHit, IndexStore, TextQuery } from './index-store.js';

/** Matches counted exactly; a search whose matches reach it reports COUNT_CAP and `totalIsEstimate`. */
export const COUNT_CAP = 1100;
/** Rows below this cosine similarity are not matches of a semantic search. */
export const MIN_SIMILARITY = 0.2;
/** Candidates each ranking of a hybrid search contributes to the fusion, at the least. */
export const HYBRID_DEPTH = 100;

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

export interface IndexSearchInput {
  space: string;
  sources: IndexedSource[];
  mode: 'natural' | 'semantic' | 'hybrid';
  text: TextQuery;
  /** The query's embedding (semantic and hybrid). */
  vector: Float32Array | null;
  /** Rows the search must rank (offset + limit). */
  window: number;
  /** The sources are every table of the space: the text search needs no filter. */
  wholeSpace: boolean;
  semanticRatio: number;
}

export interface IndexSearchResult {
  /** Ranked best first, at most `window`. */
  hits: IndexHit[];
  total: number;
  totalIsEstimate: boolean;
  /** Matches per connection id (within the counted matches). */
  matchesByConnection: Map<string, number>;
}

export interface HitDetail {
  primaryKey: Record<string, unknown>;
  fields: Record<string, unknown>;
  snippet: string;
  matchedColumns: string[];
}

export async function searchIndex(store: Pick<IndexStore, 'space'>, input: IndexSearchInput): Promise<IndexSearchResult> {
  const empty: IndexSearchResult = { hits: [], total: 0, totalIsEstimate: false, matchesByConnection: new Map() };
  const space = input.sources.length > 0 ? await store.space(input.space) : null;
  if (!space) return empty;
  const all = input.wholeSpace ? null : input.sources.map((s) => s.src);
  const semantic = input.sources.filter((s) => s.semanticReady).map((s) => s.src);

  let counted: IndexHit[];
  let hits: IndexHit[];
  if (input.mode === 'natural') {
    counted = await space.searchText(input.text, all, COUNT_CAP + 1);
    hits = counted;
  } else if (input.mode === 'semantic') {
    counted = input.vector ? await space.searchVector(input.vector, semantic, COUNT_CAP + 1, MIN_SIMILARITY) : [];
    hits = counted;
  } else {
    const depth = Math.max(input.window, HYBRID_DEPTH);
    const [text, vector] = await Promise.all([
      space.searchText(input.text, all, Math.max(depth, COUNT_CAP + 1)),
      input.vector ? space.searchVector(input.vector, semantic, depth, MIN_SIMILARITY) : Promise.resolve([]),
    ]);
    hits = convexFusion(text.slice(0, depth), vector, input.semanticRatio);
    // Every text match counts, and so does every row only the vector ranking found.
    const textIds = new Set(text.map((h) => h.rid));
    counted = [...text, ...vector.filter((h) => !textIds.has(h.rid))];
  }

  const connectionOf = new Map(input.sources.map((s) => [s.src, s.connectionId]));
  if (input.wholeSpace) {
    // Rows a failed clean-up left behind belong to no source: never an answer.
    hits = hits.filter((h) => connectionOf.has(h.src));
    counted = counted.filter((h) => connectionOf.has(h.src));
  }
  const matchesByConnection = new Map<string, number>();
  for (const hit of counted.slice(0, COUNT_CAP)) {
    const id = connectionOf.get(hit.src)!;
    matchesByConnection.set(id, (matchesByConnection.get(id) ?? 0) + 1);
  }
  return {
    hits: hits.slice(0, input.window),
    total: Math.min(counted.length, COUNT_CAP),
    totalIsEstimate: counted.length > COUNT_CAP,
    matchesByConnection,
  };
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
  const space = hits.length > 0 ? await store.space(spaceName) : null;
  if (!space) return details;
  const sourceOf = new Map(sources.map((s) => [s.src, s]));
  for (const row of await space.rows(hits.map((h) => h.rid))) {
    const source = sourceOf.get(row.src);
    if (!source) continue;
    const fields = JSON.parse(row.fields) as Record<string, unknown>;
    const primaryKey = JSON.parse(row.pk) as Record<string, unknown>;
    details.set(row.rid, { primaryKey, fields, ...highlightByStems(fields, source.textColumns, stems) });
  }
  return details;
}
