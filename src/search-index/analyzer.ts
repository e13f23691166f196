/**
 * How Quarry reads words the way the index does, to mark in a snippet the words that made a row match
 * and to name its matched columns. The index's text analyzer (LanceDB's default: lower case, ASCII folding, English
 * stop words removed, Snowball English stemming) decides what matches; a word here matches a query word when both
 * stem to the same Porter2 stem, so "models" in a row is marked for the query "model".
 */
import stem from 'wink-porter2-stemmer';
import type { AnyWordQuery, QueryNode } from '../search-core/boolean-query.js';
import { cut, escapeHtml, LEAD_CHARS, textOf } from '../search-core/highlight.js';
import { foldWord as fold, isFoldedStopWord, isStopWord } from '../search-core/stop-words.js';

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

export { isStopWord };

/** BM25's parameters as the index scores with them (LanceDB's): what Quarry's own scoring in memory uses too. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** The longest word the text index keeps (LanceDB's default, stated): a longer one is in no row, so never matches. */
export const MAX_TOKEN_BYTES = 40;

/** The stems of a text's words, stop words left out (the query's terms as the index sees them). */
export function queryStems(text: string): Set<string> {
  const stems = new Set<string>();
  for (const [word] of text.matchAll(WORD)) {
    const folded = fold(word);
    if (folded && !isFoldedStopWord(folded)) stems.add(stem(folded));
  }
  return stems;
}

/**
 * Calls `visit` with each run of `text` that may hold words, by character codes: `[start, end)`, whether it holds
 * capitals (`upper`) and characters beyond ASCII (`wide`: accents, dashes, curly quotes). A run that is neither is one
 * word of ASCII letters and digits; a wide one is cut into words by the Unicode expression. A `visit` that returns
 * true stops the walk.
 */
export function eachWordSpan(text: string, visit: (start: number, end: number, upper: boolean, wide: boolean) => boolean | void): void {
  let start = -1;
  let wide = false;
  let upper = false;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else if ((c >= 65 && c <= 90) || c > 127) {
      if (start < 0) start = i;
      if (c > 127) wide = true;
      else upper = true;
    } else if (start >= 0) {
      if (visit(start, i, upper, wide) === true) return;
      start = -1;
      wide = false;
      upper = false;
    }
  }
}

/**
 * Stems of words seen in rows, kept, for everything that stems a row's words (snippets, heading weights, relevance
 * feedback, the counted words of row-words.ts): the same words recur. A plain map, started over when it holds STEMS_KEPT words so that its memory stays bounded: a
 * least-recently-used cache's bookkeeping on every word of ten rows' snippets and a hundred rows' headings was 0.7 ms
 * of each search (a CPU profile of 400 verbose searches, docs/benchmarks.md), more than the stemming it saves.
 */
const STEMS_KEPT = 50_000;
const stemmed = new Map<string, string>();

/** The Porter2 stem of a folded word (kept: rows repeat their words). */
export function stemOfFolded(folded: string): string {
  let found = stemmed.get(folded);
  if (found === undefined) {
    if (stemmed.size >= STEMS_KEPT) stemmed.clear();
    stemmed.set(folded, (found = stem(folded)));
  }
  return found;
}

/**
 * The first two letters of a word, when stemming keeps them: two letters a-z other than y (Porter2 changes a word's
 * end, and turns a y into an i, as in "lying" -> "lie"), as a number; -1 for any other word, which must be stemmed to
 * tell. A word whose key is not one of the stems' cannot stem to one of them, so most of a row's words are passed
 * over without stemming, which would otherwise be most of the work (relevance feedback, snippets, headings).
 */
export function headOf(word: string): number {
  return word.length < 2 ? -1 : headOfCodes(word.charCodeAt(0), word.charCodeAt(1));
}

/** headOf of a word whose first two character codes, lower-cased, are `a` and `b`. */
export function headOfCodes(a: number, b: number): number {
  return a >= 97 && a <= 122 && a !== 121 && b >= 97 && b <= 122 && b !== 121 ? a * 128 + b : -1;
}

/** A character code lower-cased, for codes of ASCII letters and digits. */
export const lowerCode = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * The heads (headOf) of `stems`: a word whose head is not among them cannot stem to one of them; a stem no head can
 * tell is there as -1, and a word of head -1 must always be stemmed to tell.
 */
export function stemHeads(stems: Iterable<string>): Set<number> {
  return new Set([...stems].map(headOf));
}

