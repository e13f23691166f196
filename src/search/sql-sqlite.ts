/**
 * SQLite FTS5: `x."<fts table>" MATCH ?` ranked by bm25() (negated, so higher is better), with the rendered query
 * (every word a quoted FTS5 string) restricted to the searched columns by an FTS5 column filter when needed. Natural
 * mode uses the same rules as PostgreSQL's websearch_to_tsquery: words are AND-ed, "quotes" make phrases, -word
 * excludes, OR between words.
 *
 * FTS5's auxiliary functions (snippet, highlight) work only in the statement that does the MATCH, so details are
 * always a second statement for the page rows: `... WHERE MATCH ? AND rowid IN (...)`. An external-content index
 * (`content='articles', content_rowid='id'`) reports its rows as rows of the content table, joined on that rowid.
 */
import { MARK_START, MARK_STOP, hasMarker, highlightRow, markersToHtml } from './highlight.js';
import { fts5ColumnFilter, toFts5 } from './renderers.js';
import { decodeRank, fieldsOf, keysIn, Params, rankSql } from './sql-common.js';
import type { CompiledQuery, Dialect, HitDetail, SearchTarget, TableQueries } from './types.js';

const SNIPPET_TOKENS = 24;

export function createSqliteFtsQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect): TableQueries | null {
  const index = target.index;
  if (!index?.ftsTable || query.root === null) return null;
  const rendered = toFts5(query.root);
  if (!rendered) return null;
  const indexed = index.columns;
  const match = target.searchColumns.length < indexed.length ? fts5ColumnFilter(target.searchColumns, rendered) : rendered;
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
      const base = `SELECT x.rowid AS k0, -bm25(${hidden}) AS quarry_score FROM ${fts} x WHERE ${hidden} MATCH ${params.add(match)}`;
      const sql = rankSql({ base, keyCount: 1, top, detailFrom: top, detailTo: top, detailTable: null, detailKeys: [], details: [] });
      return { sql, params: params.values };
    },

    details(keys) {
      const params = new Params(dialect);
      // `?` placeholders bind in text order.
      const select = [
        'x.rowid AS k0',
        ...target.columns.map((c, i) => `${source}.${q(c)} AS c${i}`),
        `snippet(${hidden}, -1, ${params.add(MARK_START)}, ${params.add(MARK_STOP)}, '…', ${SNIPPET_TOKENS}) AS quarry_snippet`,
        ...highlightColumns.map((c, i) => `highlight(${hidden}, ${c.position}, ${params.add(MARK_START)}, ${params.add(MARK_STOP)}) AS h${i}`),
      ];
      const join = external ? ` JOIN ${q(index.contentTable!)} d ON d.${q(index.contentRowid ?? 'rowid')} = x.rowid` : '';
      const where = `${hidden} MATCH ${params.add(match)} AND ${keysIn(['x.rowid'], keys, params)}`;
      return { sql: `SELECT ${select.join(', ')} FROM ${fts} x${join} WHERE ${where}`, params: params.values };
    },

    decodeRanking: (rows) => decodeRank(rows, 1, { from: 0, to: 0 }, null),

    decodeDetails: (rows) => rows.map((row) => ({ keys: [row.k0], detail: decodeDetail(row) })),
  };
}
