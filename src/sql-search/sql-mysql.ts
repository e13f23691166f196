/**
 * MySQL / MariaDB: MATCH(<the FULLTEXT index's columns, in index order>) AGAINST(? IN NATURAL LANGUAGE MODE | IN
 * BOOLEAN MODE). MySQL has no highlighter, so snippets are made from the page rows.
 *
 * Natural mode hands the query's words to the engine's own relevance ranking (any word may match), and keeps its top
 * LIVE_RANK_CANDIDATES rows: with MATCH in the WHERE clause and no ORDER BY, InnoDB returns rows by relevance, best
 * first (MySQL manual, "Natural Language Full-Text Searches"), so LIMIT stops after the best rows instead of fetching
 * every match, and those rows are the engine's exact top. Quoted words and phrases, and excluded ones, are a second
 * MATCH in boolean mode on the same rows. Boolean mode renders the parsed query (renderers.ts) and ranks every match.
 */
import type { QueryNode } from '../search-core/boolean-query.js';
import { highlightRow } from '../search-core/highlight.js';
import { cleanWord, toMysqlBoolean } from './renderers.js';
import { assertCount, decodeBoundedRank, decodeKeyedDetails, detailColumnsOf, fieldsOf, keyedRankShape, keyRef, keysIn, Params, rankSql, tableRef } from './sql-common.js';
import type { CompiledQuery } from '../search-core/query.js';
import type { Dialect, HitDetail, SearchTarget, TableQueries } from './types.js';

/** Natural mode's AGAINST text: the positive words, nothing else (InnoDB drops its stopwords and short words itself). */
function naturalText(query: CompiledQuery): string {
  return query.terms.map((t) => cleanWord(t.word)).filter(Boolean).join(' ');
}

/**
 * Natural mode's quoted and excluded items as a BOOLEAN MODE condition on the candidate rows: `+"a b" -x` must match,
 * or, with nothing quoted, `+(x y)` must not. '' when there is nothing to check (or only words InnoDB cannot search).
 */
function naturalFilter(query: CompiledQuery): { against: string; negated: boolean } {
  const { required, excluded } = query.anyWord!;
  const not = excluded.map((child): QueryNode => ({ kind: 'not', child }));
  if (required.length > 0) return { against: toMysqlBoolean({ kind: 'and', children: [...required, ...not] }), negated: false };
  if (excluded.length === 0) return { against: '', negated: false };
  return { against: toMysqlBoolean(excluded.length === 1 ? excluded[0]! : { kind: 'or', children: excluded }), negated: true };
}

export function createMysqlQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect, bound: number): TableQueries | null {
  if (!target.index || query.root === null) return null;
  const natural = query.anyWord !== null;
  const against = natural ? naturalText(query) : toMysqlBoolean(query.root);
  if (!against) return null;
  const modifier = natural ? 'IN NATURAL LANGUAGE MODE' : 'IN BOOLEAN MODE';
  const q = (name: string) => dialect.quoteIdent(name);
  const table = tableRef(target, dialect);
  const match = (alias: string) => `MATCH(${target.index!.columns.map((c) => `${alias}.${q(c)}`).join(', ')})`;
  const detailColumns = detailColumnsOf(target, dialect);
  const keyNames = target.keys.map((_, i) => `k${i}`);

  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const fields = fieldsOf(row, target.columns);
    return { fields, ...highlightRow(fields, target.searchColumns, query.terms, 'word') };
  };

  /** The engine's top bound + 1 rows by relevance; the first `bound` are ranked, the one more says there were more. */
  const naturalBase = (params: Params): string => {
    const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect)} AS k${i}`);
    // `?` placeholders bind in text order.
    const score = `${match('t')} AGAINST(${params.add(against)} ${modifier})`;
    let where = `${match('t')} AGAINST(${params.add(against)} ${modifier})`;
    const filter = naturalFilter(query);
    if (filter.against) where += ` AND ${filter.negated ? 'NOT ' : ''}${match('t')} AGAINST(${params.add(filter.against)} IN BOOLEAN MODE)`;
    const top = `SELECT ${keys.join(', ')}, ${score} AS quarry_score FROM ${table} t WHERE ${where} LIMIT ${assertCount(bound) + 1}`;
    const order = ['c.quarry_score DESC', ...keyNames.map((k) => `c.${k}`)].join(', ');
    const numbered = `SELECT c.*, COUNT(*) OVER () AS quarry_found, ROW_NUMBER() OVER (ORDER BY ${order}) AS quarry_n FROM (${top}) c`;
    return `SELECT ${keyNames.map((k) => `c.${k}`).join(', ')}, c.quarry_score, c.quarry_found FROM (${numbered}) c WHERE c.quarry_n <= ${bound}`;
  };

  const everyMatch = (params: Params): string => {
    const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect)} AS k${i}`);
    const score = `${match('t')} AGAINST(${params.add(against)} ${modifier})`;
    const where = `${match('t')} AGAINST(${params.add(against)} ${modifier})`;
    return `SELECT ${keys.join(', ')}, ${score} AS quarry_score FROM ${table} t WHERE ${where}`;
  };

  return {
    target,
    inlineDetails: true,

    rank(top, window) {
      const params = new Params(dialect);
      const sql = rankSql({
        ...keyedRankShape(target, dialect, table, top, window),
        base: natural ? naturalBase(params) : everyMatch(params),
        details: detailColumns,
        extra: natural ? ['n.quarry_found'] : [],
      });
      return { sql, params: params.values };
    },

    details(keyValues) {
      const params = new Params(dialect);
      const refs = target.keys.map((k) => keyRef(k, 'd', dialect));
      const select = [...refs.map((r, i) => `${r} AS k${i}`), ...detailColumns.map((c) => `${c.sql} AS ${c.alias}`)];
      return { sql: `SELECT ${select.join(', ')} FROM ${table} d WHERE ${keysIn(refs, keyValues, params)}`, params: params.values };
    },

    decodeRanking: (rows, window) => decodeBoundedRank(rows, target.keys.length, window, decodeDetail, natural ? bound : null),
    decodeDetails: (rows) => decodeKeyedDetails(rows, target.keys.length, decodeDetail),
  };
}
