/**
 * Words an English analyzer drops from queries and rows (the Lucene/Tantivy English list that Quarry's index uses),
 * so they never make a row match and are never marked. Live natural-mode searches leave them out too, so "a" in
 * "headphones for a flight" does not match every row that holds the letter a.
 */
const STOP_WORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of',
  'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with',
]);

/** The stop words, folded (lower case ASCII, five letters at most). */
export const FOLDED_STOP_WORDS: ReadonlySet<string> = STOP_WORDS;

/**
 * A word folded as the index folds it: lower case, accents removed. ASCII, the usual case, has nothing to decompose or
 * remove, so it is only lower-cased: normalising and stripping marks per word was most of a snippet's cost.
 */
export function foldWord(word: string): string {
  for (let i = 0; i < word.length; i++) {
    if (word.charCodeAt(i) > 127) return word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  }
  return word.toLowerCase();
}

/** A word the analyzer drops (compared folded). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(foldWord(word));
}

/** The same test for a word already folded. */
export function isFoldedStopWord(folded: string): boolean {
  return STOP_WORDS.has(folded);
}
