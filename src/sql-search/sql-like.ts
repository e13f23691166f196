/**
 * The fallback for tables without a full-text index (every engine): the parsed query evaluated with
 * `LOWER(column) LIKE ?` over the first FALLBACK_SCAN_ROWS rows (by primary key), scored by how many searched-for
 * words a row contains. Words match anywhere inside the text. Natural mode evaluates its any-word condition (any word
 * may match; quoted items required, excluded ones not), boolean mode the tree as parsed. Such tables are reported in
 * `unindexedTables`; when the table is larger than the scan, the ranking is approximate and the total counts the
 * scanned rows only.
 */
import { boundedValue, MAX_SEARCHED_TEXT_CHARS } from '../connectors/index.js';
import type { QueryNode } from '../search-core/boolean-query.js';
import { highlightRow } from '../search-core/highlight.js';
import {
  decodeKeyedDetails, decodeRank, detailColumnsOf, FALLBACK_SCAN_ROWS, fieldsOf, keyedRankShape, keyRef, keysIn, Params, rankSql, tableRef,
} from './sql-common.js';
import type { CompiledQuery } from '../search-core/query.js';
import type { Dialect, HitDetail, SearchTarget, TableQueries, TableRanking } from './types.js';

function withScanEstimate(ranking: TableRanking, rows: Record<string, unknown>[], target: SearchTarget): TableRanking {
  const scanned = rows.length > 0 ? Number(rows[0]!.quarry_scanned ?? 0) : target.rowEstimate;
  const partial = scanned > FALLBACK_SCAN_ROWS;
  return { ...ranking, totalIsEstimate: partial, approximate: partial };
}

/** %word% with LIKE's own characters escaped by '!'. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

function leaves(node: QueryNode, negated = false): Array<{ node: QueryNode; negated: boolean }> {
  if (node.kind === 'term' || node.kind === 'phrase') return [{ node, negated }];
  if (node.kind === 'not') return leaves(node.child, true);
  return node.children.flatMap((child) => leaves(child, negated));
}

export function createLikeQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect): TableQueries | null {
  if (query.root === null) return null;
  const q = (name: string) => dialect.quoteIdent(name);
  const table = tableRef(target, dialect);
  // ctid (PostgreSQL) or rowid (SQLite) when the table has no primary key.
  const pseudo = target.keys.find((k) => k.pseudo)?.name ?? null;
  const root = query.root;
  // Natural mode scores every positive item, quoted or not; boolean mode the positive leaves of its tree.
  const scored = query.anyWord?.rank ?? root;

  // Columns lowered once per scanned row (l0..), in the scan: each is tested for every word.
  const leafSql = (node: QueryNode, params: Params): string => {
    const text = node.kind === 'term' ? node.word : node.kind === 'phrase' ? node.words.join(' ') : '';
    const pattern = likePattern(text);
    return `(${target.searchColumns.map((_, i) => `t.l${i} LIKE ${params.add(pattern)} ESCAPE '!'`).join(' OR ')})`;
  };
  const conditionSql = (node: QueryNode, params: Params): string => {
    switch (node.kind) {
      case 'term':
      case 'phrase':
        return leafSql(node, params);
      case 'not':
        return `NOT ${conditionSql(node.child, params)}`;
      case 'and':
      case 'or':
        return `(${node.children.map((c) => conditionSql(c, params)).join(node.kind === 'and' ? ' AND ' : ' OR ')})`;
    }
  };
  const detailColumns = detailColumnsOf(target, dialect);
  const typeOf = (column: string) => target.columnTypes?.[target.columns.indexOf(column)];
  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const fields = fieldsOf(row, target.columns);
    return { fields, ...highlightRow(fields, target.searchColumns, query.terms, 'substring') };
  };
  const order = target.keys.filter((k) => !k.pseudo).map((k) => q(k.name));

  return {
    target,
    inlineDetails: true,

    rank(top, window) {
      const params = new Params(dialect);
      const keys = target.keys.map((k, i) => `${k.pseudo ? k.name : q(k.name)} AS k${i}`);
      // Each text is scanned as far as the index would keep it: a huge value costs the database no more than that.
      const lowered = target.searchColumns.map((c, i) => `LOWER(${boundedValue(target.engine, q(c), typeOf(c), MAX_SEARCHED_TEXT_CHARS)}) AS l${i}`);
      // `?` placeholders bind in text order: the score's come before the WHERE's.
      const score = leaves(scored).filter((l) => !l.negated).map((l) => `CASE WHEN ${leafSql(l.node, params)} THEN 1 ELSE 0 END`);
      const where = conditionSql(root, params);
      const scan = `(SELECT ${[...keys, ...lowered].join(', ')} FROM ${table}${order.length > 0 ? ` ORDER BY ${order.join(', ')}` : ''} LIMIT ${FALLBACK_SCAN_ROWS}) t`;
      const sql = rankSql({
        ...keyedRankShape(target, dialect, table, top, window),
        base: `SELECT ${target.keys.map((_, i) => `t.k${i}`).join(', ')}, (${score.join(' + ') || '0'}) AS quarry_score FROM ${scan} WHERE ${where}`,
        details: detailColumns,
        extra: [`(SELECT COUNT(*) FROM (SELECT 1 FROM ${table} LIMIT ${FALLBACK_SCAN_ROWS + 1}) quarry_s) AS quarry_scanned`],
      });
      return { sql, params: params.values };
    },

    details(keyValues) {
      const params = new Params(dialect);
      const refs = target.keys.map((k) => keyRef(k, 'd', dialect));
      const select = [...refs.map((r, i) => `${r} AS k${i}`), ...detailColumns.map((c) => `${c.sql} AS ${c.alias}`)];
      const cast = pseudo === 'ctid' ? '::tid' : '';
      return { sql: `SELECT ${select.join(', ')} FROM ${table} d WHERE ${keysIn(refs, keyValues, params, cast)}`, params: params.values };
    },

    decodeRanking: (rows, window) => withScanEstimate(decodeRank(rows, target.keys.length, window, decodeDetail), rows, target),

    decodeDetails: (rows) => decodeKeyedDetails(rows, target.keys.length, decodeDetail),
  };
}
