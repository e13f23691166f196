/**
 * The statement shape every engine's builder shares. Identifiers come only from the discovered schema and go through
 * the executor's quoteIdent; the query text is always a bound parameter; numbers written into the SQL (LIMIT, the
 * detail window) are integers computed here. Every name the statement introduces (k0, quarry_score, ...) is an alias
 * of a derived table, and ORDER BY inside uses column positions, so no user column name can collide with ours.
 *
 *   SELECT n.k0.., n.quarry_score, n.quarry_total, n.quarry_pos, <details of window rows>
 *   FROM (SELECT r.*, ROW_NUMBER() OVER (ORDER BY score DESC, keys) AS quarry_pos
 *         FROM (SELECT b.*, COUNT(*) OVER () AS quarry_total FROM (<base: keys, score>) b
 *               ORDER BY score DESC, keys LIMIT <top>) r) n
 *   LEFT JOIN <table> d ON n.quarry_pos > <detailFrom> AND d.<key> = n.k0 ...
 *   ORDER BY n.quarry_pos
 *
 * The count rides on the ranking: to order by score an engine scores every matching row anyway, so COUNT(*) OVER ()
 * is a true total at no extra scan.
 *
 * Natural mode on the live path ranks a bounded set of candidates instead of every match: any word may
 * match, so a verbose query matches nearly every row, and ranking them all costs seconds. Builders then put the
 * candidates in a WITH clause and add one row of figures about them (`meta`, joined so that it is there even when no
 * row matches); when more rows matched than LIVE_RANK_CANDIDATES, the ranking says it is approximate.
 */
import { boundedValue, MAX_RESULT_FIELD_CHARS } from '../connectors/index.js';
import type { AnyWordQuery, QueryNode } from '../search-core/boolean-query.js';
import { plainValue } from '../search-core/engine.js';
import type { DetailWindow, Dialect, HitDetail, KeyColumn, RankedRow, SearchTarget, TableRanking } from './types.js';

/** Most rows the fallback reads from a table without a full-text index. */
export const FALLBACK_SCAN_ROWS = 10_000;

/**
 * Most matching rows a natural-mode ranking on the live path considers per table (chosen by measuring,
 * docs/benchmarks.md): the engine ranks at most this many, so a search costs about the same however many rows match.
 * When more match, the ranking is the best of these and says it is approximate, and it ends here: a page beyond it
 * is empty. PostgreSQL's expression indexes bound boolean mode the same way (every ranked row is re-parsed there).
 */
export const LIVE_RANK_CANDIDATES = 500;

/** Most candidate lists one table's search reads (candidatesSql); further items share the last list. */
export const MAX_CANDIDATE_LISTS = 16;

/** Collects bound parameters; on PostgreSQL a parameter used twice is bound once ($n reused). */
export class Params {
  readonly values: unknown[] = [];
  private readonly named = new Map<string, string>();
  private readonly numbered: boolean;

  constructor(private readonly dialect: Dialect) {
    this.numbered = dialect.placeholder(1) !== dialect.placeholder(2);
  }

  /** A placeholder for `value`. With `?` placeholders, call this in the order the SQL text uses them. */
  add(value: unknown, name?: string): string {
    if (this.numbered && name && this.named.has(name)) return this.named.get(name)!;
    this.values.push(value);
    const placeholder = this.dialect.placeholder(this.values.length);
    if (this.numbered && name) this.named.set(name, placeholder);
    return placeholder;
  }
}

/** `"schema"."table"` on PostgreSQL, the quoted name elsewhere. */
export function tableRef(target: Pick<SearchTarget, 'schema' | 'table'>, dialect: Dialect, name = target.table): string {
  return target.schema ? `${dialect.quoteIdent(target.schema)}.${dialect.quoteIdent(name)}` : dialect.quoteIdent(name);
}

/** A key column of `alias`: a quoted column, or the engine's row address (ctid, rowid) written as such. */
export function keyRef(key: KeyColumn, alias: string, dialect: Dialect, pseudoAlias?: string): string {
  if (key.pseudo) return `${alias}.${pseudoAlias ?? key.name}`;
  return `${alias}.${dialect.quoteIdent(key.name)}`;
}

/**
 * The columns a result shows, as `alias`'s columns aliased c0..: each value cut in SQL to what a result shows, so a
 * huge value never reaches Quarry's process (connectors/bounded-values.ts).
 */
export function detailColumnsOf(target: SearchTarget, dialect: Dialect, alias = 'd'): Array<{ sql: string; alias: string }> {
  return target.columns.map((c, i) => ({
    sql: boundedValue(target.engine, `${alias}.${dialect.quoteIdent(c)}`, target.columnTypes?.[i], MAX_RESULT_FIELD_CHARS),
    alias: `c${i}`,
  }));
}

