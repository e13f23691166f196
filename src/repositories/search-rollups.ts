/**
 * Roll-ups of search_records, kept in step at write time (same transaction as the raw rows) so analytics over a
 * month of a busy user read hundreds of rows, not hundreds of thousands:
 *   search_stats_hourly        (user, hour)                      counts, sums and maxima
 *   search_query_stats_daily   (user, day, query)                per-query counts and sums
 *   search_table_stats_daily   (user, day, kind, database, table) searched tables and tables without a full-text index
 *   search_latency_daily       (user, day, response_time_ms)     exact histogram, for percentiles
 * Every bucket is a whole UTC hour or day, so a read over whole days is exact. `rebuildRollups` recomputes them
 * from the raw rows with one INSERT ... SELECT per table (migration backfill, bulk loads).
 */
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { UnindexedTable } from '../models/search-record.js';

/** A search slower than this counts as slow in the roll-ups (and in the insights that read them). */
export const SLOW_SEARCH_MS = 500;

/** The fields of a raw search row the roll-ups are computed from. */
export interface RollupSource {
  userId: string;
  query: string;
  /** Names of the tables it actually read, over all databases (not only the request's filter); null if unknown. */
  tables: string[] | null;
  resultCount: number;
  responseTimeMs: number;
  /** Whether every database answered. */
  status: 'ok' | 'partial' | 'error';
  /** Tables read without a full-text index (the search fell back to a bounded scan). */
  unindexedTables: UnindexedTable[] | null;
  createdAt: Date;
}

interface Table {
  name: string;
  keys: string[];
  sums: string[];
  maxima: string[];
}

export const rollupTables = {
  hourly: { name: 'search_stats_hourly', keys: ['user_id', 'hour_start'], sums: ['searches', 'total_ms', 'total_results', 'zero_results', 'with_results', 'slow', 'failed', 'unindexed'], maxima: ['max_ms', 'last_at'] },
  queries: { name: 'search_query_stats_daily', keys: ['user_id', 'day_start', 'query'], sums: ['searches', 'total_ms', 'total_results', 'slow', 'slow_ms', 'zero_results', 'failed'], maxima: ['last_at'] },
  tables: { name: 'search_table_stats_daily', keys: ['user_id', 'day_start', 'kind', 'database_id', 'table_name'], sums: ['searches', 'slow'], maxima: [] },
  latency: { name: 'search_latency_daily', keys: ['user_id', 'day_start', 'response_time_ms'], sums: ['searches'], maxima: [] },
} satisfies Record<string, Table>;

const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
const dayOf = (at: Date) => new Date(Math.floor(at.getTime() / 86_400_000) * 86_400_000);
const hasUnindexed = (row: RollupSource) => (row.unindexedTables ?? []).length > 0;

type Delta = Record<string, unknown>;

/** Adds `row` into the delta keyed by `key`: sums add up, maxima keep the larger value. */
function accumulate(deltas: Map<string, Delta>, table: Table, keys: unknown[], values: Record<string, number | Date>) {
  const id = JSON.stringify(keys.map((k) => (k instanceof Date ? k.getTime() : k)));
  let delta = deltas.get(id);
  if (!delta) {
    delta = Object.fromEntries(table.keys.map((key, i) => [key, keys[i]]));
    for (const sum of table.sums) delta[sum] = 0;
    deltas.set(id, delta);
  }
  for (const [column, value] of Object.entries(values)) {
    if (table.maxima.includes(column)) delta[column] = delta[column] === undefined || value > (delta[column] as number | Date) ? value : delta[column];
    else delta[column] = (delta[column] as number) + (value as number);
  }
}

