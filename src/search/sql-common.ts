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
 * is a true total at no extra scan (sql-postgres.ts explains the one engine where ranking is bounded instead).
 */
import type { CompiledQuery, DetailWindow, Dialect, HitDetail, KeyColumn, RankedRow, SearchTarget, Statement, TableRanking } from './types.js';
import { isoTimestamp } from '../lib/iso-time.js';

/** Most rows the fallback reads from a table without a full-text index. */
export const FALLBACK_SCAN_ROWS = 10_000;

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

const aliasLists = new Map<string, readonly string[]>();

/**
 * `${prefix}0` .. `${prefix}${count - 1}`, the same array for the same arguments: rows are read by these names for
 * every row of every search, and names made once are looked up faster than names concatenated per row.
 */
export function aliases(prefix: string, count: number): readonly string[] {
  // A separator, so that ('h', 11) and ('h1', 1) are different lists.
  const id = `${prefix}:${count}`;
  let list = aliasLists.get(id);
  if (!list) {
    list = Object.freeze(Array.from({ length: count }, (_, i) => `${prefix}${i}`));
    aliasLists.set(id, list);
  }
  return list;
}

export const keyAliases = (count: number): readonly string[] => aliases('k', count);

export function assertCount(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return n;
}

export interface RankShape {
  /** SELECT <keys AS k0..>, <score AS quarry_score> FROM ... WHERE ... (no ORDER BY, no LIMIT). */
  base: string;
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
  /** Extra outer columns (the fallback's scanned-row count). */
  extra?: string[];
}

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

/** Stands for the query's text among the parameters of a remembered rank statement (rememberedRank). */
export const QUERY_TEXT = Symbol('query text');
/** Most statement shapes (mode, top, window) remembered per table; pages and limits vary, so it is bounded. */
const MAX_SHAPES = 64;

/**
 * Rank statements by table and shape. Where an engine's SQL depends on the table, the mode, the number of rows and
 * the detail window but never on the query's text (a bound parameter), a search repeats one of a few statements;
 * building one is some forty string operations on the path of every search, before the database gets it. `build`
 * binds QUERY_TEXT where the text goes, and each search gets the statement with its own text in those places.
 * Targets are the same objects from search to search while the schema is cached (SearchService.targetsOf), and
 * are keyed weakly.
 */
const rankStatements = new WeakMap<SearchTarget, { quoteIdent: Dialect['quoteIdent']; shapes: Map<string, Statement> }>();

export function rememberedRank(
  target: SearchTarget,
  dialect: Dialect,
  shape: { mode: CompiledQuery['mode']; top: number; window: DetailWindow },
  text: string,
  build: () => Statement,
): Statement {
  const key = `${shape.mode} ${shape.top} ${shape.window.from} ${shape.window.to}`;
  let remembered = rankStatements.get(target);
  if (!remembered || remembered.quoteIdent !== dialect.quoteIdent) {
    remembered = { quoteIdent: dialect.quoteIdent, shapes: new Map() };
    rankStatements.set(target, remembered);
  }
  let statement = remembered.shapes.get(key);
  if (!statement) {
    if (remembered.shapes.size >= MAX_SHAPES) remembered.shapes.clear();
    statement = build();
    remembered.shapes.set(key, statement);
  }
  return { sql: statement.sql, params: statement.params.map((value) => (value === QUERY_TEXT ? text : value)) };
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
  return (
    `SELECT ${columns.join(', ')} FROM (` +
    `SELECT r.*, ROW_NUMBER() OVER (ORDER BY ${windowOrder}) AS quarry_pos FROM (` +
    `SELECT b.*, COUNT(*) OVER () AS quarry_total FROM (${shape.base}) b ORDER BY ${order} LIMIT ${top}` +
    `) r) n${join} ORDER BY n.quarry_pos`
  );
}

/** `d.k IN (...)`, or for a composite key `(d.a = ? AND d.b = ?) OR ...`. */
export function keysIn(keyRefs: string[], keys: unknown[][], params: Params, cast = ''): string {
  if (keys.length === 0) return '1 = 0';
  if (keyRefs.length === 1) return `${keyRefs[0]} IN (${keys.map((k) => params.add(k[0]) + cast).join(', ')})`;
  return keys.map((k) => `(${keyRefs.map((ref, i) => `${ref} = ${params.add(k[i])}`).join(' AND ')})`).join(' OR ');
}

/** A value as JSON can carry it: dates as ISO text, big integers and bytes as text. */
export function plainValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : isoTimestamp(value.getTime());
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

export function fieldsOf(row: Record<string, unknown>, columns: string[], prefix = 'c'): Record<string, unknown> {
  const names = aliases(prefix, columns.length);
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) fields[columns[i]!] = plainValue(row[names[i]!]);
  return fields;
}

export const num = (value: unknown): number => {
  const n = typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
};

/** Rank rows into a TableRanking; `detail` decodes the detail columns of window rows. */
export function decodeRank(
  rows: Record<string, unknown>[],
  keyCount: number,
  window: DetailWindow,
  detail: ((row: Record<string, unknown>) => HitDetail) | null,
): TableRanking {
  const keys = keyAliases(keyCount);
  const ranked: RankedRow[] = rows.map((row) => {
    const pos = num(row.quarry_pos);
    return {
      keys: keys.map((k) => row[k]),
      score: num(row.quarry_score),
      detail: detail && pos > window.from && pos <= window.to ? detail(row) : null,
    };
  });
  return { rows: ranked, total: rows.length > 0 ? num(rows[0]!.quarry_total) : 0, totalIsEstimate: false };
}
