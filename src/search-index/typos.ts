/**
 * Typo tolerance of natural-mode search over the index, on by default: a word of 5 to 8 letters may carry
 * one typo, a word of 9 or more two (Meilisearch's defaults); shorter words must be exact. Only a word the selected
 * rows do not contain at all is corrected, so an exact match always ranks above a corrected one: a word that exists
 * is searched as typed. A missing word is looked up with the index's fuzzy matching (a Levenshtein automaton over its
 * terms), and the closest word of the rows it finds (optimal string alignment: a swap of neighbours is one edit)
 * replaces it in the query. The answer lists each correction.
 *
 * So that a search costs the index one query, not one more per word checked: once the space's vocabulary is in
 * memory (vocabulary.ts), the check asks the index nothing: a word is present when a selected table holds a word of
 * its stem, and a missing one is replaced by the closest word the selected tables hold (then the most frequent, then
 * the first by spelling) among those the fuzzy lookup could have found: words whose stem is within the allowed edits
 * of the word's stem, counted as the index counts them (a swap of neighbours is two edits there). Under a filter, a
 * word the selected tables hold may still be outside the filtered rows, so that word is looked up as before, and so
 * is each candidate correction until one is in them. Before a space's first vocabulary is built, words are looked up
 * in the index. While a written space's vocabulary is built again, or is not because the rows this process wrote since
 * are still few (written-rows.ts), the last one built is used, and a word it lacks is looked up before it is corrected:
 * the word may be in rows written since (a new product's name), and they rank from memory beside the postings.
 */
import stem from 'wink-porter2-stemmer';
import { editDistance } from '../sql-search/vocabulary.js';
import { isStopWord } from './analyzer.js';
import { type IndexSpace, MAX_TOKEN_BYTES, type SearchScope, type SearchVocabulary, type TextQuery } from './index-store.js';
import { levenshtein } from './vocabulary.js';

export interface Correction {
  word: string;
  correctedTo: string;
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Rows a fuzzy lookup reads to find the word it matched. */
const LOOKUP_ROWS = 5;
/** Candidate corrections checked against a filter's rows, closest first, before the word is left as typed. */
const FILTERED_CANDIDATES = 3;

const fold = (word: string) => word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

/** Typos a word may carry: 0 under 5 letters, 1 up to 8, 2 from 9. */
export function typosAllowed(word: string): number {
  const letters = [...word].length;
  return letters >= 9 ? 2 : letters >= 5 ? 1 : 0;
}

/**
 * A word worth checking: long enough to carry a typo, not a number or a stop word, and not longer than any word the
 * index keeps (no row holds it, and the index's fuzzy matching refuses very long words).
 */
const correctable = (word: string) =>
  typosAllowed(word) > 0 && Buffer.byteLength(word) <= MAX_TOKEN_BYTES && !/^\d+$/.test(word) && !isStopWord(word);

/**
 * The query with its missing words corrected, and the corrections. With the space's vocabulary in memory no word
 * costs a lookup (see above); without it, words are checked in parallel, one cheap lookup each (the best row that
 * has the word), and only missing ones cost a fuzzy lookup.
 */
export async function correctTypos(
  space: IndexSpace,
  query: TextQuery,
  scope: SearchScope,
  /** The space's vocabulary if the caller read it already (null: none in memory now). */
  known?: SearchVocabulary | null,
): Promise<{ query: TextQuery; corrections: Correction[] }> {
  const typed = [...new Set((query.words.match(WORD) ?? []).map(fold))].filter(correctable);
  if (typed.length === 0) return { query, corrections: [] };
  const bare: SearchScope = { srcs: scope.srcs, where: scope.where };
  const vocabulary = known === undefined ? await space.searchVocabulary() : known;
  const corrections = vocabulary ? await fromVocabulary(space, vocabulary, typed, bare) : await byLookups(space, typed, bare);
  if (corrections.length === 0) return { query, corrections: [] };

  const replaced = new Map(corrections.map((c) => [c.word, c.correctedTo]));
  const correct = (text: string) => (text.match(WORD) ?? []).map((w) => replaced.get(fold(w)) ?? w).join(' ');
  return { query: { ...query, words: correct(query.words), require: query.require?.map(correct) }, corrections };
}

/** The best row that holds the word, in scope: whether the index matches it there. */
const inScope = async (space: IndexSpace, word: string, scope: SearchScope) => (await space.searchText({ words: word }, scope, 1)).length > 0;

async function fromVocabulary(space: IndexSpace, held: SearchVocabulary, typed: string[], scope: SearchScope): Promise<Correction[]> {
  const { vocabulary, current } = held;
  const filtered = Boolean(scope.where);
  const found = await Promise.all(typed.map(async (word): Promise<Correction | null> => {
    const known = vocabulary.hasStem(stem(word), scope.srcs);
    if (known && !filtered) return null;
    // A filter may leave the word's rows out, and an older version's words lack those of rows written since: either
    // way the index says whether the word is missing.
    if ((known || !current) && (await inScope(space, word, scope))) return null;
    const allowed = typosAllowed(word);
    const stemmed = stem(word);
    const candidates = vocabulary.near(word, allowed, scope.srcs).filter((c) => levenshtein(stemmed, stem(c.word), allowed) <= allowed);
    if (!filtered) return candidates[0] ? { word, correctedTo: candidates[0].word } : null;
    for (const candidate of candidates.slice(0, FILTERED_CANDIDATES)) {
      if (await inScope(space, candidate.word, scope)) return { word, correctedTo: candidate.word };
    }
    return null;
  }));
  return found.filter((c): c is Correction => c !== null);
}

async function byLookups(space: IndexSpace, typed: string[], bare: SearchScope): Promise<Correction[]> {
  const present = await Promise.all(typed.map((word) => inScope(space, word, bare)));
  const missing = typed.filter((_, i) => !present[i]);
  if (missing.length === 0) return [];

  return (await Promise.all(missing.map(async (word): Promise<Correction | null> => {
    const allowed = typosAllowed(word);
    // The index compares a fuzzy term with its stemmed terms as it is, so it is looked up by its stem.
    const rows = await space.searchText({ words: stem(word), fuzziness: allowed, withText: true }, bare, LOOKUP_ROWS);
    const seen = new Map<string, { distance: number; count: number }>();
    for (const row of rows) {
      for (const [candidate] of (row.text ?? '').matchAll(WORD)) {
        const folded = fold(candidate);
        if (folded === word) continue;
        const distance = editDistance(word, folded, allowed);
        if (distance > allowed) continue;
        const entry = seen.get(folded) ?? { distance, count: 0 };
        entry.count += 1;
        seen.set(folded, entry);
      }
    }
    const best = [...seen].sort(([a, x], [b, y]) => x.distance - y.distance || y.count - x.count || (a < b ? -1 : 1))[0];
    return best ? { word, correctedTo: best[0] } : null;
  }))).filter((c): c is Correction => c !== null);
}