/** The roll-up rows one batch of searches adds, per table. */
export function rollupDeltas(rows: RollupSource[]): Record<keyof typeof rollupTables, Delta[]> {
  const maps = { hourly: new Map<string, Delta>(), queries: new Map<string, Delta>(), tables: new Map<string, Delta>(), latency: new Map<string, Delta>() };
  for (const row of rows) {
    const ms = row.responseTimeMs;
    const slow = ms > SLOW_SEARCH_MS ? 1 : 0;
    const zero = row.resultCount === 0 && row.status === 'ok' ? 1 : 0;
    const failed = row.status === 'ok' ? 0 : 1;
    const day = dayOf(row.createdAt);
    accumulate(maps.hourly, rollupTables.hourly, [row.userId, hourOf(row.createdAt)], {
      searches: 1, total_ms: ms, total_results: row.resultCount, zero_results: zero, with_results: row.resultCount > 0 ? 1 : 0,
      slow, failed, unindexed: hasUnindexed(row) ? 1 : 0, max_ms: ms, last_at: row.createdAt,
    });
    accumulate(maps.queries, rollupTables.queries, [row.userId, day, row.query], {
      searches: 1, total_ms: ms, total_results: row.resultCount, slow, slow_ms: slow * ms, zero_results: zero, failed, last_at: row.createdAt,
    });
    for (const table of new Set(row.tables ?? [])) accumulate(maps.tables, rollupTables.tables, [row.userId, day, 'searched', '', table], { searches: 1, slow });
    const unindexed = new Map((row.unindexedTables ?? []).map((u) => [JSON.stringify([u.databaseId, u.table]), u]));
    for (const u of unindexed.values()) accumulate(maps.tables, rollupTables.tables, [row.userId, day, 'unindexed', u.databaseId, u.table], { searches: 1, slow });
    accumulate(maps.latency, rollupTables.latency, [row.userId, day, ms], { searches: 1 });
  }
  // Sorted by key, so concurrent writers lock rows in the same order.
  const sorted = (map: Map<string, Delta>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, delta]) => delta);
  return { hourly: sorted(maps.hourly), queries: sorted(maps.queries), tables: sorted(maps.tables), latency: sorted(maps.latency) };
}

/** Adds a batch of searches to every roll-up: one multi-row upsert per table (and per 500 rows). */
export async function applyRollups(sequelize: Sequelize, rows: RollupSource[], transaction?: Transaction): Promise<void> {
  const deltas = rollupDeltas(rows);
  const greatest = sequelize.getDialect() === 'postgres' ? 'GREATEST' : 'max';
  for (const [name, list] of Object.entries(deltas) as Array<[keyof typeof rollupTables, Delta[]]>) {
    const table = rollupTables[name];
    const columns = [...table.keys, ...table.sums, ...table.maxima];
    const updates = [
      ...table.sums.map((c) => `${c} = ${table.name}.${c} + excluded.${c}`),
      ...table.maxima.map((c) => `${c} = ${greatest}(${table.name}.${c}, excluded.${c})`),
    ];
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      await sequelize.query(
        `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES ${chunk.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')}
         ON CONFLICT (${table.keys.join(', ')}) DO UPDATE SET ${updates.join(', ')}`,
        { replacements: chunk.flatMap((delta) => columns.map((c) => delta[c])), transaction },
      );
    }
  }
}

