/**
 * SQLite FTS5: `x."<fts table>" MATCH ?` ranked by bm25() (negated, so higher is better), with the rendered query
 * (every word a quoted FTS5 string) restricted to the searched columns by an FTS5 column filter when needed.
 *
 * Natural mode (any word may match) ranks candidates, not every match (sql-common.ts, candidatesSql): one list per item
 * of the query (with the quoted and excluded ones, which FTS5 checks exactly), at most LIVE_RANK_CANDIDATES rows kept,
 * rarest items first; bm25() then ranks those rows by every positive item. Boolean mode ranks every match.
 *
 * FTS5's auxiliary functions (snippet, highlight) work only in the statement that does the MATCH, so details are
 * always a second statement for the page rows: `... WHERE MATCH ? AND rowid IN (...)`. An external-content index
 * (`content='articles', content_rowid='id'`) reports its rows as rows of the content table, joined on that rowid.
 */
import { MARK_START, MARK_STOP, hasMarker, highlightRow, markersToHtml } from '../search-core/highlight.js';
import { fts5ColumnFilter, toFts5 } from './renderers.js';
import { MAX_RESULT_FIELD_CHARS, MAX_SNIPPET_CHARS } from '../connectors/index.js';
import { candidateLists, candidatesFound, candidatesSql, decodeBoundedRank, detailColumnsOf, fieldsOf, keysIn, Params, rankSql } from './sql-common.js';
import type { CompiledQuery } from '../search-core/query.js';
import type { Dialect, HitDetail, SearchTarget, TableQueries } from './types.js';

const SNIPPET_TOKENS = 24;

/** FTS5 query texts: what ranks (and highlights) rows, and the candidate lists (none: rank every match). */
function fts5Queries(query: CompiledQuery): { rank: string; lists: string[] } | null {
  const anyWord = query.anyWord;
  if (!anyWord) {
    const rank = query.root ? toFts5(query.root) : '';
    return rank ? { rank, lists: [] } : null;
  }
  const lists = candidateLists(anyWord).map(toFts5).filter(Boolean);
  const rank = toFts5(anyWord.rank);
  return rank && lists.length > 0 ? { rank, lists } : null;
}

export function createSqliteFtsQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect, bound: number): TableQueries | null {
  const index = target.index;
  if (!index?.ftsTable || query.root === null) return null;
  const texts = fts5Queries(query);
  if (!texts) return null;
  const bounded = texts.lists.length > 0;
  const indexed = index.columns;
  const restrict = (text: string) => (target.searchColumns.length < indexed.length ? fts5ColumnFilter(target.searchColumns, text) : text);
  const q = (name: string) => dialect.quoteIdent(name);
  const fts = q(index.ftsTable);
  const hidden = `x.${fts}`; // FTS5's hidden column named after the table: the left side of MATCH
  const external = index.contentTable !== null && index.ftsTable !== target.table;
  const source = external ? 'd' : 'x';
  const highlightColumns = target.searchColumns
    .map((column) => ({ column, position: target.ftsColumns?.indexOf(column) ?? -1 }))
    .filter((c) => c.position >= 0);

  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const fields = fieldsOf(row, target.columns);
    const snippet = typeof row.quarry_snippet === 'string' ? markersToHtml(row.quarry_snippet) : '';
    if (highlightColumns.length === 0) {
      return { fields, snippet, matchedColumns: highlightRow(fields, target.searchColumns, query.terms, 'word').matchedColumns };
    }
    return { fields, snippet, matchedColumns: highlightColumns.filter((_, i) => hasMarker(row[`h${i}`])).map((c) => c.column) };
  };

  return {
    target,
    inlineDetails: false,

    rank(top) {
      const params = new Params(dialect);
      const shape = { keyCount: 1, top, detailFrom: top, detailTo: top, detailTable: null, detailKeys: [], details: [] };
      if (!bounded) {
        const base = `SELECT x.rowid AS k0, -bm25(${hidden}) AS quarry_score FROM ${fts} x WHERE ${hidden} MATCH ${params.add(restrict(texts.rank))}`;
        return { sql: rankSql({ ...shape, base }), params: params.values };
      }
      // `?` placeholders bind in text order: the lists (in the WITH clause) come before the ranking's MATCH.
      const lists = texts.lists.map((text) => `SELECT x.rowid AS c FROM ${fts} x WHERE ${hidden} MATCH ${params.add(restrict(text))}`);
      const candidates = `quarry_c AS MATERIALIZED (${candidatesSql(lists, bound)})`;
      // `+x.rowid`: the unary + keeps the rowid test out of the index (SQLite, "The Query Optimizer Overview"), so FTS5
      // runs the MATCH once and bm25() scores only the candidates; a rowid lookup per candidate runs a whole MATCH each.
      const base = `SELECT x.rowid AS k0, -bm25(${hidden}) AS quarry_score FROM ${fts} x WHERE ${hidden} MATCH ${params.add(restrict(texts.rank))} AND +x.rowid IN (SELECT c FROM quarry_c)`;
      const sql = rankSql({ ...shape, with: [candidates], base, meta: candidatesFound('quarry_c'), extra: ['m.quarry_found'] });
      return { sql, params: params.values };
    },

    details(keys) {
      const params = new Params(dialect);
      // `?` placeholders bind in text order.
      const select = [
        'x.rowid AS k0',
        ...detailColumnsOf(target, dialect, source).map((c) => `${c.sql} AS ${c.alias}`),
        // A snippet is a few tokens, but one token may be megabytes long; a highlight is the whole column: both cut.
        `substr(snippet(${hidden}, -1, ${params.add(MARK_START)}, ${params.add(MARK_STOP)}, '…', ${SNIPPET_TOKENS}), 1, ${MAX_SNIPPET_CHARS}) AS quarry_snippet`,
        ...highlightColumns.map((c, i) => `substr(highlight(${hidden}, ${c.position}, ${params.add(MARK_START)}, ${params.add(MARK_STOP)}), 1, ${MAX_RESULT_FIELD_CHARS}) AS h${i}`),
      ];
      const join = external ? ` JOIN ${q(index.contentTable!)} d ON d.${q(index.contentRowid ?? 'rowid')} = x.rowid` : '';
      const where = `${hidden} MATCH ${params.add(restrict(texts.rank))} AND ${keysIn(['x.rowid'], keys, params)}`;
      return { sql: `SELECT ${select.join(', ')} FROM ${fts} x${join} WHERE ${where}`, params: params.values };
    },

    decodeRanking: (rows) => decodeBoundedRank(rows, 1, { from: 0, to: 0 }, null, bounded ? bound : null),

    decodeDetails: (rows) => rows.map((row) => ({ keys: [row.k0], detail: decodeDetail(row) })),
  };
}