/** `${prefix}0` .. `${prefix}${count - 1}`: the names statements give their columns. */
export const aliases = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

export const keyAliases = (count: number): string[] => aliases('k', count);

export function assertCount(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return n;
}

export interface RankShape {
  /** Common table expressions (`name AS (...)`) that `base` and `meta` read. */
  with?: string[];
  /** SELECT <keys AS k0..>, <score AS quarry_score> FROM ... WHERE ... (no ORDER BY, no LIMIT). */
  base: string;
  /** One row of figures about the ranking, aliased `m`: the statement returns it alone when no row matches. */
  meta?: string;
  keyCount: number;
  top: number;
  /** Rows at 0-based positions [detailFrom, detailTo) carry their details. */
  detailFrom: number;
  detailTo: number;
  /** The table joined for window rows as `d`, and how its keys compare with n.k0.. */
  detailTable: string | null;
  detailKeys: string[];
  /** Detail expressions over `d`, each with its alias. Wrapped so they run for window rows only. */
  details: Array<{ sql: string; alias: string }>;
  /** Extra outer columns (the fallback's scanned-row count, `m.` figures). */
  extra?: string[];
}

/** The positive items of a natural-mode query, at most MAX_CANDIDATE_LISTS: the rest are OR-ed into the last. */
export function candidateItems(items: QueryNode[]): QueryNode[] {
  if (items.length <= MAX_CANDIDATE_LISTS) return items;
  const rest = items.slice(MAX_CANDIDATE_LISTS - 1);
  return [...items.slice(0, MAX_CANDIDATE_LISTS - 1), { kind: 'or', children: rest }];
}

/** The condition of each candidate list of a natural-mode query: one item, every quoted item, no excluded one. */
export function candidateLists(query: AnyWordQuery): QueryNode[] {
  const not = query.excluded.map((child): QueryNode => ({ kind: 'not', child }));
  return candidateItems(query.items).map((item) => ({ kind: 'and', children: [item, ...query.required.filter((r) => r !== item), ...not] }));
}

/**
 * The candidate rows of a natural-mode search: each list selects the address (`c`) of rows matching one item of the
 * query, read in the index's own order up to bound + 1 rows. Rows of the shortest lists, those holding the query's
 * rarest items (the ones a relevance ranking weighs most), come first, and `bound` rows are kept. Every row carries
 * quarry_found, the distinct rows the lists found: more than `bound` means some matching rows were not considered.
 */
export function candidatesSql(lists: string[], bound: number): string {
  const limit = assertCount(bound) + 1;
  const union = lists.map((list, i) => `SELECT ${i} AS i, c FROM (${list} LIMIT ${limit}) l${i}`).join(' UNION ALL ');
  const counted = `SELECT c, COUNT(*) OVER (PARTITION BY i) AS n FROM (${union}) u`;
  return `SELECT c, COUNT(*) OVER () AS quarry_found FROM (SELECT c, MIN(n) AS n FROM (${counted}) l GROUP BY c) g ORDER BY n, c LIMIT ${bound}`;
}

/** The one-row `meta` of a candidates table: how many distinct rows its lists found. */
export const candidatesFound = (cte: string): string => `SELECT COALESCE(MAX(quarry_found), 0) AS quarry_found FROM ${cte}`;

/** What every keyed table's rank statement shares: its keys, the page size, the detail window and the join back. */
export function keyedRankShape(
  target: SearchTarget,
  dialect: Dialect,
  table: string,
  top: number,
  window: DetailWindow,
): Pick<RankShape, 'keyCount' | 'top' | 'detailFrom' | 'detailTo' | 'detailTable' | 'detailKeys'> {
  return {
    keyCount: target.keys.length,
    top,
    detailFrom: window.from,
    detailTo: window.to,
    detailTable: table,
    detailKeys: target.keys.map((k) => keyRef(k, 'd', dialect)),
  };
}