/** Whether a folded word may stem to one of `stems` (headOf): false means it cannot, true that it must be stemmed to tell. */
export function mayStemTo(stems: Iterable<string>): (folded: string) => boolean {
  const heads = stemHeads(stems);
  return (folded) => {
    const head = headOf(folded);
    return head === -1 || heads.has(head);
  };
}

/** The word's stem when it is one of `stems` (a stop word never is), else null; `may` tells most others at once. */
function matchingStem(word: string, stems: Set<string>, may: (folded: string) => boolean): string | null {
  const folded = fold(word);
  if (!may(folded) || isFoldedStopWord(folded)) return null;
  const stemmed = stemOfFolded(folded);
  return stems.has(stemmed) ? stemmed : null;
}

/**
 * A snippet around the first matching word of the column that holds the most of the query's words (the first such
 * column on a tie: a short title beats a long text that says no more), escaped with matches in <mark>, and the
 * columns that contain a matching word. A row matched by meaning alone shows the start of its text, and its
 * matched columns are the text columns it was embedded from (those with text).
 */
export function highlightByStems(
  fields: Record<string, unknown>,
  columns: string[],
  stems: Set<string>,
): { snippet: string; matchedColumns: string[] } {
  const matchedColumns: string[] = [];
  const may = mayStemTo(stems);
  const heads = stemHeads(stems);
  let best: { text: string; index: number; words: number } | null = null;
  for (const column of columns) {
    const text = textOf(fields[column]);
    if (!text) continue;
    const found = new Set<string>();
    let first = -1;
    // Ten rows' texts per search: cut by character codes, and an ASCII word passed over by its first two letters
    // (headOf) when they are no query stem's, without cutting it out of the text.
    const take = (word: string, index: number): boolean => {
      const stemmed = matchingStem(word, stems, may);
      if (stemmed === null) return false;
      found.add(stemmed);
      if (first < 0) first = index;
      return found.size === stems.size;
    };
    eachWordSpan(text, (start, end, _upper, wide) => {
      if (wide) {
        for (const match of text.slice(start, end).matchAll(WORD)) if (take(match[0], start + match.index)) return true;
        return false;
      }
      if (end - start >= 2) {
        const head = headOfCodes(lowerCode(text.charCodeAt(start)), lowerCode(text.charCodeAt(start + 1)));
        if (head !== -1 && !heads.has(head)) return false;
      }
      return take(text.slice(start, end), start);
    });
    if (first < 0) continue;
    matchedColumns.push(column);
    if (!best || found.size > best.words) best = { text, index: first, words: found.size };
  }
  if (!best) {
    const withText = columns.filter((c) => (textOf(fields[c]) ?? '').trim() !== '');
    return { snippet: escapeHtml(cut(textOf(fields[withText[0] ?? '']) ?? '', 0)), matchedColumns: withText };
  }
  return { snippet: markWords(cut(best.text, Math.max(0, best.index - LEAD_CHARS)), stems, may), matchedColumns };
}

function markWords(window: string, stems: Set<string>, may: (folded: string) => boolean): string {
  let html = '';
  let last = 0;
  for (const match of window.matchAll(WORD)) {
    if (matchingStem(match[0], stems, may) === null) continue;
    html += `${escapeHtml(window.slice(last, match.index))}<mark>${escapeHtml(match[0])}</mark>`;
    last = match.index + match[0].length;
  }
  return html + escapeHtml(window.slice(last));
}

/**
 * The index query of a compiled natural-mode query, the any-word reading the live path uses too: every word outside
 * an exclusion ranks, a quoted word or phrase must be in the row (a phrase word by word: the index keeps no
 * positions), and the words of `-word` / `-"a phrase"` keep a row out.
 */
export function indexTextQuery(query: { root: QueryNode | null; anyWord: AnyWordQuery | null }): { words: string; require: string[]; exclude: string[] } {
  const wordsOf = (nodes: QueryNode[]): string[] => {
    const into: string[] = [];
    const walk = (node: QueryNode) => {
      if (node.kind === 'term') into.push(node.word);
      else if (node.kind === 'phrase') into.push(...node.words);
      else if (node.kind !== 'not') node.children.forEach(walk);
    };
    nodes.forEach(walk);
    return into;
  };
  const { anyWord } = query;
  if (!anyWord) return { words: wordsOf(query.root ? [query.root] : []).join(' '), require: [], exclude: [] };
  return { words: wordsOf([anyWord.rank]).join(' '), require: wordsOf(anyWord.required), exclude: wordsOf(anyWord.excluded) };
}
