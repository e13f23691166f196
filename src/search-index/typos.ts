/**
 * Typo tolerance of natural-mode search over the index (issue 26), on by default: a word of 5 to 8 letters may carry
 * one typo, a word of 9 or more two (Meilisearch's defaults); shorter words must be exact. Only a word the selected
 * rows do not contain at all is corrected, so an exact match always ranks above a corrected one: a word that exists
 * is searched as typed. A missing word is looked up with the index's fuzzy matching (a Levenshtein automaton over its
 * terms), and the closest word of the rows it finds (optimal string alignment: a swap of neighbours is one edit)
 * replaces it in the query. The answer lists each correction.
 */
import stem from 'wink-porter2-stemmer';
import { editDistance } from '../sql-search/vocabulary.js';
import { isStopWord } from './analyzer.js';
import { type IndexSpace, MAX_TOKEN_BYTES, type SearchScope, type TextQuery } from './index-store.js';

export interface Correction {
  word: string;
  correctedTo: string;
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Rows a fuzzy lookup reads to find the word it matched. */
const LOOKUP_ROWS = 5;

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
 * The query with its missing words corrected, and the corrections. Words are checked in parallel, one cheap
 * lookup each (the best row that has the word); only missing ones cost a fuzzy lookup.
 */
export async function correctTypos(space: IndexSpace, query: TextQuery, scope: SearchScope): Promise<{ query: TextQuery; corrections: Correction[] }> {
  const typed = [...new Set((query.words.match(WORD) ?? []).map(fold))].filter(correctable);
  const bare: SearchScope = { srcs: scope.srcs, where: scope.where };
  const present = await Promise.all(typed.map(async (word) => (await space.searchText({ words: word }, bare, 1)).length > 0));
  const missing = typed.filter((_, i) => !present[i]);
  if (missing.length === 0) return { query, corrections: [] };

  const corrections = (await Promise.all(missing.map(async (word): Promise<Correction | null> => {
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
  if (corrections.length === 0) return { query, corrections: [] };

  const replaced = new Map(corrections.map((c) => [c.word, c.correctedTo]));
  const correct = (text: string) => (text.match(WORD) ?? []).map((w) => replaced.get(fold(w)) ?? w).join(' ');
  return { query: { ...query, words: correct(query.words), require: query.require?.map(correct) }, corrections };
}
