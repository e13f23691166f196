/**
 * The parsed query (boolean-query.ts) in each engine's own syntax. The result is always sent as a bound parameter;
 * on top of that every word is reduced to letters, marks and digits again here, so even a tree built elsewhere cannot
 * carry an operator, a quote or a backslash into the engine's query parser.
 */
import type { PositiveTerm, QueryNode } from '../search-core/boolean-query.js';

/** Only letters, marks and digits survive. */
export function cleanWord(word: string): string {
  return word.replace(/[^\p{L}\p{M}\p{N}]/gu, '');
}

// ---- PostgreSQL: to_tsquery -------------------------------------------------------------------------------------

function lexeme(word: string, prefix: boolean): string {
  const clean = cleanWord(word);
  return clean ? `'${clean}'${prefix ? ':*' : ''}` : '';
}

/** to_tsquery text: 'word', 'pre':*, ('a' <-> 'b'), &, |, !. */
export function toTsquery(node: QueryNode): string {
  switch (node.kind) {
    case 'term':
      return lexeme(node.word, node.prefix);
    case 'phrase': {
      const parts = node.words.map((w) => lexeme(w, false)).filter(Boolean);
      return parts.length > 1 ? `(${parts.join(' <-> ')})` : (parts[0] ?? '');
    }
    case 'not': {
      const inner = toTsquery(node.child);
      return inner ? `!(${inner})` : '';
    }
    case 'and':
    case 'or': {
      const parts = node.children.map(toTsquery).filter(Boolean).map((p) => `(${p})`);
      return parts.join(node.kind === 'and' ? ' & ' : ' | ');
    }
  }
}

/** Any of the searched-for words, for "which column matched": 'a' | 'b' | 'c':*. */
export function anyTermTsquery(terms: PositiveTerm[]): string {
  return terms.map((t) => lexeme(t.word, t.prefix)).filter(Boolean).join(' | ');
}

// ---- MySQL / MariaDB: MATCH ... AGAINST (... IN BOOLEAN MODE) ---------------------------------------------------

/**
 * InnoDB's default stopwords (INFORMATION_SCHEMA.INNODB_FT_DEFAULT_STOPWORD). A required stopword, or a word shorter
 * than innodb_ft_min_token_size (3), makes InnoDB match nothing at all; PostgreSQL and FTS5 ignore such words, so the
 * renderer drops them as required terms (inside a phrase they are kept: InnoDB handles them there).
 */
const INNODB_STOPWORDS = new Set([
  'a', 'about', 'an', 'are', 'as', 'at', 'be', 'by', 'com', 'de', 'en', 'for', 'from', 'how', 'i', 'in', 'is', 'it',
  'la', 'of', 'on', 'or', 'that', 'the', 'this', 'to', 'was', 'what', 'when', 'where', 'who', 'will', 'with', 'und',
  'www',
]);
const MYSQL_MIN_TOKEN = 3;

function mysqlWord(word: string, prefix: boolean): string {
  const clean = cleanWord(word);
  if (!clean) return '';
  if (!prefix && (clean.length < MYSQL_MIN_TOKEN || INNODB_STOPWORDS.has(clean.toLowerCase()))) return '';
  return prefix ? `${clean}*` : clean;
}

/** One operand without its +/- operator. */
function mysqlOperand(node: QueryNode): string {
  switch (node.kind) {
    case 'term':
      return mysqlWord(node.word, node.prefix);
    case 'phrase': {
      const words = node.words.map(cleanWord).filter(Boolean);
      return words.length > 0 ? `"${words.join(' ')}"` : '';
    }
    case 'not':
      return mysqlOperand(node.child);
    case 'or': {
      // Inside parentheses, operands without operators are optional: the group matches when any of them does.
      const parts = node.children.map(mysqlOperand).filter(Boolean);
      return parts.length > 0 ? `(${parts.join(' ')})` : '';
    }
    case 'and': {
      const inner = mysqlAnd(node);
      return inner ? `(${inner})` : '';
    }
  }
}

function mysqlAnd(node: Extract<QueryNode, { kind: 'and' }>): string {
  const parts = node.children.map((child) => {
    const operand = mysqlOperand(child);
    return operand ? `${child.kind === 'not' ? '-' : '+'}${operand}` : '';
  });
  // Only exclusions left (every required word was a stopword): nothing to search for.
  if (!parts.some((p) => p.startsWith('+'))) return '';
  return parts.filter(Boolean).join(' ');
}

/** The AGAINST(... IN BOOLEAN MODE) text, or '' when nothing searchable remains. */
export function toMysqlBoolean(root: QueryNode): string {
  if (root.kind === 'and') return mysqlAnd(root);
  const operand = mysqlOperand(root);
  return operand ? `+${operand}` : '';
}

// ---- SQLite: FTS5 MATCH -----------------------------------------------------------------------------------------

function ftsString(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** FTS5 query syntax with every word in a quoted string; NOT is FTS5's binary `a NOT b`. */
export function toFts5(node: QueryNode): string {
  switch (node.kind) {
    case 'term': {
      const clean = cleanWord(node.word);
      return clean ? `${ftsString(clean)}${node.prefix ? ' *' : ''}` : '';
    }
    case 'phrase': {
      const words = node.words.map(cleanWord).filter(Boolean);
      return words.length > 0 ? ftsString(words.join(' ')) : '';
    }
    case 'not':
      return toFts5(node.child);
    case 'or': {
      const parts = node.children.map(toFts5).filter(Boolean).map((p) => `(${p})`);
      return parts.join(' OR ');
    }
    case 'and': {
      const positives = node.children.filter((c) => c.kind !== 'not').map(toFts5).filter(Boolean).map((p) => `(${p})`);
      if (positives.length === 0) return '';
      let text = positives.join(' AND ');
      for (const child of node.children.filter((c) => c.kind === 'not')) {
        const excluded = toFts5(child);
        if (excluded) text = `(${text}) NOT (${excluded})`;
      }
      return text;
    }
  }
}

/** Restricts an FTS5 query to some columns: {"a" "b"} : (query). */
export function fts5ColumnFilter(columns: string[], query: string): string {
  return `{${columns.map(ftsString).join(' ')}} : (${query})`;
}
