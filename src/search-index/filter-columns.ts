/**
 * Columns a search can filter, sort and facet by: chosen per indexed table from its discovered schema,
 * copied into the index with every row, typed. A column is of one of four kinds, read from its declared type:
 * numbers, dates (and times of day with a date), booleans and text (values up to MAX_FILTER_TEXT characters).
 *
 * In the index a column is stored under a name made from its kind and its name (`fn_price_3f2a1c`): the same column
 * name of the same kind in several tables is one column of the space, so one filter applies to all of them. Those
 * names use only [a-z0-9_], so they can be written into LanceDB's SQL as they are.
 */
import { createHash } from 'node:crypto';
import type { TableSchema } from '../connectors/index.js';

export type ColumnKind = 'number' | 'date' | 'boolean' | 'text';

/** A chosen column of an indexed table, with where the index keeps it. */
export interface IndexedColumn {
  column: string;
  kind: ColumnKind;
  physical: string;
}

/** Longest text value kept for filtering and facets; longer text is cut (it is for matching, not for display). */
export const MAX_FILTER_TEXT = 256;

const KIND_LETTER: Record<ColumnKind, string> = { number: 'n', date: 'd', boolean: 'b', text: 't' };

/** The kind of a declared column type (PostgreSQL, MySQL/MariaDB or SQLite), or null if it cannot be filtered. */
export function kindOfType(declared: string): ColumnKind | null {
  const type = declared.trim().toLowerCase();
  if (/^(boolean|bool|bit\(1\)|tinyint\(1\))\b/.test(type)) return 'boolean';
  if (/^(tinyint|smallint|mediumint|int|integer|bigint|smallserial|serial|bigserial|decimal|numeric|real|double|float|money)\b/.test(type)) return 'number';
  if (/^(date|datetime|timestamp)\b/.test(type)) return 'date';
  if (/^(character varying|varchar|character|char|nvarchar|nchar|text|tinytext|mediumtext|longtext|citext|uuid|enum|clob|string)\b/.test(type)) return 'text';
  return null;
}

/** The index's name for a column of this kind: safe letters, unique per (kind, name). */
export function physicalName(column: string, kind: ColumnKind): string {
  const readable = column.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 24);
  const hash = createHash('sha256').update(`${kind}\u0000${column}`).digest('hex').slice(0, 8);
  return `f${KIND_LETTER[kind]}_${readable}_${hash}`;
}

/** The table's columns that can be chosen for filtering and sorting, with their kinds. */
export function eligibleColumns(table: TableSchema): Array<{ column: string; kind: ColumnKind }> {
  return table.columns.flatMap((c) => {
    const kind = kindOfType(c.type);
    return kind ? [{ column: c.name, kind }] : [];
  });
}

/** The chosen columns of a table, resolved against its schema (a chosen column the schema lost is dropped). */
export function indexedColumns(table: TableSchema, chosen: string[]): IndexedColumn[] {
  const eligible = new Map(eligibleColumns(table).map((c) => [c.column, c.kind]));
  return [...new Set(chosen)].flatMap((column) => {
    const kind = eligible.get(column);
    return kind ? [{ column, kind, physical: physicalName(column, kind) }] : [];
  });
}

/** A source value as the index stores it for its kind (null when it cannot be read as one). */
export function filterValue(value: unknown, kind: ColumnKind): number | boolean | string | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'number': {
      const n = typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : Number(String(value));
      return Number.isFinite(n) ? n : null;
    }
    case 'date': {
      const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(String(value));
      return Number.isFinite(ms) ? ms : null;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number' || typeof value === 'bigint') return Number(value) !== 0;
      if (/^(true|t|1|yes)$/i.test(String(value))) return true;
      if (/^(false|f|0|no)$/i.test(String(value))) return false;
      return null;
    case 'text':
      return (Buffer.isBuffer(value) ? value.toString('utf8') : String(value)).slice(0, MAX_FILTER_TEXT);
  }
}

/** A table's chosen filterable and sortable columns, in one order, to compare settings with what the index holds. */
export function chosenColumns(settings: { filterableColumns?: string[] | null; sortableColumns?: string[] | null }): { filterable: string[]; sortable: string[] } {
  return { filterable: [...(settings.filterableColumns ?? [])].sort(), sortable: [...(settings.sortableColumns ?? [])].sort() };
}

/** Whether the rows in the index carry the columns the table's settings choose now. */
export function columnsReady(table: { filterableColumns?: string[] | null; sortableColumns?: string[] | null; syncedColumns?: { filterable: string[]; sortable: string[] } | null }): boolean {
  if (!table.syncedColumns) return false;
  return JSON.stringify(chosenColumns(table)) === JSON.stringify(chosenColumns({ filterableColumns: table.syncedColumns.filterable, sortableColumns: table.syncedColumns.sortable }));
}