export function rankSql(shape: RankShape): string {
  const keys = keyAliases(shape.keyCount);
  const top = assertCount(shape.top);
  const detailFrom = assertCount(shape.detailFrom);
  const detailTo = Math.min(top, assertCount(shape.detailTo));
  const inWindow = `n.quarry_pos > ${detailFrom} AND n.quarry_pos <= ${detailTo}`;
  const order = [`${shape.keyCount + 1} DESC`, ...keys.map((_, i) => String(i + 1))].join(', ');
  const windowOrder = ['r.quarry_score DESC', ...keys.map((k) => `r.${k}`)].join(', ');
  const withDetails = shape.detailTable !== null && detailFrom < detailTo && shape.details.length > 0;
  const columns = [
    ...keys.map((k) => `n.${k}`),
    'n.quarry_score',
    'n.quarry_total',
    'n.quarry_pos',
    ...(shape.extra ?? []),
    ...(withDetails ? shape.details.map((d) => `CASE WHEN ${inWindow} THEN ${d.sql} END AS ${d.alias}`) : []),
  ];
  const join = withDetails
    ? ` LEFT JOIN ${shape.detailTable} d ON ${inWindow} AND ${shape.detailKeys.map((k, i) => `${k} = n.k${i}`).join(' AND ')}`
    : '';
  const ranking =
    `(SELECT r.*, ROW_NUMBER() OVER (ORDER BY ${windowOrder}) AS quarry_pos FROM (` +
    `SELECT b.*, COUNT(*) OVER () AS quarry_total FROM (${shape.base}) b ORDER BY ${order} LIMIT ${top}` +
    ') r) n';
  const from = shape.meta ? `(${shape.meta}) m LEFT JOIN ${ranking} ON 1 = 1` : ranking;
  const prefix = shape.with && shape.with.length > 0 ? `WITH ${shape.with.join(', ')} ` : '';
  return `${prefix}SELECT ${columns.join(', ')} FROM ${from}${join} ORDER BY n.quarry_pos`;
}

/** `d.k IN (...)`, or for a composite key `(d.a = ? AND d.b = ?) OR ...`. */
export function keysIn(keyRefs: string[], keys: unknown[][], params: Params, cast = ''): string {
  if (keys.length === 0) return '1 = 0';
  if (keyRefs.length === 1) return `${keyRefs[0]} IN (${keys.map((k) => params.add(k[0]) + cast).join(', ')})`;
  return keys.map((k) => `(${keyRefs.map((ref, i) => `${ref} = ${params.add(k[i])}`).join(' AND ')})`).join(' OR ');
}

/** A value as JSON can carry it (one rule for every engine's rows). */
export { plainValue };

export function fieldsOf(row: Record<string, unknown>, columns: string[], prefix = 'c'): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  columns.forEach((column, i) => (fields[column] = plainValue(row[`${prefix}${i}`])));
  return fields;
}

export const num = (value: unknown): number => {
  const n = typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
};

/**
 * Rank rows into a TableRanking; `detail` decodes the detail columns of window rows. A row without a position is the
 * `meta` row of a ranking that matched nothing.
 */
export function decodeRank(
  rows: Record<string, unknown>[],
  keyCount: number,
  window: DetailWindow,
  detail: ((row: Record<string, unknown>) => HitDetail) | null,
): TableRanking {
  const keys = keyAliases(keyCount);
  const ranked: RankedRow[] = rows.filter((row) => row.quarry_pos !== null && row.quarry_pos !== undefined).map((row) => {
    const pos = num(row.quarry_pos);
    return {
      keys: keys.map((k) => row[k]),
      score: num(row.quarry_score),
      detail: detail && pos > window.from && pos <= window.to ? detail(row) : null,
    };
  });
  return { rows: ranked, total: rows.length > 0 ? num(rows[0]!.quarry_total) : 0, totalIsEstimate: false, approximate: false };
}

/**
 * A ranking read from the rank statement's rows; when the statement ranked at most `bound` candidates (`bound` not
 * null), the matches it found (`quarry_found`) say whether the ranking is approximate.
 */
export function decodeBoundedRank(
  rows: Record<string, unknown>[],
  keyCount: number,
  window: DetailWindow,
  detail: ((row: Record<string, unknown>) => HitDetail) | null,
  bound: number | null,
): TableRanking {
  const ranking = decodeRank(rows, keyCount, window, detail);
  return bound === null ? ranking : boundedRanking(ranking, num(rows[0]?.quarry_found), bound);
}

/** The details statement's rows: each row's key (k0, k1, …) with its decoded details. */
export function decodeKeyedDetails(
  rows: Record<string, unknown>[],
  keyCount: number,
  detail: (row: Record<string, unknown>) => HitDetail,
): Array<{ keys: unknown[]; detail: HitDetail }> {
  const aliases = keyAliases(keyCount);
  return rows.map((row) => ({ keys: aliases.map((k) => row[k]), detail: detail(row) }));
}

/**
 * A ranking of at most `bound` candidates out of `found` matching rows: when more were found it is approximate, and its
 * total (the matches among the ranked rows) a lower bound.
 */
export function boundedRanking(ranking: TableRanking, found: number, bound: number): TableRanking {
  return found > bound ? { ...ranking, totalIsEstimate: true, approximate: true } : ranking;
}
