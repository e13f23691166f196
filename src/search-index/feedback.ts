/**
 * Pseudo-relevance feedback: RM3 as Anserini runs it (Lavrenko and Croft's relevance model interpolated
 * with the query: Abdul-Jaleel et al., "UMass at TREC 2004"; Anserini's Rm3Reranker defaults fbDocs 10, fbTerms 10,
 * originalQueryWeight 0.5). The best rows of the first ranking are taken as relevant; the words they share most,
 * weighted by how well each row matched, join the query. A row that answers the question in other words than the
 * query's then ranks higher.
 *
 * The model, over word stems as the index matches them (Porter2, stop words left out):
 *   rm(w) = sum over the feedback rows d of score(d) * tf(w, d) / |d|, its `terms` best words, summed to 1.
 * Two ways to rank with it:
 * - rerankWithFeedback (natural and hybrid modes by default): the rows the ranking query already read (its best
 *   RANK_DEPTH; in hybrid mode the model comes from the fused ranking's best rows, the mode's own answer) are scored again in Quarry with the expanded query, each word's BM25 from the space's statistics in
 *   memory (vocabulary.ts). No second index query, so a search still costs one; a row the first query did not read
 *   cannot rank.
 * - rankWithFeedback (`queryExpansion`): the model's words run as a second index query, so rows the first ranking
 *   missed rank too, at the cost of that query.
 * Anserini also drops words found in more than a tenth of all documents; on Cranfield's odd half that filter ranked
 * lower (docs/benchmarks.md), so the model keeps them, and the stop words the analyzer drops are most of them.
 */
import { BM25_B as B, BM25_K1 as K1, eachWordSpan, headOf, headOfCodes, lowerCode, stemHeads, stemOfFolded } from './analyzer.js';
import { bestOf } from './best-of.js';
import { FOLDED_STOP_WORDS, isFoldedStopWord } from '../search-core/stop-words.js';
import type { IndexHit, IndexSpace, SearchScope, TextQuery } from './index-store.js';
import { eachFoldedWord, eachFoldedWide, FEEDBACK_TEXT_CHARS, RowWordsBuilder, type RowWords, type SpaceWords } from './row-words.js';
import type { TextStatistics } from './vocabulary.js';

export { FEEDBACK_TEXT_CHARS } from './row-words.js';

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

/** The relevance model of a query: its best words, spelled as the index should be asked for them. */
export interface RelevanceModel {
  /** The model's FEEDBACK.terms best words (query words among them), best first, with p(w), summing to 1. */
  terms: Array<WeightedWord & { stem: string }>;
  /** The query's words as the index counts them (stop words left out, repeats counted). */
  queryLength: number;
  /** Each of the query's stems, spelled as the query spells it, with its count. */
  original: WeightedWord[];
}

/**
 * RM3's relevance model of `query` from its first ranking's best rows (`feedback`, best first, each with its text
 * and score; or with its words counted already, row-words.ts, which give the same model). A text is read to
 * FEEDBACK_TEXT_CHARS, as a version's rows are counted: a row's share of each word is taken to be the same there as in
 * all of it. Each stem is spelled as the word that spells it most often (the query's own word for a query stem), since
 * the index stems what it is given. Ties break by stem, so a model is the same every time.
 */
export function relevanceModel(query: string, feedback: Array<{ text: string | RowWords; score: number }>, settings: FeedbackSettings = RM3): RelevanceModel {
  const original = new Map<string, number>();
  /** How each stem is written, the query's own spelling first (MAX_SAFE_INTEGER), for the stems kept. */
  const spelling = new Map<string, Map<string, number>>();
  const spell = (s: string, word: string, weight: number) => {
    const words = spelling.get(s) ?? new Map<string, number>();
    words.set(word, (words.get(word) ?? 0) + weight);
    spelling.set(s, words);
  };
  eachFoldedWord(query, (folded) => {
    if (isFoldedStopWord(folded)) return;
    const s = stemOfFolded(folded);
    original.set(s, (original.get(s) ?? 0) + 1);
    spell(s, folded, Number.MAX_SAFE_INTEGER);
  });
  const queryLength = [...original.values()].reduce((sum, n) => sum + n, 0);
  const used = queryLength > 0 ? feedback.slice(0, settings.docs).filter((row) => row.score > 0) : [];
  const counted = countedUnderOneVersion(used);
  const kept = modelByStemId(counted.space, counted.rows, settings.terms, spell);
  const mass = kept.reduce((sum, [, p]) => sum + p, 0);
  return {
    terms: kept.map(([s, p]) => ({ word: spelledAs(spelling.get(s)!), weight: p / mass, stem: s })),
    queryLength,
    original: [...original].map(([s, n]) => ({ word: spelledAs(spelling.get(s)!), weight: n })),
  };
}

