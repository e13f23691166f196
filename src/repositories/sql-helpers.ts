import { QueryTypes, type Sequelize } from 'sequelize';

/** A number from an aggregate: PostgreSQL returns COUNT/SUM/AVG as strings, SQLite as numbers; NULL is 0. */
export const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * A timestamp column read by raw SQL: a Date from PostgreSQL, Sequelize's `YYYY-MM-DD HH:MM:SS.SSS +00:00` text
 * from SQLite (MAX() of a column loses its type there).
 */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  const text = String(value).trim().replace(' ', 'T').replace(/\s*([+-]\d\d:\d\d)$/, '$1');
  return new Date(/[zZ]|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
}

/**
 * A timestamp as the text Sequelize writes for it on both dialects (`YYYY-MM-DD HH:MM:SS.SSS +00:00`, the store's
 * timezone being UTC), for rows written with raw SQL.
 */
export function storedTimestamp(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, -1)} +00:00`;
}

/**
 * `ORDER BY` term for a text column that sorts by code point on both dialects, so ties break identically:
 * PostgreSQL would otherwise use the database's locale collation, SQLite compares bytes.
 */
export function textOrder(sequelize: Sequelize, column: string): string {
  return sequelize.getDialect() === 'postgres' ? `${column} COLLATE "C"` : column;
}

/** A parsed JSON array column read as text (both dialects store what JSON.stringify wrote). */
export function jsonArray<T>(text: unknown): T[] {
  if (typeof text !== 'string' || text === '') return [];
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? (parsed as T[]) : [];
}

/** A raw SELECT with named replacements (`:name`), rows as plain objects. */
export async function select(sequelize: Sequelize, sql: string, replacements: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  return sequelize.query<Record<string, unknown>>(sql, { type: QueryTypes.SELECT, replacements });
}
