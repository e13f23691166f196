/**
 * PostgreSQL: `<tsvector expression> @@ to_tsquery(...)` ranked by ts_rank_cd, headlined by ts_headline for the rows of
 * the page only. The expression is the GIN index's own, exactly as pg_get_indexdef prints it (discovery keeps it), so
 * the planner uses the index. (Tables without a GIN index take the LIKE fallback, sql-like.ts.)
 *
 * Natural mode (any word may match) ranks candidates, not every match (sql-common.ts, candidatesSql): one list per
 * item of the query, read from the GIN index alone, at most LIVE_RANK_CANDIDATES rows kept, rarest items first; then
 * only those rows are checked against the exact query (phrase adjacency needs the row's positions) and ranked. An
 * expression index has to re-parse the text of every row it checks or ranks, which for a word in every row of a large
 * table is seconds, so boolean mode on an expression index is bounded the same way (one list: the whole query). An
 * index on a stored tsvector column ranks every boolean match (nothing is re-parsed) and counts them exactly.
 *
 * Parameters: the text search configuration, the query rendered as to_tsquery text (renderers.ts; the match, the
 * ranking and each candidate list have their own), the ts_headline options.
 */
import { MAX_SNIPPET_CHARS } from '../connectors/index.js';
import type { QueryNode } from '../search-core/boolean-query.js';
import { hasMarker, MARK_START, MARK_STOP, markersToHtml, SNIPPET_SEPARATOR } from '../search-core/highlight.js';
import { toTsquery } from './renderers.js';
import {
  candidateLists, candidatesFound, candidatesSql, decodeBoundedRank, decodeKeyedDetails, detailColumnsOf, fieldsOf, keyedRankShape, keyRef,
  keysIn, Params, rankSql, tableRef, type RankShape,
} from './sql-common.js';
import type { CompiledQuery } from '../search-core/query.js';
import type { Dialect, HitDetail, SearchTarget, Statement, TableQueries } from './types.js';

export const DEFAULT_TS_CONFIG = 'english';

const HEADLINE_OPTIONS = `StartSel=${MARK_START}, StopSel=${MARK_STOP}, MaxWords=30, MinWords=12, ShortWord=2`;

const hasPhrase = (node: QueryNode): boolean =>
  node.kind === 'phrase' || (node.kind === 'not' ? hasPhrase(node.child) : node.kind === 'and' || node.kind === 'or' ? node.children.some(hasPhrase) : false);

/**
 * The tree as a GIN index answers it without reading rows: a phrase becomes its words (adjacency needs the row's
 * positions) and an excluded phrase is dropped. Every row matching the tree matches this one.
 */
export function withoutAdjacency(node: QueryNode): QueryNode {
  switch (node.kind) {
    case 'term':
    case 'not':
      return node;
    case 'phrase':
      return { kind: 'and', children: node.words.map((word): QueryNode => ({ kind: 'term', word, prefix: false })) };
    case 'and':
      // An `and` always has a positive child (boolean-query.ts), so something is left.
      return { kind: 'and', children: node.children.filter((c) => !(c.kind === 'not' && hasPhrase(c))).map(withoutAdjacency) };
    case 'or':
      return { kind: 'or', children: node.children.map(withoutAdjacency) };
  }
}

/** The to_tsquery texts of a search: what rows must match, what ranks them, and the candidate lists (none: every match). */
function tsqueries(query: CompiledQuery, storedVector: boolean): { match: string; rank: string; lists: string[] } | null {
  const anyWord = query.anyWord;
  if (anyWord) {
    const rank = toTsquery(anyWord.rank);
    const lists = candidateLists(anyWord).map((list) => toTsquery(withoutAdjacency(list))).filter(Boolean);
    return rank && lists.length > 0 ? { match: toTsquery(anyWord.match), rank, lists } : null;
  }
  const match = query.root ? toTsquery(query.root) : '';
  if (!match) return null;
  return { match, rank: match, lists: storedVector ? [] : [toTsquery(withoutAdjacency(query.root!))] };
}

