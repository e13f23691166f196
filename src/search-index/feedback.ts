/**
 * Pseudo-relevance feedback (issue 33), asked for per search (`queryExpansion`): RM3 as Anserini runs it (Lavrenko
 * and Croft's relevance model interpolated with the query: Abdul-Jaleel et al., "UMass at TREC 2004"; Anserini's
 * Rm3Reranker defaults fbDocs 10, fbTerms 10, originalQueryWeight 0.5). The best rows of the first ranking are taken
 * as relevant; the words they share most, weighted by how well each row matched, join the query, and the search
 * runs again. A row that answers the question in other words than the query's then ranks.
 *
 * The model, over word stems as the index matches them (Porter2, stop words left out):
 *   rm(w) = sum over the feedback rows d of score(d) * tf(w, d) / |d|, its `terms` best words, summed to 1;
 * and the ranking interpolates the query as typed with it (rankWithFeedback). Anserini also drops words found in
 * more than a tenth of all documents; the index keeps no document frequencies at hand, and the stop words the
 * analyzer drops are most of those.
 */
import stem from 'wink-porter2-stemmer';
import { foldWord, isFoldedStopWord } from '../sql-search/stop-words.js';
import type { IndexHit, IndexSpace, SearchScope, TextQuery } from './index-store.js';

export interface FeedbackSettings {
  /** Best rows of the first ranking taken as relevant. */
  docs: number;
  /** Words of the relevance model kept. */
  terms: number;
  /** Weight of the query as typed against the relevance model's words (0 to 1). */
  originalWeight: number;
}

/** Anserini's RM3 defaults, taken as they are rather than tuned to a collection. */
export const RM3: FeedbackSettings = { docs: 10, terms: 10, originalWeight: 0.5 };

/** A word and its weight. */
export interface WeightedWord {
  word: string;
  weight: number;
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Words the model may add: at least two letters, not a bare number (Anserini's filter), and one the index keeps. */
const usable = (folded: string) => folded.length >= 2 && folded.length <= 40 && !/^\d+$/.test(folded) && !isFoldedStopWord(folded);

/** The relevance model of a query: its best words, spelled as the index should be asked for them. */
export interface RelevanceModel {
  /** The model's FEEDBACK.terms best words (query words among them), best first, with p(w), summing to 1. */
  terms: WeightedWord[];
  /** The query's words as the index counts them (stop words left out, repeats counted). */
  queryLength: number;
  /** Each of the query's stems, spelled as the query spells it, with its count. */
  original: WeightedWord[];
}

/**
 * RM3's relevance model of `query` from its first ranking's best rows (`feedback`, best first, each with its text
 * and score). Each stem is spelled as the word that spells it most often (the query's own word for a query stem),
 * since the index stems what it is given. Ties break by stem, so a model is the same every time.
 */
export function relevanceModel(query: string, feedback: Array<{ text: string; score: number }>, settings: FeedbackSettings = RM3): RelevanceModel {
  const spelling = new Map<string, Map<string, number>>();
  const spell = (s: string, word: string, weight: number) => {
    const words = spelling.get(s) ?? new Map<string, number>();
    words.set(word, (words.get(word) ?? 0) + weight);
    spelling.set(s, words);
  };
  const original = new Map<string, number>();
  for (const [raw] of query.matchAll(WORD)) {
    const folded = foldWord(raw);
    if (isFoldedStopWord(folded)) continue;
    const s = stem(folded);
    original.set(s, (original.get(s) ?? 0) + 1);
    spell(s, folded, Number.MAX_SAFE_INTEGER);
  }
  const queryLength = [...original.values()].reduce((sum, n) => sum + n, 0);
  const model = new Map<string, number>();
  if (queryLength > 0) {
    for (const row of feedback.slice(0, settings.docs)) {
      if (!(row.score > 0)) continue;
      const counts = new Map<string, number>();
      let length = 0;
      for (const [raw] of row.text.matchAll(WORD)) {
        const folded = foldWord(raw);
        if (!usable(folded)) continue;
        const s = stem(folded);
        counts.set(s, (counts.get(s) ?? 0) + 1);
        spell(s, folded, 1);
        length += 1;
      }
      for (const [s, n] of counts) model.set(s, (model.get(s) ?? 0) + (row.score * n) / length);
    }
  }
  const kept = [...model].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, settings.terms);
  const mass = kept.reduce((sum, [, p]) => sum + p, 0);
  return {
    terms: kept.map(([s, p]) => ({ word: spelledAs(spelling.get(s)!), weight: p / mass })),
    queryLength,
    original: [...original].map(([s, n]) => ({ word: spelledAs(spelling.get(s)!), weight: n })),
  };
}

function spelledAs(words: Map<string, number>): string {
  let best = '';
  let most = -1;
  for (const [word, n] of words) if (n > most || (n === most && word < best)) [best, most] = [word, n];
  return best;
}

/**
 * The text ranking of `query` with feedback from `first` (its ranking as typed), at the cost of one more plain
 * any-word query after it. An index query that weighs each word on its own (a boolean query of one match per word)
 * cannot skip the rows that could not make the page, as a plain any-word match does, and took about 45 times as long
 * on the 100,000-article corpus (docs/benchmarks.md). So the model's words run as one any-word query, each at the
 * model's mean weight, and a row scores
 *   originalWeight * first(row) + (1 - originalWeight) * (query words / model words) * model(row),
 * `first` its score as typed (text and heading), `model` its score for the model's words: RM3's interpolation with
 * the model's words weighed alike. As with the heading, a row outside either ranking's best `limit` rows gets nothing
 * from that ranking. A query with nothing to expand from keeps its first ranking.
 */
export async function rankWithFeedback(
  space: Pick<IndexSpace, 'searchText' | 'texts'>,
  query: TextQuery,
  first: IndexHit[],
  scope: SearchScope,
  limit: number,
  settings: FeedbackSettings,
): Promise<IndexHit[]> {
  const best = first.slice(0, settings.docs);
  if (best.length === 0 || query.fuzziness) return first;
  const texts = await space.texts(best.map((hit) => hit.rid));
  const model = relevanceModel(query.words, best.map((hit) => ({ text: texts.get(hit.rid) ?? '', score: hit.score })), settings);
  if (model.queryLength === 0 || model.terms.length === 0) return first;
  const second = await space.searchText({ ...query, words: model.terms.map((t) => t.word).join(' '), headings: false }, scope, limit);
  const weight = ((1 - settings.originalWeight) * model.queryLength) / model.terms.length;
  const fused = new Map<string, IndexHit>();
  for (const hit of first) fused.set(hit.rid, { ...hit, score: settings.originalWeight * hit.score });
  for (const hit of second) {
    const entry = fused.get(hit.rid) ?? { ...hit, score: 0 };
    entry.score += weight * hit.score;
    fused.set(hit.rid, entry);
  }
  return [...fused.values()];
}
