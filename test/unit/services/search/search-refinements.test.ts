/** refine: filter, sort, facets and weights checked against the selected indexed tables. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/app-error.js';
import { indexedColumns } from '../../../../src/search-index/filter-columns.js';
import { needsIndex, refine, type RefinableSource } from '../../../../src/services/search/search-refinements.js';
import type { SearchRequest } from '../../../../src/services/search/search-request.js';
import { table } from './fakes.js';

const source = (src: string, connectionId: string, columns: string[]): RefinableSource => ({
  src, connectionId, tableName: src, keyColumns: ['id'], textColumns: ['body'], semanticReady: false,
  filterable: indexedColumns(table(src), columns), sortable: indexedColumns(table(src), columns),
});
const sources = [source('posts', 'db_1', ['price']), source('notes', 'db_2', [])];
const tableOf = (src: string) => ({ databaseId: src === 'posts' ? 'db_1' : 'db_2', table: src });
const run = (request: Partial<SearchRequest>) => refine({ query: 'word', ...request }, sources, ['db_1', 'db_2'], tableOf);

describe('refine', () => {
  it('when a filter names a column a table lacks, then that table is left out and listed with the column', () => {
    const refined = run({ filter: { column: 'price', op: 'gt', value: 3 } } as Partial<SearchRequest>);
    expect(refined.sources.map((s) => s.src)).toEqual(['posts']);
    expect(refined.excluded).toEqual([{ databaseId: 'db_2', table: 'notes', reason: 'missing_column', column: 'price' }]);
    expect(refined.where).not.toBeNull();
  });

  it('when a sort or facet names a column no table has, then 400 names its path', () => {
    expect(() => run({ sort: [{ column: 'nope', direction: 'asc' }] })).toThrow(AppError);
    expect(() => run({ facets: ['nope'] })).toThrow(AppError);
    expect(run({ sort: [{ column: 'price', direction: 'desc' }] }).sort).toEqual([{ column: expect.objectContaining({ name: 'price' }), descending: true }]);
  });

  it('when a weight names a database the search does not read, then 400; otherwise it is kept per database', () => {
    expect(() => run({ databaseWeights: { db_9: 2 } })).toThrow(AppError);
    expect([...run({ databaseWeights: { db_2: 0.5 } }).weights]).toEqual([['db_2', 0.5]]);
  });

  it('when nothing narrows, orders or counts, then the live engine may take part', () => {
    expect(needsIndex({ query: 'word' })).toBe(false);
    expect(needsIndex({ query: 'word', facets: ['price'] })).toBe(true);
  });
});
