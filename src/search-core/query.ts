/**
 * The query as every engine reads it, compiled once per search from what the caller typed: the parsed tree
 * (boolean-query.ts), natural mode's any-word reading, the words to highlight, and its looser readings (relaxation.ts).
 */
import { anyWordQuery, parseQuery, positiveTerms, type AnyWordQuery, type PositiveTerm, type QueryNode } from './boolean-query.js';
import { relaxedReadings, type Relaxation } from './relaxation.js';

/** The query as every engine needs it: the text, the parsed tree and the words to highlight. */
export interface CompiledQuery {
  /** As typed (trimmed); engines never see it, only trees rendered from it. */
  text: string;
  mode: 'natural' | 'boolean';
  /** The condition a row must meet (natural mode: anyWord.match); null when the text has no searchable word. */
  root: QueryNode | null;
  /** Natural mode's any-word reading (boolean-query.ts); null in boolean mode and without words. */
  anyWord: AnyWordQuery | null;
  terms: PositiveTerm[];
}

export interface CompileResult {
  query: CompiledQuery;
  /** Boolean mode, every word excluded: no engine can answer it. */
  excludedOnly: boolean;
}

/** Natural mode: any word may match, no grouping (anyWordQuery); boolean mode: words required, parentheses group. */
export function compileQuery(text: string, mode: 'natural' | 'boolean'): CompileResult {
  // PostgreSQL refuses NUL in text; it separates words like any other non-word character.
  const trimmed = text.replace(/\u0000/g, ' ').trim();
  const parsed = parseQuery(trimmed, { grouping: mode === 'boolean' });
  if (mode === 'natural' && parsed.root) return { query: naturalQuery(trimmed, parsed.root), excludedOnly: parsed.excludedOnly };
  return {
    query: { text: trimmed, mode, root: parsed.root, anyWord: null, terms: positiveTerms(parsed.root) },
    excludedOnly: parsed.excludedOnly,
  };
}

function naturalQuery(text: string, root: QueryNode): CompiledQuery {
  const anyWord = anyWordQuery(root);
  return { text, mode: 'natural', root: anyWord.match, anyWord, terms: positiveTerms(anyWord.rank) };
}

/**
 * The looser readings of a natural-mode query (relaxation.ts), loosest last, each with what it gave up; none in
 * boolean mode, where every word is required because the caller chose so.
 */
export function relaxedQueries(query: CompiledQuery): Array<{ query: CompiledQuery; relaxed: Relaxation[] }> {
  if (query.mode !== 'natural') return [];
  const { root } = parseQuery(query.text, { grouping: false });
  if (!root) return [];
  return relaxedReadings(root).map((reading) => ({ query: naturalQuery(query.text, reading.root), relaxed: reading.relaxed }));
}

