/**
 * MySQL / MariaDB: MATCH(<the FULLTEXT index's columns, in index order>) AGAINST(? IN NATURAL LANGUAGE MODE | IN
 * BOOLEAN MODE). Natural mode hands the text as typed to the engine's relevance ranking (any word may match); boolean
 * mode renders the parsed query (renderers.ts). MySQL has no highlighter, so snippets are made from the page rows.
 */
import { highlightRow } from './highlight.js';
import { toMysqlBoolean } from './renderers.js';
import { decodeRank, fieldsOf, keyAliases, keyedRankShape, keyRef, keysIn, Params, QUERY_TEXT, rankSql, rememberedRank, tableRef } from './sql-common.js';
import type { CompiledQuery, Dialect, HitDetail, SearchTarget, TableQueries } from './types.js';

export function createMysqlQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect): TableQueries | null {
  if (!target.index || query.root === null) return null;
  const against = query.mode === 'natural' ? query.text : toMysqlBoolean(query.root);
  if (!against) return null;
  const modifier = query.mode === 'natural' ? 'IN NATURAL LANGUAGE MODE' : 'IN BOOLEAN MODE';
  const q = (name: string) => dialect.quoteIdent(name);
  const table = tableRef(target, dialect);
  const match = (alias: string) => `MATCH(${target.index!.columns.map((c) => `${alias}.${q(c)}`).join(', ')})`;
  const detailColumns = target.columns.map((c, i) => ({ sql: `d.${q(c)}`, alias: `c${i}` }));

  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const fields = fieldsOf(row, target.columns);
    return { fields, ...highlightRow(fields, target.searchColumns, query.terms, 'word') };
  };

  return {
    target,
    inlineDetails: true,

    // Built once per table and shape, with QUERY_TEXT where the text goes (rememberedRank).
    rank(top, window) {
      return rememberedRank(target, dialect, { mode: query.mode, top, window }, against, () => {
        const params = new Params(dialect);
        const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect)} AS k${i}`);
        const score = `${match('t')} AGAINST(${params.add(QUERY_TEXT)} ${modifier})`;
        const where = `${match('t')} AGAINST(${params.add(QUERY_TEXT)} ${modifier})`;
        const sql = rankSql({
          ...keyedRankShape(target, dialect, table, top, window),
          base: `SELECT ${keys.join(', ')}, ${score} AS quarry_score FROM ${table} t WHERE ${where}`,
          details: detailColumns,
        });
        return { sql, params: params.values };
      });
    },

    details(keyValues) {
      const params = new Params(dialect);
      const refs = target.keys.map((k) => keyRef(k, 'd', dialect));
      const select = [...refs.map((r, i) => `${r} AS k${i}`), ...detailColumns.map((c) => `${c.sql} AS ${c.alias}`)];
      return { sql: `SELECT ${select.join(', ')} FROM ${table} d WHERE ${keysIn(refs, keyValues, params)}`, params: params.values };
    },

    decodeRanking: (rows, window) => decodeRank(rows, target.keys.length, window, decodeDetail),

    decodeDetails(rows) {
      const aliases = keyAliases(target.keys.length);
      return rows.map((row) => ({ keys: aliases.map((k) => row[k]), detail: decodeDetail(row) }));
    },
  };
}
