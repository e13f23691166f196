/**
 * PostgreSQL: `<tsvector expression> @@ <tsquery>` ranked by ts_rank_cd, headlined by ts_headline for the rows of the
 * page only. The expression is the GIN index's own, exactly as pg_get_indexdef prints it (discovery keeps it), so the
 * planner uses the index. (Tables without a GIN index take the LIKE fallback, sql-like.ts.)
 *
 * Ranking an expression index re-parses every ranked row's text (the index keeps no positions), which for a word in
 * half of a large table is seconds. So an expression index ranks at most RANK_CANDIDATES matching rows: the first ones
 * in physical order (ctid). When more rows match, results are the best of those, and the total is counted separately,
 * exactly up to COUNT_CAP and flagged as an estimate (a lower bound) beyond. An index on a stored tsvector column ranks every
 * match (nothing is re-parsed) and counts them exactly.
 *
 * Parameters: $1 the query (raw text for websearch_to_tsquery in natural mode, rendered to_tsquery text in boolean
 * mode), $2 the text search configuration, $3 the ts_headline options.
 */
import { hasMarker, MARK_START, MARK_STOP, markersToHtml, SNIPPET_SEPARATOR } from './highlight.js';
import { toTsquery } from './renderers.js';
import { aliases, decodeRank, fieldsOf, keyAliases, keyedRankShape, keyRef, keysIn, num, Params, QUERY_TEXT, rankSql, rememberedRank, tableRef } from './sql-common.js';
import type { CompiledQuery, Dialect, HitDetail, SearchTarget, Statement, TableQueries, TableRanking } from './types.js';

export const DEFAULT_TS_CONFIG = 'english';
/** Most rows an expression index ranks (each is re-parsed by to_tsvector). */
export const RANK_CANDIDATES = 500;
/** Matches counted exactly; beyond, the total is this many and flagged an estimate. */
export const COUNT_CAP = 10_000;

const HEADLINE_OPTIONS = `StartSel=${MARK_START}, StopSel=${MARK_STOP}, MaxWords=30, MinWords=12, ShortWord=2`;

/** The query's to_tsquery text, or null when nothing searchable is left. */
function queryText(query: CompiledQuery): string | null {
  if (query.mode === 'natural') return query.text;
  return query.root ? toTsquery(query.root) || null : null;
}

export function createPostgresQueries(target: SearchTarget, query: CompiledQuery, dialect: Dialect): TableQueries | null {
  const text = queryText(query);
  const vector = target.index?.expression;
  if (text === null || !vector) return null;
  const q = (name: string) => dialect.quoteIdent(name);
  const table = tableRef(target, dialect);
  const config = target.index?.language ?? DEFAULT_TS_CONFIG;
  // A quoted column is a stored tsvector: cheap to rank. Anything else is an expression re-parsed per row.
  const bounded = !/^"(?:[^"]|"")+"$/.test(vector);

  // Rank statements are built with QUERY_TEXT in the query's place (see rememberedRank), detail statements with the text.
  const bind = (params: Params, value: unknown = text) => ({ query: params.add(value, 'query'), config: params.add(config, 'config') });
  const tsquery = (p: { query: string; config: string }) =>
    `${query.mode === 'natural' ? 'websearch_to_tsquery' : 'to_tsquery'}(${p.config}::regconfig, ${p.query})`;

  // One headline per searched column: the snippet shows the columns that match, and they are matchedColumns.
  const detailExpressions = (params: Params, p: { query: string; config: string }) => {
    const options = params.add(HEADLINE_OPTIONS, 'headline');
    return [
      ...target.columns.map((c, i) => ({ sql: `d.${q(c)}`, alias: `c${i}` })),
      ...target.searchColumns.map((c, i) => ({ sql: `ts_headline(${p.config}::regconfig, d.${q(c)}::text, ${tsquery(p)}, ${options})`, alias: `h${i}` })),
    ];
  };

  // The headlines of the columns that match, else the first non-empty one; one pass, as it runs for every page row.
  const headlineAliases = aliases('h', target.searchColumns.length);
  const decodeDetail = (row: Record<string, unknown>): HitDetail => {
    const snippets: string[] = [];
    const matchedColumns: string[] = [];
    let firstText: string | null = null;
    target.searchColumns.forEach((column, i) => {
      const text = row[headlineAliases[i]!];
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

  const buildRank = (top: number, window: { from: number; to: number }): Statement => {
    const params = new Params(dialect);
    const p = bind(params, QUERY_TEXT);
    const match = `${vector} @@ ${tsquery(p)}`;
    // ORDER BY ctid: deterministic (pages stay stable) and no index matches it, so the planner keeps the GIN bitmap
    // scan instead of walking the primary key and re-parsing every row it passes.
    const from = bounded
      ? `(SELECT ${target.keys.some((k) => k.pseudo) ? 'ctid AS quarry_key, ' : ''}* FROM ${table} WHERE ${match} ORDER BY ctid LIMIT ${RANK_CANDIDATES}) t`
      : `${table} t`;
    const keys = target.keys.map((k, i) => `${keyRef(k, 't', dialect, bounded ? 'quarry_key' : undefined)} AS k${i}`);
    const base = `SELECT ${keys.join(', ')}, ts_rank_cd(${vector}, ${tsquery(p)}) AS quarry_score FROM ${from}${bounded ? '' : ` WHERE ${match}`}`;
    // When every candidate fit, their number is the count; else count again (lazily: an InitPlan runs on first use).
    const count = `CASE WHEN n.quarry_total < ${RANK_CANDIDATES} THEN n.quarry_total ELSE (SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${match} LIMIT ${COUNT_CAP + 1}) quarry_c) END AS quarry_matches`;
    const sql = rankSql({
      ...keyedRankShape(target, dialect, table, top, window),
      base,
      details: window.from < Math.min(top, window.to) ? detailExpressions(params, p) : [],
      extra: bounded ? [count] : [],
    });
    return { sql, params: params.values };
  };

  return {
    target,
    inlineDetails: true,

    rank(top, window) {
      return rememberedRank(target, dialect, { mode: query.mode, top, window }, text, () => buildRank(top, window));
    },

    details(keyValues) {
      const params = new Params(dialect);
      const p = bind(params);
      const refs = target.keys.map((k) => keyRef(k, 'd', dialect));
      const cast = target.keys.some((k) => k.pseudo) ? '::tid' : '';
      const select = [...refs.map((r, i) => `${r} AS k${i}`), ...detailExpressions(params, p).map((e) => `${e.sql} AS ${e.alias}`)];
      return { sql: `SELECT ${select.join(', ')} FROM ${table} d WHERE ${keysIn(refs, keyValues, params, cast)}`, params: params.values };
    },

    decodeRanking(rows, window): TableRanking {
      const ranking = decodeRank(rows, target.keys.length, window, decodeDetail);
      if (!bounded || rows.length === 0) return ranking;
      const matches = num(rows[0]!.quarry_matches);
      ranking.total = Math.min(matches, COUNT_CAP);
      ranking.totalIsEstimate = matches > COUNT_CAP;
      return ranking;
    },

    decodeDetails(rows) {
      const aliases = keyAliases(target.keys.length);
      return rows.map((row) => ({ keys: aliases.map((k) => row[k]), detail: decodeDetail(row) }));
    },
  };
}
