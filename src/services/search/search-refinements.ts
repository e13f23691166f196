/**
 * What a search request asks beyond its words (issue 26): `filter`, `sort`, `facets` and `databaseWeights`, checked
 * against the indexed tables the search selects and turned into what the index search takes (index-search.ts).
 * A problem is a 400 naming its path in the request.
 */
import type { components } from '../../../generated/openapi.js';
import { validationError, type AppError } from '../../errors/app-error.js';
import type { IndexedColumn } from '../../search-index/filter-columns.js';
import { compileFilter, type FilterNode } from '../../search-index/filters.js';
import type { ColumnRef, IndexedSource } from '../../search-index/index-search.js';

type SearchRequest = components['schemas']['SearchRequest'];
type ExcludedTable = components['schemas']['SearchResponse']['data']['excludedTables'][number];

/** An indexed table with the columns searches may filter and sort it by. */
export interface RefinableSource extends IndexedSource {
  filterable: IndexedColumn[];
  sortable: IndexedColumn[];
}

export interface Refinements {
  /** The sources left to search (a filter leaves out tables that lack its columns). */
  sources: RefinableSource[];
  where: string | null;
  sort: Array<{ column: ColumnRef; descending: boolean }>;
  facets: ColumnRef[];
  weights: Map<string, number>;
  excluded: ExcludedTable[];
}

function invalid(path: string, message: string): AppError {
  return validationError([{ location: 'body', path, message }]);
}

/** True when the request narrows, orders or counts by columns: only the index can answer that. */
export function needsIndex(request: SearchRequest): boolean {
  return request.filter !== undefined || (request.sort?.length ?? 0) > 0 || (request.facets?.length ?? 0) > 0;
}

/** The columns a filter names, in the order it names them. */
function filterColumns(node: FilterNode): string[] {
  if ('and' in node) return node.and.flatMap(filterColumns);
  if ('or' in node) return node.or.flatMap(filterColumns);
  if ('not' in node) return filterColumns(node.not);
  return [node.column];
}

/** A column of the sources as one reference: every index column it is stored under, and its (first) kind. */
function columnRef(name: string, columns: IndexedColumn[]): ColumnRef | null {
  const found = columns.filter((c) => c.column === name);
  if (found.length === 0) return null;
  return { name, physical: [...new Set(found.map((c) => c.physical))], kind: found[0]!.kind };
}

export function refine(request: SearchRequest, sources: RefinableSource[], searchedDatabases: string[], tableOf: (src: string) => { databaseId: string; table: string }): Refinements {
  const excluded: ExcludedTable[] = [];
  let kept = sources;
  let where: string | null = null;
  if (request.filter !== undefined) {
    const filter = request.filter as FilterNode;
    const compiled = compileFilter(filter, sources.map((s) => ({ src: s.src, columns: s.filterable })));
    where = compiled.where;
    const included = new Set(compiled.srcs);
    const named = filterColumns(filter);
    for (const source of sources.filter((s) => !included.has(s.src))) {
      const lacking = named.find((column) => !source.filterable.some((c) => c.column === column)) ?? named[0]!;
      excluded.push({ ...tableOf(source.src), reason: 'missing_column', column: lacking });
    }
    kept = sources.filter((s) => included.has(s.src));
  }

  const sort = (request.sort ?? []).map((entry, i) => {
    const column = columnRef(entry.column, kept.flatMap((s) => s.sortable));
    if (!column) throw invalid(`/sort/${i}/column`, `names "${entry.column}", which no selected table can sort by (make it sortable: PATCH /api/v1/databases/{databaseId}/index/tables/{table} with {"sortableColumns": [...]})`);
    return { column, descending: entry.direction === 'desc' };
  });
  const facets = (request.facets ?? []).map((name, i) => {
    const column = columnRef(name, kept.flatMap((s) => s.filterable));
    if (!column) throw invalid(`/facets/${i}`, `names "${name}", which no selected table can facet by (make it filterable: PATCH /api/v1/databases/{databaseId}/index/tables/{table} with {"filterableColumns": [...]})`);
    return column;
  });

  const weights = new Map<string, number>();
  for (const [databaseId, weight] of Object.entries(request.databaseWeights ?? {})) {
    if (!searchedDatabases.includes(databaseId)) throw invalid(`/databaseWeights/${databaseId}`, 'names a database this search does not read');
    weights.set(databaseId, weight);
  }
  return { sources: kept, where, sort, facets, weights, excluded };
}