export function createPostgresQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect, bound: number): TableQueries | null {
  const vector = target.index?.expression;
  if (!vector) return null;
  // A quoted column is a stored tsvector: cheap to check and rank. Anything else is an expression re-parsed per row.
  const storedVector = /^"(?:[^"]|"")+"$/.test(vector);
  const texts = tsqueries(query, storedVector);
  if (!texts) return null;
  const bounded = texts.lists.length > 0;
  const q = (name: string) => dialect.quoteIdent(name);
  const table = tableRef(target, dialect);
  const config = target.index?.language ?? DEFAULT_TS_CONFIG;
  const tsquery = (params: Params, name: 'match' | 'rank', text: string) =>
    `to_tsquery(${params.add(config, 'config')}::regconfig, ${params.add(text, name)})`;

  // One headline per searched column: the snippet shows the columns that match, and they are matchedColumns.
  const detailExpressions = (params: Params) => {
    const options = params.add(HEADLINE_OPTIONS, 'headline');
    return [
      ...detailColumnsOf(target, dialect),
      // A headline is a few words, but one "word" may be megabytes long: it is cut too.
      ...target.searchColumns.map((c, i) => ({ sql: `left(ts_headline(${params.add(config, 'config')}::regconfig, d.${q(c)}::text, ${tsquery(params, 'rank', texts.rank)}, ${options}), ${MAX_SNIPPET_CHARS})`, alias: `h${i}` })),
    ];
  };

  // The headlines of the columns that match, else the first non-empty one.
  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const snippets: string[] = [];
    const matchedColumns: string[] = [];
    let firstText: string | null = null;
    target.searchColumns.forEach((column, i) => {
      const text = row[`h${i}`];
      if (typeof text !== 'string') return;
      if (hasMarker(text)) {
        matchedColumns.push(column);
        snippets.push(markersToHtml(text));
      } else if (firstText === null && text !== '') {
        firstText = text;
      }
    });
    const snippet = snippets.length > 0 ? snippets.join(SNIPPET_SEPARATOR) : firstText === null ? '' : markersToHtml(firstText);
    return { fields: fieldsOf(row, target.columns), snippet, matchedColumns };
  };

  /**
   * Candidates (quarry_c), then their vectors computed once each (quarry_v: an expression index re-parses the text
   * here, and nowhere else), checked against the exact query and ranked. A list's to_tsquery is in a subquery, a
   * value the planner cannot look into: it costs re-parsing a row's text far below what it takes, and for a word in
   * most rows would read the table re-parsing rows instead of the index, which reads none.
   */
  const boundedRank = (params: Params): Pick<RankShape, 'with' | 'base' | 'meta' | 'extra'> => {
    const lists = texts.lists.map((text, i) =>
      `SELECT ctid AS c FROM ${table} WHERE ${vector} @@ (SELECT to_tsquery(${params.add(config, 'config')}::regconfig, ${params.add(text, `list${i}`)}))`);
    const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect)} AS k${i}`);
    const candidates = `SELECT ${keys.join(', ')}, ${vector} AS quarry_vector FROM ${table} t WHERE t.ctid = ANY(ARRAY(SELECT c FROM quarry_c))`;
    const rank = tsquery(params, 'rank', texts.rank);
    const match = tsquery(params, 'match', texts.match);
    return {
      with: [`quarry_c AS MATERIALIZED (${candidatesSql(lists, bound)})`, `quarry_v AS MATERIALIZED (${candidates})`],
      base: `SELECT ${target.keys.map((_, i) => `v.k${i}`).join(', ')}, ts_rank_cd(v.quarry_vector, ${rank}) AS quarry_score FROM quarry_v v WHERE v.quarry_vector @@ ${match}`,
      meta: candidatesFound('quarry_c'),
      extra: ['m.quarry_found'],
    };
  };

  const everyMatch = (params: Params): Pick<RankShape, 'base'> => {
    const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect)} AS k${i}`);
    const rank = tsquery(params, 'rank', texts.rank);
    return { base: `SELECT ${keys.join(', ')}, ts_rank_cd(${vector}, ${rank}) AS quarry_score FROM ${table} t WHERE ${vector} @@ ${tsquery(params, 'match', texts.match)}` };
  };

  return {
    target,
    inlineDetails: true,

    rank(top, window): Statement {
      const params = new Params(dialect);
      const shape = bounded ? boundedRank(params) : everyMatch(params);
      const sql = rankSql({
        ...keyedRankShape(target, dialect, table, top, window),
        ...shape,
        details: window.from < Math.min(top, window.to) ? detailExpressions(params) : [],
      });
      return { sql, params: params.values };
    },

    details(keyValues) {
      const params = new Params(dialect);
      const refs = target.keys.map((k) => keyRef(k, 'd', dialect));
      const cast = target.keys.some((k) => k.pseudo) ? '::tid' : '';
      const select = [...refs.map((r, i) => `${r} AS k${i}`), ...detailExpressions(params).map((e) => `${e.sql} AS ${e.alias}`)];
      return { sql: `SELECT ${select.join(', ')} FROM ${table} d WHERE ${keysIn(refs, keyValues, params, cast)}`, params: params.values };
    },

    decodeRanking: (rows, window) => decodeBoundedRank(rows, target.keys.length, window, decodeDetail, bounded ? bound : null),
    decodeDetails: (rows) => decodeKeyedDetails(rows, target.keys.length, decodeDetail),
  };
}
