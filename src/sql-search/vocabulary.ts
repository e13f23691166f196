/**
 * "Did you mean" for getSearchSuggestions: the words of a connection's data, sampled (the first SAMPLE_ROWS rows of
 * up to SAMPLE_TABLES tables, every text column, the first SAMPLE_CHARS characters of each value) and counted; a word
 * of the query that is not in any vocabulary is replaced by the most frequent word within edit distance 2 (1 for
 * words of up to 4 letters). Optimal string alignment distance: a swap of two neighbours counts as one edit.
 */
import { boundedValue, isValueTooLarge, type SqlExecutor, type TableSchema } from '../connectors/index.js';
import { wordsOf } from '../search-core/boolean-query.js';
import type { SearchSchema } from './schema-catalog.js';

export const SAMPLE_ROWS = 500;
export const SAMPLE_TABLES = 20;
const SAMPLE_CHARS = 2000;
const MAX_WORDS = 50_000;
const MIN_LENGTH = 3;
const MAX_LENGTH = 30;
/** Fewer letters than this complete to too many words to help. */
const COMPLETE_MIN = 2;

/** word (lower case) -> how often it was seen. */
export type Vocabulary = Map<string, number>;

const wordy = (word: string) => word.length >= MIN_LENGTH && word.length <= MAX_LENGTH && /\p{L}/u.test(word);

export function addText(vocabulary: Vocabulary, text: string): void {
  for (const word of wordsOf(text.slice(0, SAMPLE_CHARS).toLowerCase())) {
    if (wordy(word)) vocabulary.set(word, (vocabulary.get(word) ?? 0) + 1);
  }
}

/** A connection's sampled words: all of them, and each table's own (a key restricted to tables sees only theirs). */
export interface SampledVocabulary {
  all: Vocabulary;
  tables: { table: { name: string; schema: string | null }; vocabulary: Vocabulary }[];
}

const capped = (vocabulary: Vocabulary): Vocabulary =>
  vocabulary.size <= MAX_WORDS ? vocabulary : new Map([...vocabulary].sort((a, b) => b[1] - a[1]).slice(0, MAX_WORDS));

/**
 * The sampling statement of one table: its text columns, each cut in SQL to SAMPLE_CHARS characters, so a huge value
 * costs the database some work but never Quarry's memory.
 */
export function sampleQuery(executor: Pick<SqlExecutor, 'engine' | 'quoteIdent'>, table: TableSchema): string {
  const q = (name: string) => executor.quoteIdent(name);
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  const from = table.schema && executor.engine === 'postgres' ? `${q(table.schema)}.${q(table.name)}` : q(table.name);
  const columns = table.textColumns.map((c) => `${boundedValue(executor.engine, q(c), types.get(c), SAMPLE_CHARS)} AS ${q(c)}`);
  return `SELECT ${columns.join(', ')} FROM ${from} LIMIT ${SAMPLE_ROWS}`;
}

export async function sampleVocabularies(executor: SqlExecutor, schema: SearchSchema, timeoutMs: number): Promise<SampledVocabulary> {
  const sampled: SampledVocabulary['tables'] = [];
  for (const table of schema.tables.filter((t) => t.textColumns.length > 0).slice(0, SAMPLE_TABLES)) {
    const vocabulary: Vocabulary = new Map();
    // A table SQLite refuses to build a value of (its length limit) adds no words; the other tables still do.
    const rows = await executor.query(sampleQuery(executor, table), [], { timeoutMs }).catch((error: unknown) => {
      if (isValueTooLarge(error)) return [];
      throw error;
    });
    for (const row of rows) for (const value of Object.values(row)) if (typeof value === 'string') addText(vocabulary, value);
    sampled.push({ table: { name: table.name, schema: table.schema ?? null }, vocabulary: capped(vocabulary) });
  }
  return { all: capped(mergeVocabularies(sampled.map((t) => t.vocabulary))), tables: sampled };
}

/** Optimal string alignment distance, or max + 1 as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous2: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, previous2[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous2 = previous;
    previous = current;
  }
  return previous[b.length]!;
}

interface Candidate {
  word: string;
  distance: number;
  count: number;
}

function candidates(word: string, vocabulary: Vocabulary, limit: number): Candidate[] {
  const max = word.length <= 4 ? 1 : 2;
  const found: Candidate[] = [];
  for (const [known, count] of vocabulary) {
    if (Math.abs(known.length - word.length) > max) continue;
    const distance = editDistance(word, known, max);
    if (distance <= max) found.push({ word: known, distance, count });
  }
  return found.sort((a, b) => a.distance - b.distance || b.count - a.count || (a.word < b.word ? -1 : 1)).slice(0, limit);
}

/** Up to `limit` spellings of `query` with unknown words replaced by known ones; [] when every word is known. */
export function didYouMean(query: string, vocabulary: Vocabulary, limit = 3): string[] {
  if (vocabulary.size === 0) return [];
  const unknown = [...new Set(wordsOf(query.toLowerCase()))].filter((w) => wordy(w) && !vocabulary.has(w));
  const fixes = new Map(unknown.map((w) => [w, candidates(w, vocabulary, limit)] as const).filter(([, c]) => c.length > 0));
  if (fixes.size === 0) return [];
  const rewrite = (choice: (word: string) => string | undefined) =>
    query.replace(/[\p{L}\p{M}\p{N}]+/gu, (word) => choice(word.toLowerCase()) ?? word);
  const spellings = [rewrite((w) => fixes.get(w)?.[0]?.word)];
  // Alternatives: the other candidates of the first word that has several.
  const [first, options] = [...fixes].find(([, c]) => c.length > 1) ?? [];
  for (const option of options?.slice(1) ?? []) {
    spellings.push(rewrite((w) => (w === first ? option.word : fixes.get(w)?.[0]?.word)));
  }
  return [...new Set(spellings)].filter((s) => s !== query).slice(0, limit);
}

/**
 * Completions of the word being typed (the last word of `typed`, at least COMPLETE_MIN letters) from the caller's own
 * vocabulary, most frequent first: `typed` with that word completed, and how often the word was seen.
 */
export function completions(typed: string, vocabulary: Vocabulary, limit: number): { text: string; count: number }[] {
  const last = /[\p{L}\p{M}\p{N}]+$/u.exec(typed);
  if (!last || last[0].length < COMPLETE_MIN || vocabulary.size === 0) return [];
  const prefix = last[0].toLowerCase();
  const head = typed.slice(0, last.index);
  return [...vocabulary]
    .filter(([word]) => word.length > prefix.length && word.startsWith(prefix))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([word, count]) => ({ text: head + word, count }));
}

/** Several connections' (or tables') vocabularies as one. */
export function mergeVocabularies(vocabularies: Vocabulary[]): Vocabulary {
  if (vocabularies.length === 1) return vocabularies[0]!;
  const merged: Vocabulary = new Map();
  for (const vocabulary of vocabularies) for (const [word, count] of vocabulary) merged.set(word, (merged.get(word) ?? 0) + count);
  return merged;
}