type Spell = (stem: string, folded: string, weight: number) => void;

/**
 * The feedback rows' words under one version's ids: as they are when one version counted them all (the rows held in
 * memory, row-words.ts), else counted here as a version counts them (a text read to FEEDBACK_TEXT_CHARS).
 */
function countedUnderOneVersion(rows: Array<{ text: string | RowWords; score: number }>): { space: SpaceWords; rows: Array<{ text: RowWords; score: number }> } {
  const first = rows[0]?.text;
  if (first !== undefined && typeof first !== 'string' && rows.every((row) => typeof row.text !== 'string' && row.text.words === first.words)) {
    return { space: first.words, rows: rows as Array<{ text: RowWords; score: number }> };
  }
  const builder = new RowWordsBuilder();
  for (const row of rows) {
    if (typeof row.text === 'string') builder.add(row.text);
    else builder.addCounted(row.text);
  }
  const table = builder.finish();
  return { space: table.words, rows: rows.map((row, place) => ({ text: table.at(place), score: row.score })) };
}

/**
 * The model's `terms` best stems from rows whose words one version counted, with their weight: each row adds
 * score * tf / |d| per stem (|d| its words the model may add); ties go by stem. The kept stems' spellings in those
 * rows go to `spell`. Summed by stem id in typed arrays kept for the version (stemScratch), so a search's model costs
 * no string and no map entry per word of its feedback rows: it runs on every natural search, in the server's one thread.
 */
function modelByStemId(space: SpaceWords, rows: Array<{ text: RowWords; score: number }>, terms: number, spell: Spell): Array<[string, number]> {
  const { stemOf, usable, stems, folded } = space;
  const { weights, counts } = stemScratch(space);
  /** The model's stems in the order first met, and one row's. */
  const touched: number[] = [];
  const inRow: number[] = [];
  for (const { text: row, score } of rows) {
    inRow.length = 0;
    let length = 0;
    for (let i = 0; i < row.ids.length; i++) {
      const id = row.ids[i]!;
      if (!usable[id]) continue;
      const s = stemOf[id]!;
      if (counts[s] === 0) inRow.push(s);
      counts[s] += row.counts[i]!;
      length += row.counts[i]!;
    }
    // Every row adds a positive weight: 0 is a stem not met yet.
    for (const s of inRow) {
      if (weights[s] === 0) touched.push(s);
      weights[s] += (score * counts[s]!) / length;
      counts[s] = 0;
    }
  }
  const kept = bestOf(touched, terms, (a, b) => weights[b]! - weights[a]! || (stems[a]! < stems[b]! ? -1 : 1));
  const model = kept.map((s): [string, number] => [stems[s]!, weights[s]!]);
  for (const s of touched) weights[s] = 0;
  // The kept stems marked in `counts` (all 0 again by now) while their spellings are read, then cleared.
  for (const s of kept) counts[s] = 1;
  for (const { text: row } of rows) {
    for (let i = 0; i < row.ids.length; i++) {
      const id = row.ids[i]!;
      if (usable[id] && counts[stemOf[id]!] !== 0) spell(stems[stemOf[id]!]!, folded[id]!, row.counts[i]!);
    }
  }
  for (const s of kept) counts[s] = 0;
  return model;
}

/**
 * A weight and a count per stem of a version's words, all 0 between two uses: one search's model fills and clears them
 * within one synchronous call, so the searches of a version share them.
 */
