/**
 * The query language of searchDatabases (openapi.yaml, SearchRequest.searchMode), parsed once into an engine-neutral
 * tree that each engine renders in its own syntax (renderers.ts). Nothing the user typed reaches an engine's query
 * syntax except words made only of letters, marks and digits, so no input can inject operators.
 *
 * Syntax (boolean mode):
 *   word          required (words are AND-ed; `+word` says the same explicitly)
 *   -word         excluded (also `-"a phrase"`, `-(a OR b)`, `NOT word`)
 *   "a phrase"    the words next to each other, in this order
 *   a OR b        either (`|` too); binds tighter than the implicit AND: `a b OR c` is a AND (b OR c)
 *   word*         prefix
 *   ( ... )       grouping (boolean mode only; at most 8 levels)
 * Natural mode reads the same syntax without grouping, and any word may match (anyWordQuery): a quoted word or phrase
 * is required, -word is excluded, every other word is optional and ranks.
 *
 * Leniency instead of errors: an unbalanced quote runs to the end, unbalanced parentheses are ignored, a dangling
 * OR is dropped, an excluded operand of an OR is dropped (it cannot be expressed in every engine), a token without
 * letters or digits (`:*`, `<->`, `!`, `';`) is no word at all. Only a boolean query whose every word is excluded is
 * refused (`excludedOnly`), because no engine can answer "everything except".
 */
import { isStopWord } from './stop-words.js';

/**
 * A node of the parsed query. `not` only appears directly under `and`, and an `and` has a positive child. `quoted`
 * marks words the user put in quotes (a phrase, or one word), as opposed to words joined by punctuation (e-mail).
 */
export type QueryNode =
  | { kind: 'term'; word: string; prefix: boolean; quoted?: true }
  | { kind: 'phrase'; words: string[]; quoted?: true }
  | { kind: 'and'; children: QueryNode[] }
  | { kind: 'or'; children: QueryNode[] }
  | { kind: 'not'; child: QueryNode };

export interface ParsedQuery {
  /** null when the text has no searchable word. */
  root: QueryNode | null;
  /** True when words were found but all of them were excluded. */
  excludedOnly: boolean;
}

export interface ParseOptions {
  /** Parentheses group (boolean mode); otherwise they separate words. */
  grouping: boolean;
}

/** Most words kept from one query; the rest are ignored (the query text is at most 500 characters anyway). */
export const MAX_QUERY_WORDS = 64;
const MAX_DEPTH = 8;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** The words of a text: runs of letters, marks and digits. Everything else separates words. */
export function wordsOf(text: string): string[] {
  return text.match(WORD) ?? [];
}

type Token =
  | { type: 'item'; sign: '+' | '-' | null; node: QueryNode }
  | { type: 'or' }
  | { type: 'not' }
  | { type: 'open'; sign: '+' | '-' | null }
  | { type: 'close' };

function leaf(words: string[], prefix: boolean, quoted = false): QueryNode | null {
  if (words.length === 0) return null;
  const node: QueryNode = words.length === 1 ? { kind: 'term', word: words[0]!, prefix } : { kind: 'phrase', words };
  return quoted ? { ...node, quoted: true } : node;
}

function signOf(run: string): '+' | '-' | null {
  if (run.includes('-')) return '-';
  return run.length > 0 ? '+' : null;
}

