/**
 * A search's `filter` (issue 26): a JSON tree of conditions on filterable columns, checked against the selected
 * tables and compiled to the index's SQL filter.
 *
 *   { "column": "price", "op": "lt", "value": 100 }          eq ne lt lte gt gte: one value; in: `values`
 *   { "column": "deletedAt", "op": "isNull", "value": true }  isNull true: no value; false: has one
 *   { "and": [ ... ] }   { "or": [ ... ] }   { "not": { ... } }
 *
 * A condition's column is a filterable column of the table (updateIndexedTable). The filter applies to every
 * selected table that has every column it names, with the kind the values call for; a table that lacks one is left
 * out of the search and listed. A column no selected table can filter by that way is a 400 naming it.
 *
 * Nothing of the caller reaches the SQL as text: columns become the index's own names (filter-columns.ts), numbers
 * are written from finite numbers, dates from parsed timestamps (epoch milliseconds), booleans as TRUE/FALSE, and
 * text as a quoted literal whose quotes are doubled.
 */
import { validationError, type AppError } from '../errors/app-error.js';
import type { ColumnKind, IndexedColumn } from './filter-columns.js';

export type FilterValue = string | number | boolean;
export type FilterNode =
  | { and: FilterNode[] }
  | { or: FilterNode[] }
  | { not: FilterNode }
  | { column: string; op: FilterOp; value?: FilterValue; values?: FilterValue[] };
export type FilterOp = 'eq' | 'ne' | 'in' | 'lt' | 'lte' | 'gt' | 'gte' | 'isNull';

/** Conditions one filter may hold, and how deep and/or/not may nest. */
export const MAX_CONDITIONS = 50;
export const MAX_DEPTH = 6;

const RANGE_OPS = new Set<FilterOp>(['lt', 'lte', 'gt', 'gte']);
const SQL_OP: Record<Exclude<FilterOp, 'in' | 'isNull'>, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

/** A table the filter may apply to: its filterable columns. */
export interface FilterTarget {
  src: string;
  columns: IndexedColumn[];
}

export interface CompiledFilter {
  /** The index's SQL filter. */
  where: string;
  /** The tables that have every column the filter names, with the kind it needs. */
  srcs: string[];
}

function invalid(path: string, message: string): AppError {
  return validationError([{ location: 'body', path: `/filter${path}`, message }]);
}

/** The kind a condition's values call for (all values of one condition share it). */
function kindOfValue(value: FilterValue): ColumnKind[] {
  if (typeof value === 'number') return ['number'];
  if (typeof value === 'boolean') return ['boolean'];
  // A string is text, or a date when it reads as one.
  return /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) && Number.isFinite(Date.parse(value)) ? ['date', 'text'] : ['text'];
}

function literal(value: FilterValue, kind: ColumnKind): string {
  switch (kind) {
    case 'number':
      return String(Number(value));
    case 'date':
      return String(Date.parse(String(value)));
    case 'boolean':
      return value ? 'TRUE' : 'FALSE';
    case 'text':
      return `'${String(value).replace(/'/g, "''")}'`;
  }
}

/**
 * Checks the filter against the targets' columns and compiles it. Throws 400 naming the path of the first
 * problem: a column no target can filter by with such values, an operator the column's kind has no meaning for,
 * values missing, too many conditions or too deep a tree.
 */
export function compileFilter(filter: FilterNode, targets: FilterTarget[]): CompiledFilter {
  let conditions = 0;
  /** Per condition, the kinds its column may have in a table; resolved to one per table below. */
  const needs = new Map<FilterNode, { column: string; kinds: ColumnKind[] }>();

  const check = (node: FilterNode, path: string, depth: number): void => {
    if (depth > MAX_DEPTH) throw invalid(path, `nests deeper than ${MAX_DEPTH} levels`);
    if ('and' in node || 'or' in node) {
      const children = 'and' in node ? node.and : node.or;
      const key = 'and' in node ? 'and' : 'or';
      if (children.length === 0) throw invalid(`${path}/${key}`, 'must hold at least one condition');
      children.forEach((child, i) => check(child, `${path}/${key}/${i}`, depth + 1));
      return;
    }
    if ('not' in node) return check(node.not, `${path}/not`, depth + 1);
    if (++conditions > MAX_CONDITIONS) throw invalid(path, `is one condition too many (at most ${MAX_CONDITIONS})`);
    const values = node.op === 'in' ? node.values : node.value === undefined ? undefined : [node.value];
    if (node.op === 'isNull') {
      if (typeof node.value !== 'boolean' && node.value !== undefined) throw invalid(`${path}/value`, 'must be true or false for isNull');
      needs.set(node, { column: node.column, kinds: ['number', 'date', 'boolean', 'text'] });
      return;
    }
    if (!values || values.length === 0) throw invalid(path, node.op === 'in' ? 'needs `values` for op in' : `needs a \`value\` for op ${node.op}`);
    let kinds = kindOfValue(values[0]!);
    for (const value of values.slice(1)) kinds = kinds.filter((k) => kindOfValue(value).includes(k));
    if (RANGE_OPS.has(node.op)) kinds = kinds.filter((k) => k === 'number' || k === 'date');
    if (kinds.length === 0) {
      throw invalid(`${path}/op`, RANGE_OPS.has(node.op) ? `${node.op} compares numbers or dates, not these values` : 'mixes values of different types');
    }
    const available = targets.flatMap((t) => t.columns.filter((c) => c.column === node.column));
    if (available.length === 0) throw invalid(`${path}/column`, `names "${node.column}", which no selected table can filter by (make it filterable: PATCH /api/v1/databases/{databaseId}/index/tables/{table} with {"filterableColumns": [...]}; a column chosen since the last sync counts once the sync that writes it ends, see columnsReady)`);
    if (!available.some((c) => kinds.includes(c.kind))) {
      throw invalid(`${path}/value`, `does not fit column "${node.column}" (${[...new Set(available.map((c) => c.kind))].join(' or ')})`);
    }
    needs.set(node, { column: node.column, kinds });
  };
  check(filter, '', 1);

  // A table takes part when it has every named column with a kind the condition accepts.
  const kindIn = (target: FilterTarget, need: { column: string; kinds: ColumnKind[] }) =>
    target.columns.find((c) => c.column === need.column && need.kinds.includes(c.kind));
  const included = targets.filter((t) => [...needs.values()].every((need) => kindIn(t, need)));
  if (included.length === 0) throw invalid('', 'names columns that no single selected table has together');

  /** A condition over the physical columns of its kind(s) present in the included tables (one per kind). */
  const compile = (node: FilterNode): string => {
    if ('and' in node) return `(${node.and.map(compile).join(' AND ')})`;
    if ('or' in node) return `(${node.or.map(compile).join(' OR ')})`;
    if ('not' in node) return `(NOT ${compile(node.not)})`;
    const need = needs.get(node)!;
    const columns = [...new Map(included.map((t) => kindIn(t, need)!).map((c) => [c.physical, c])).values()];
    const each = columns.map((c) => {
      if (node.op === 'isNull') return `${c.physical} ${node.value === false ? 'IS NOT NULL' : 'IS NULL'}`;
      if (node.op === 'in') return `${c.physical} IN (${node.values!.map((v) => literal(v, c.kind)).join(', ')})`;
      return `${c.physical} ${SQL_OP[node.op]} ${literal(node.value!, c.kind)}`;
    });
    return each.length === 1 ? each[0]! : `(${each.join(' OR ')})`;
  };
  return { where: compile(filter), srcs: included.map((t) => t.src) };
}