const scratchOf = new WeakMap<SpaceWords, { weights: Float64Array; counts: Uint32Array }>();
function stemScratch(space: SpaceWords): { weights: Float64Array; counts: Uint32Array } {
  let scratch = scratchOf.get(space);
  if (!scratch || scratch.counts.length < space.stems.length) {
    scratch = { weights: new Float64Array(space.stems.length), counts: new Uint32Array(space.stems.length) };
    scratchOf.set(space, scratch);
  }
  return scratch;
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

/** Characters read between two yields to other work (a millisecond or so). */
const FEEDBACK_YIELD_CHARS = 64 * 1024;

/**
 * The rows the text ranking read (`ranked`, best first), scored again with RM3's expanded query, without asking the
 * index anything more. The model is built from the text of the best `settings.docs` rows of `feedback`, the answer's
 * own ranking (the text ranking itself unless said otherwise; hybrid's fused ranking in hybrid mode), each weighted
 * by its score there; the best `depth` rows of `ranked` are scored
 *   originalWeight * first(row) + (1 - originalWeight) * (query words) * sum over the model's words w of rm(w) * bm25(w, row),
 * `first` the row's score as typed (text and heading, a sum over the query's words: its words weigh
 * originalWeight / query words each, as in RM3's interpolation, with everything scaled by the query's words), and
 * bm25 each word's BM25 in the row's text from the space's statistics (`statistics`, asked once for the model's
 * stems). Rows below `depth` keep originalWeight * first: the feedback part is never negative, so they stay below
 * every row scored again. `texts` holds the text of the rows to score (by rid), or their words counted already
 * (row-words.ts: the same scores, without reading the text again); a row without either keeps originalWeight * first. A query with nothing to expand from (no word of its own, no feedback row) keeps its
 * ranking; the hits returned are new objects, best first.
 */
export async function rerankWithFeedback(
  query: string,
  ranked: IndexHit[],
  texts: Map<string, string | RowWords>,
  statistics: (stems: string[]) => TextStatistics,
  depth: number,
  settings: FeedbackSettings = RM3,
  feedback: IndexHit[] = ranked,
): Promise<IndexHit[]> {
  const best = feedback.slice(0, settings.docs).filter((hit) => texts.has(hit.rid));
  // A row's share of each word is the same in its first FEEDBACK_TEXT_CHARS as in all of it, as far as a sample tells.
  const model = relevanceModel(query, best.map((hit) => ({ text: sampleOf(texts.get(hit.rid)!), score: hit.score })), settings);
  if (model.queryLength === 0 || model.terms.length === 0) return ranked.map((hit) => ({ ...hit }));
  const stats = statistics(model.terms.map((t) => t.stem));
  // Each word's weight in the expanded query times its idf (Lucene's, as the index's BM25).
  const weightOf = new Map<string, number>();
  for (const term of model.terms) {
    const n = Math.min(stats.rowsWith.get(term.stem) ?? 0, stats.rows);
    const idf = Math.log(1 + (stats.rows - n + 0.5) / (n + 0.5));
    weightOf.set(term.stem, (1 - settings.originalWeight) * model.queryLength * term.weight * idf);
  }
  const averageWords = stats.averageWords || 1;
  const heads = stemHeads(model.terms.map((t) => t.stem));
  const weighted = weightedStemIds(weightOf);
  const out: IndexHit[] = [];
  let read = 0;
  for (const [i, hit] of ranked.entries()) {
    const score = settings.originalWeight * hit.score;
    const text = i < depth ? texts.get(hit.rid) : undefined;
    if (text === undefined || typeof text !== 'string') {
      out.push({ ...hit, score: text === undefined ? score : score + wordsScore(text, averageWords, weighted) });
      continue;
    }
    out.push({ ...hit, score: score + feedbackScore(text, weightOf, averageWords, heads) });
    // Reading the rows' text is Quarry's own work, in the server's one thread: other requests go on between slices.
    if ((read += Math.min(text.length, FEEDBACK_TEXT_CHARS)) >= FEEDBACK_YIELD_CHARS) {
      read = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return out.sort((a, b) => b.score - a.score || (a.rid < b.rid ? -1 : a.rid > b.rid ? 1 : 0));
}

/** What the model reads of a row's text: its first FEEDBACK_TEXT_CHARS characters (its words are counted that far). */
function sampleOf(text: string | RowWords): string | RowWords {
  return typeof text === 'string' ? text.slice(0, FEEDBACK_TEXT_CHARS) : text;
}

/**
 * The weighted stems of one version's words: by stem id, 0 or the stem's place (from 1) among those the version
 * holds; by place, each stem's weight, and a row's count of it while the row is scored (0 between rows), `order` the
 * places counted.
 */
interface WeightedStems {
  placeOf: Uint8Array | Uint32Array;
  weights: Float64Array;
  tf: Float64Array;
  order: Uint32Array;
}

/** The weighted stems by their ids in each version's words (found once per search and version). */
function weightedStemIds(weightOf: Map<string, number>): (words: SpaceWords) => WeightedStems {
  const found = new Map<SpaceWords, WeightedStems>();
  return (words) => {
    let weighted = found.get(words);
    if (!weighted) {
      // A typed array over every stem of the version (some 20,000 at 100,000 articles): a row's hundred words are
      // each looked up by index, where a map lookup per word was a tenth of a search's work.
      const size = words.stems.length;
      const places = weightOf.size + 1;
      weighted = {
        placeOf: weightOf.size < 255 ? new Uint8Array(size) : new Uint32Array(size),
        weights: new Float64Array(places), tf: new Float64Array(places), order: new Uint32Array(places),
      };
      let place = 0;
      for (const [stemmed, weight] of weightOf) {
        const id = words.stemId(stemmed);
        if (id === undefined) continue;
        place += 1;
        weighted.placeOf[id] = place;
        weighted.weights[place] = weight;
      }
      found.set(words, weighted);
    }
    return weighted;
  };
}

/**
 * feedbackScore of a row whose words are counted already: the same sum, in the same order, from its word ids. A
 * hundred rows per search pass here: each weighted stem's count is kept by its place in the search's typed arrays,
 * not in a map per row.
 */
function wordsScore(row: RowWords, averageWords: number, weighted: (words: SpaceWords) => WeightedStems): number {
  const { placeOf, weights, tf, order } = weighted(row.words);
  const { stemOf } = row.words;
  let counted = 0;
  for (let i = 0; i < row.ids.length; i++) {
    const place = placeOf[stemOf[row.ids[i]!]!]!;
    if (place === 0) continue;
    if (tf[place] === 0) order[counted++] = place;
    tf[place] += row.counts[i]!;
  }
  // bm25Sum's sum, term by term in the order first counted.
  const norm = K1 * (1 - B + (B * row.length * row.scale) / averageWords);
  let score = 0;
  for (let k = 0; k < counted; k++) {
    const place = order[k]!;
    const frequency = tf[place]! * row.scale;
    score += (weights[place]! * frequency * (K1 + 1)) / (frequency + norm);
    tf[place] = 0;
  }
  return score;
}

/**
 * A word of at most five letters a-z as a number (base 27, exact): the stop words are all such words, so a row's
 * words are told from them by their character codes, without cutting each word out of the text as a string.
 */
const STOP_CODES = new Set([...FOLDED_STOP_WORDS].map((word) => {
  let code = 0;
  for (let i = 0; i < word.length; i++) code = code * 27 + (word.charCodeAt(i) - 96);
  return code;
}));
const STOP_LETTERS = Math.max(...[...FOLDED_STOP_WORDS].map((word) => word.length));


/**
 * sum over the weighted stems of weight * tf (K1 + 1) / (tf + K1 (1 - B + B |d| / avgdl)), |d| the text's words. A
 * text longer than FEEDBACK_TEXT_CHARS is read that far, its length and frequencies scaled to the whole text.
 *
 * This reads a hundred rows per search in the server's one thread, so it reads each row once and allocates for the
 * few words that may be one of the model's: a word of ASCII letters and digits is told from a stop word by its codes
 * (STOP_CODES), and passed over by its first two letters (headOf) unless they are a weighted stem's; only then is it
 * cut out, lower-cased and stemmed. A word holding other characters (accents, dashes) is folded as the index folds it
 * (eachFoldedWord's way). The words counted and the score are those of reading every word as eachFoldedWord cuts it.
 */
function feedbackScore(text: string, weightOf: Map<string, number>, averageWords: number, heads: Set<number>): number {
  const frequency = new Map<string, number>();
  let length = 0;
  const sample = text.length > FEEDBACK_TEXT_CHARS ? text.slice(0, FEEDBACK_TEXT_CHARS) : text;
  const scale = text.length / Math.max(1, sample.length);
  const countStem = (folded: string) => {
    const stemmed = stemOfFolded(folded);
    if (weightOf.has(stemmed)) frequency.set(stemmed, (frequency.get(stemmed) ?? 0) + 1);
  };
  const countFolded = (folded: string) => {
    if (isFoldedStopWord(folded)) return;
    length += 1;
    const head = headOf(folded);
    if (head === -1 || heads.has(head)) countStem(folded);
  };
  eachWordSpan(sample, (start, end, upper, wide) => {
    if (wide) {
      eachFoldedWide(sample.slice(start, end), countFolded);
      return;
    }
    const letters = end - start;
    if (letters <= STOP_LETTERS) {
      let code = 0;
      for (let j = start; j < end && code >= 0; j++) {
        const l = lowerCode(sample.charCodeAt(j));
        code = l >= 97 ? code * 27 + (l - 96) : -1;
      }
      if (code >= 0 && STOP_CODES.has(code)) return;
    }
    length += 1;
    const head = letters >= 2 ? headOfCodes(lowerCode(sample.charCodeAt(start)), lowerCode(sample.charCodeAt(start + 1))) : -1;
    if (head === -1 || heads.has(head)) {
      const run = sample.slice(start, end);
      countStem(upper ? run.toLowerCase() : run);
    }
  });
  return bm25Sum(frequency, weightOf, length, scale, averageWords);
}

/**
 * sum over the stems counted of weight * tf (K1 + 1) / (tf + K1 (1 - B + B |d| / avgdl)), in the order they were first
 * counted; `length` words were read and `scale` stretches them to the whole text.
 */
function bm25Sum(frequency: Map<string, number>, weightOf: Map<string, number>, length: number, scale: number, averageWords: number): number {
  const norm = K1 * (1 - B + (B * length * scale) / averageWords);
  let score = 0;
  for (const [stemmed, sampled] of frequency) {
    const tf = sampled * scale;
    score += (weightOf.get(stemmed)! * tf * (K1 + 1)) / (tf + norm);
  }
  return score;
}