function tokenize(text: string, options: ParseOptions): Token[] {
  const tokens: Token[] = [];
  let budget = MAX_QUERY_WORDS;
  const take = (words: string[]) => {
    const kept = words.slice(0, Math.max(0, budget));
    budget -= kept.length;
    return kept;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    // A run of + and - signs applies to what follows it directly.
    const signRun = /^[+\-]+/.exec(text.slice(i))?.[0] ?? '';
    const sign = signOf(signRun);
    const at = i + signRun.length;
    const next = text[at];
    if (next === '"') {
      const end = text.indexOf('"', at + 1);
      const body = end === -1 ? text.slice(at + 1) : text.slice(at + 1, end);
      i = end === -1 ? text.length : end + 1;
      const node = leaf(take(wordsOf(body)), false, true);
      if (node) tokens.push({ type: 'item', sign, node });
      continue;
    }
    if (next === '(' || next === ')') {
      i = at + 1;
      if (!options.grouping) continue;
      tokens.push(next === '(' ? { type: 'open', sign } : { type: 'close' });
      continue;
    }
    const chunk = /^[^\s"()]*/u.exec(text.slice(at))?.[0] ?? '';
    i = at + Math.max(chunk.length, signRun.length === 0 ? 1 : 0);
    if (sign === null && (chunk === 'OR' || chunk === '|' || chunk === '||')) {
      tokens.push({ type: 'or' });
      continue;
    }
    if (sign === null && chunk === 'AND') continue;
    if (sign === null && chunk === 'NOT') {
      tokens.push({ type: 'not' });
      continue;
    }
    const prefix = /[\p{L}\p{M}\p{N}]\*+$/u.test(chunk) || /[\p{L}\p{M}\p{N}]:\*$/u.test(chunk);
    const node = leaf(take(wordsOf(chunk)), prefix);
    if (node) tokens.push({ type: 'item', sign, node });
  }
  return tokens;
}

interface Operand {
  negated: boolean;
  node: QueryNode;
}

/** Recursive descent over the tokens: sequence := clause*, clause := operand (OR operand)*. */
class Parser {
  private at = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  sequence(): Operand[] {
    const clauses: Operand[] = [];
    while (this.at < this.tokens.length) {
      const token = this.tokens[this.at]!;
      if (token.type === 'close') {
        if (this.depth > 0) return clauses;
        this.at++; // an unbalanced ')' is ignored
        continue;
      }
      if (token.type === 'or') {
        this.at++; // an OR without a left operand is ignored
        continue;
      }
      const clause = this.clause();
      if (clause) clauses.push(clause);
    }
    return clauses;
  }

  private clause(): Operand | null {
    const operands: Operand[] = [];
    const first = this.operand();
    if (first) operands.push(first);
    while (this.tokens[this.at]?.type === 'or') {
      this.at++;
      const next = this.operand();
      if (next) operands.push(next);
    }
    if (operands.length <= 1) return operands[0] ?? null;
    // An excluded operand of an OR cannot be expressed in MySQL or FTS5: it is dropped.
    const positive = operands.filter((o) => !o.negated).map((o) => o.node);
    if (positive.length === 0) return null;
    return { negated: false, node: positive.length === 1 ? positive[0]! : flatten({ kind: 'or', children: positive }) };
  }

  private operand(): Operand | null {
    let negated = false;
    while (this.tokens[this.at]?.type === 'not') {
      negated = !negated;
      this.at++;
    }
    const token = this.tokens[this.at];
    if (!token || token.type === 'or' || token.type === 'close' || token.type === 'not') return null;
    this.at++;
    if (token.type === 'item') return { negated: negated !== (token.sign === '-'), node: token.node };
    // '(' ... ')'
    const sign = token.type === 'open' ? token.sign : null;
    let inner: Operand[];
    if (this.depth >= MAX_DEPTH) {
      inner = [];
    } else {
      this.depth++;
      inner = this.sequence();
      this.depth--;
    }
    if (this.tokens[this.at]?.type === 'close') this.at++;
    const node = conjunction(inner);
    if (!node) return null;
    return { negated: negated !== (sign === '-'), node };
  }
}

/** Nested and/or nodes of the same kind become one node. */
function flatten(node: QueryNode): QueryNode {
  if (node.kind !== 'and' && node.kind !== 'or') return node;
  const children = node.children.flatMap((child) => (child.kind === node.kind ? child.children : [child]));
  return { kind: node.kind, children };
}

/** The AND of operands, or null when none is positive (an AND of exclusions alone means nothing). */
function conjunction(operands: Operand[]): QueryNode | null {
  const positives = operands.filter((o) => !o.negated).map((o) => o.node);
  if (positives.length === 0) return null;
  const negatives = operands.filter((o) => o.negated).map((o): QueryNode => ({ kind: 'not', child: o.node }));
  if (negatives.length === 0 && positives.length === 1) return positives[0]!;
  return flatten({ kind: 'and', children: [...positives, ...negatives] });
}

export function parseQuery(text: string, options: ParseOptions): ParsedQuery {
  const operands = new Parser(tokenize(text, options)).sequence();
  const root = conjunction(operands);
  return { root, excludedOnly: root === null && operands.length > 0 };
}

/** A searched-for word: every word outside an exclusion, phrases split into their words. */
export interface PositiveTerm {
  word: string;
  prefix: boolean;
}

export function positiveTerms(root: QueryNode | null): PositiveTerm[] {
  const terms: PositiveTerm[] = [];
  const seen = new Set<string>();
  const add = (word: string, prefix: boolean) => {
    const key = `${word.toLowerCase()}\u0000${prefix}`;
    if (!seen.has(key)) {
      seen.add(key);
      terms.push({ word, prefix });
    }
  };
  const walk = (node: QueryNode) => {
    if (node.kind === 'term') add(node.word, node.prefix);
    else if (node.kind === 'phrase') node.words.forEach((w) => add(w, false));
    else if (node.kind === 'and' || node.kind === 'or') node.children.forEach(walk);
  };
  if (root) walk(root);
  return terms;
}

/**
 * A natural-mode query (searchMode natural): any of its words may match. Quoted words and phrases are required and
 * excluded ones must not occur, as in boolean mode; every other word is optional, and a row needs at least one of them
 * unless a quoted item already decides it. Rows are ranked by every positive item, so a row that holds more of the
 * words, or rarer ones, comes first.
 */
export interface AnyWordQuery {
  /** The condition a row must meet. */
  match: QueryNode;
  /** Every positive item OR-ed: what engines rank by and highlight. */
  rank: QueryNode;
  /** The positive items one by one, optional ones first (each seeds a list of candidate rows on the live path). */
  items: QueryNode[];
  /** Quoted items: a row must hold each of them. */
  required: QueryNode[];
  /** Items a row must not hold. */
  excluded: QueryNode[];
}

const join = (kind: 'and' | 'or', children: QueryNode[]): QueryNode =>
  children.length === 1 ? children[0]! : flatten({ kind, children });

/** The any-word reading of a tree parsed without grouping (parseQuery with grouping: false). */
export function anyWordQuery(root: QueryNode): AnyWordQuery {
  const top = root.kind === 'and' ? root.children : [root];
  const excluded = top.flatMap((node) => (node.kind === 'not' ? [node.child] : []));
  const positives = top.filter((node) => node.kind !== 'not');
  const required = positives.filter((node) => (node.kind === 'term' || node.kind === 'phrase') && node.quoted === true);
  // `a OR b` adds nothing when any word may match: its operands are optional items like any other.
  const optionalAll = positives.filter((node) => !required.includes(node)).flatMap((node) => (node.kind === 'or' ? node.children : [node]));
  // Stop words ("a", "for") would match nearly every row; they count only in a query made of nothing else.
  const content = optionalAll.filter((node) => !(node.kind === 'term' && node.quoted !== true && isStopWord(node.word)));
  const optional = content.length > 0 || required.length > 0 ? content : optionalAll;
  const seen = new Set<string>();
  const items = [...optional, ...required].filter((node) => {
    const key = JSON.stringify(node).toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const gate = required.length > 0 ? required : [join('or', optional)];
  return {
    match: join('and', [...gate, ...excluded.map((child): QueryNode => ({ kind: 'not', child }))]),
    rank: join('or', items),
    items,
    required,
    excluded,
  };
}