/** SQL for the start of the UTC hour or day of a timestamp column, as the same timestamp type. */
function truncate(sequelize: Sequelize, column: string, unit: 'hour' | 'day'): string {
  if (sequelize.getDialect() === 'postgres') return `(date_trunc('${unit}', ${column} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;
  // Sequelize stores SQLite timestamps as `YYYY-MM-DD HH:MM:SS.SSS +00:00`: the roll-up keys use the same text.
  return unit === 'hour' ? `strftime('%Y-%m-%d %H:00:00.000 +00:00', ${column})` : `strftime('%Y-%m-%d 00:00:00.000 +00:00', ${column})`;
}

/** The elements of a JSON array column of `r` with one JSON type, one row each as `e.value`, for a FROM clause. */
export function jsonElements(sequelize: Sequelize, column: string, type: 'string' | 'object'): { from: string; where: string } {
  if (sequelize.getDialect() === 'postgres') {
    return {
      from: `json_array_elements(CASE WHEN json_typeof(r.${column}) = 'array' THEN r.${column} ELSE '[]'::json END) AS e(value)`,
      where: `json_typeof(e.value) = '${type}'`,
    };
  }
  return { from: `json_each(CASE WHEN json_type(r.${column}) = 'array' THEN r.${column} ELSE '[]' END) AS e`, where: `e.type = '${type === 'string' ? 'text' : 'object'}'` };
}

/**
 * Recomputes every roll-up from search_records with created_at in [from, to) (all rows without bounds). Meant for
 * whole days: the roll-up rows of the range are replaced, not added to.
 */
export async function rebuildRollups(sequelize: Sequelize, range: { from?: Date; to?: Date } = {}): Promise<void> {
  const pg = sequelize.getDialect() === 'postgres';
  const within = (column: string) => [range.from ? `${column} >= :from` : '', range.to ? `${column} < :to` : ''].filter(Boolean).join(' AND ') || '1 = 1';
  const replacements = { from: range.from ?? null, to: range.to ?? null, slowMs: SLOW_SEARCH_MS };
  const hour = truncate(sequelize, 'r.created_at', 'hour');
  const day = truncate(sequelize, 'r.created_at', 'day');
  const slow = `CASE WHEN r.response_time_ms > :slowMs THEN 1 ELSE 0 END`;
  const zero = `CASE WHEN r.result_count = 0 AND r.status = 'ok' THEN 1 ELSE 0 END`;
  const failed = `CASE WHEN r.status <> 'ok' THEN 1 ELSE 0 END`;
  const unindexed = `CASE WHEN r.unindexed_tables IS NOT NULL AND CAST(r.unindexed_tables AS TEXT) NOT IN ('[]', 'null') THEN 1 ELSE 0 END`;
  await sequelize.transaction(async (transaction) => {
    const run = (sql: string) => sequelize.query(sql, { replacements, transaction });
    for (const table of Object.values(rollupTables)) await run(`DELETE FROM ${table.name} WHERE ${within(table.keys[1]!)}`);
    await run(`INSERT INTO search_stats_hourly (user_id, hour_start, searches, total_ms, total_results, zero_results, with_results, slow, failed, unindexed, max_ms, last_at)
      SELECT r.user_id, ${hour}, COUNT(*), SUM(r.response_time_ms), SUM(r.result_count), SUM(${zero}),
        SUM(CASE WHEN r.result_count > 0 THEN 1 ELSE 0 END), SUM(${slow}), SUM(${failed}), SUM(${unindexed}), MAX(r.response_time_ms), MAX(r.created_at)
      FROM search_records r WHERE ${within('r.created_at')} GROUP BY r.user_id, ${hour}`);
    await run(`INSERT INTO search_query_stats_daily (user_id, day_start, query, searches, total_ms, total_results, slow, slow_ms, zero_results, failed, last_at)
      SELECT r.user_id, ${day}, r.query, COUNT(*), SUM(r.response_time_ms), SUM(r.result_count), SUM(${slow}),
        SUM(${slow} * r.response_time_ms), SUM(${zero}), SUM(${failed}), MAX(r.created_at)
      FROM search_records r WHERE ${within('r.created_at')} GROUP BY r.user_id, ${day}, r.query`);
    const searched = jsonElements(sequelize, 'tables', 'string');
    const name = pg ? `(e.value #>> '{}')` : 'e.value';
    await run(`INSERT INTO search_table_stats_daily (user_id, day_start, kind, database_id, table_name, searches, slow)
      SELECT r.user_id, ${day}, 'searched', '', ${name}, COUNT(DISTINCT r.id), COUNT(DISTINCT CASE WHEN r.response_time_ms > :slowMs THEN r.id END)
      FROM search_records r, ${searched.from} WHERE r.tables IS NOT NULL AND ${searched.where} AND ${within('r.created_at')}
      GROUP BY r.user_id, ${day}, ${name}`);
    const unindexedOnes = jsonElements(sequelize, 'unindexed_tables', 'object');
    const field = (key: string) => (pg ? `(e.value ->> '${key}')` : `json_extract(e.value, '$.${key}')`);
    await run(`INSERT INTO search_table_stats_daily (user_id, day_start, kind, database_id, table_name, searches, slow)
      SELECT r.user_id, ${day}, 'unindexed', ${field('databaseId')}, ${field('table')}, COUNT(DISTINCT r.id),
        COUNT(DISTINCT CASE WHEN r.response_time_ms > :slowMs THEN r.id END)
      FROM search_records r, ${unindexedOnes.from} WHERE r.unindexed_tables IS NOT NULL AND ${unindexedOnes.where} AND ${within('r.created_at')}
      GROUP BY r.user_id, ${day}, ${field('databaseId')}, ${field('table')}`);
    await run(`INSERT INTO search_latency_daily (user_id, day_start, response_time_ms, searches)
      SELECT r.user_id, ${day}, r.response_time_ms, COUNT(*) FROM search_records r WHERE ${within('r.created_at')}
      GROUP BY r.user_id, ${day}, r.response_time_ms`);
  });
}

/** Retention: roll-up rows of hours and days that start before `cutoff` (a UTC midnight); returns how many went. */
export async function deleteRollupsBefore(sequelize: Sequelize, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (const table of Object.values(rollupTables)) {
    const count = await sequelize.query(`DELETE FROM ${table.name} WHERE ${table.keys[1]} < :cutoff`, { type: QueryTypes.BULKDELETE, replacements: { cutoff } });
    deleted += Number(count ?? 0);
  }
  return deleted;
}
