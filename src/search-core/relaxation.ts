/**
 * Looser readings of a natural-mode query, for when its strict parts leave no row although its words match
 * some: searchDatabases answers with the first reading that finds a row and says in `relaxed` what it gave up
 * (openapi.yaml, SearchResponse.relaxed). The order, each step keeping the ones before it:
 *   1. phrase     a phrase ("a b c", or words joined by punctuation such as what-you-see) becomes its words: they
 *                 need no longer stand next to each other; a quoted phrase's words are each still required
 *   2. required   quoted words and phrases become optional words that rank like any other
 *   3. exclusion  `-word` and `-"a phrase"` are dropped
 * Word order is the least the user can have meant strictly, so it goes first; a word they asked for is given up
 * before a word they asked to keep out, because showing rows the user excluded answers a different question.
 */
import type { QueryNode } from './boolean-query.js';

export type RelaxationKind = 'phrase' | 'required' | 'exclusion';

/** What one reading gave up: its kind, and the words of the part as the query has them. */
export interface Relaxation {
  kind: RelaxationKind;
  text: string;
}

export interface RelaxedReading {
  root: QueryNode;
  relaxed: Relaxation[];
}

const STEPS: RelaxationKind[] = ['phrase', 'required', 'exclusion'];

const wordsOf = (node: QueryNode): string[] => {
  if (node.kind === 'term') return [node.word];
  if (node.kind === 'phrase') return node.words;
  if (node.kind === 'not') return wordsOf(node.child);
  return node.children.flatMap(wordsOf);
};

const word = (text: string, quoted: boolean): QueryNode => (quoted ? { kind: 'term', word: text, prefix: false, quoted: true } : { kind: 'term', word: text, prefix: false });

/** One top-level item of the query at `step` (0: phrase, 1: required, 2: exclusion), what it gave up added to `marks`. */
function relaxItem(node: QueryNode, step: number, marks: Relaxation[][]): QueryNode[] {
  const text = wordsOf(node).join(' ');
  if (node.kind === 'not') {
    if (step < 2) return [node];
    marks[2]!.push({ kind: 'exclusion', text });
    return [];
  }
  if (node.kind === 'or') {
    // An operand of OR is optional already: only its phrases are strict.
    const children = node.children.flatMap((child) => {
      if (child.kind !== 'phrase') return [child];
      marks[0]!.push({ kind: 'phrase', text: child.words.join(' ') });
      return child.words.map((w) => word(w, false));
    });
    return [{ kind: 'or', children }];
  }
  if (node.kind !== 'term' && node.kind !== 'phrase') return [node];
  const required = node.quoted === true;
  if (node.kind === 'phrase') marks[0]!.push({ kind: 'phrase', text });
  if (required && step >= 1) marks[1]!.push({ kind: 'required', text });
  const stillRequired = required && step < 1;
  if (node.kind === 'phrase') return node.words.map((w) => word(w, stillRequired));
  return [stillRequired ? node : { kind: 'term', word: node.word, prefix: node.prefix }];
}

/**
 * The looser readings of a tree parsed without grouping (parseQuery with grouping: false), loosest last. A step with
 * nothing to relax adds no reading, so a query without phrases, quotes or exclusions has none.
 */
export function relaxedReadings(root: QueryNode): RelaxedReading[] {
  const top = root.kind === 'and' ? root.children : [root];
  const readings: RelaxedReading[] = [];
  STEPS.forEach((_, step) => {
    const marks: Relaxation[][] = [[], [], []];
    const children = top.flatMap((node) => relaxItem(node, step, marks));
    if (marks[step]!.length === 0) return;
    const flat = children.flatMap((child) => (child.kind === 'and' ? child.children : [child]));
    readings.push({ root: flat.length === 1 ? flat[0]! : { kind: 'and', children: flat }, relaxed: marks.flat() });
  });
  return readings;
}
