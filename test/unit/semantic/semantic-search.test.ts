import { describe, expect, it, vi } from 'vitest';
import type { DatabaseConnectionRecord } from '../../../src/repositories/database-connection-repository.js';
import type { SemanticIndexJobRecord } from '../../../src/repositories/semantic-index-job-repository.js';
import type { KeyCaller } from '../../../src/services/callers.js';
import { EmbeddingError, semanticIndexRequired, semanticSearch, type SemanticSearchDeps } from '../../../src/semantic/index.js';
import type { TableVectors } from '../../../src/semantic/vector-cache.js';
import { normalize } from '../../../src/semantic/vectors.js';
import { docsTable, FakeProvider } from './support.js';

const caller = { kind: 'key' } as KeyCaller;
const connection = (id: string) => ({ id }) as DatabaseConnectionRecord;
const unit = (values: number[]) => normalize(Float32Array.from(values));
const job = (connectionId: string, tableName: string, providerId = 'fake:hash-8', status: SemanticIndexJobRecord['status'] = 'done') =>
  ({ id: `sidx_${connectionId}_${tableName}`, connectionId, tableName, providerId, status, finishedAt: new Date(0) }) as SemanticIndexJobRecord;

/** A table's vectors: rows of 8 dimensions pointing along the given axes (row i has primary key id i + 1). */
function tableOf(axes: number[][]): TableVectors {
  const matrix = new Float32Array(axes.length * 8);
  axes.forEach((row, i) => matrix.set(unit([...row, ...Array(8 - row.length).fill(0)]), i * 8));
  return { version: 'v', dims: 8, count: axes.length, matrix, keys: axes.map((_, i) => JSON.stringify({ id: i + 1 })), bytes: matrix.byteLength };
}

/** Fakes around the engine: the query always embeds to the first axis. */
function deps(overrides: Partial<SemanticSearchDeps> & { tables?: Record<string, TableVectors> } = {}) {
  const provider = new FakeProvider();
  provider.embed = vi.fn(async (texts: string[]) => texts.map(() => unit([1, 0, 0, 0, 0, 0, 0, 0])));
  const tables = overrides.tables ?? {};
  return {
    jobs: { latestDone: vi.fn(async () => [job('db_a', 'docs'), job('db_b', 'notes')]), live: vi.fn(async () => []) },
    cache: { get: vi.fn(async (connectionId: string, tableName: string) => tables[`${connectionId}/${tableName}`]!) },
    provider,
    limits: { admitAiRequest: vi.fn(async () => undefined) },
    tablesOf: vi.fn(async () => [docsTable]),
    ...overrides,
  } satisfies SemanticSearchDeps;
}

describe('semanticSearch', () => {
  const twoTables = {
    'db_a/docs': tableOf([[0, 1], [1, 0.2], [1, 1], [-1, 0]]),
    'db_b/notes': tableOf([[1, 0.05], [0.2, 1]]),
  };

  it('when two tables are indexed, then rows of both are ranked by cosine similarity with ranks and a true total', async () => {
    const d = deps({ tables: twoTables });
    const result = await semanticSearch(d, { caller, connections: [connection('db_a'), connection('db_b')], query: 'q', limit: 3 });
    expect(result.hits.map((h) => [h.databaseId, h.table, h.primaryKey.id, h.rank])).toEqual([
      ['db_b', 'notes', 1, 1],
      ['db_a', 'docs', 2, 2],
      ['db_a', 'docs', 3, 3],
    ]);
    expect(result.hits[0].score).toBeCloseTo(1 / Math.sqrt(1.0025), 5);
    expect(result.total).toBe(3); // 0.2 default minimum: the orthogonal, opposite and 0.196 rows do not match
    expect(result.searchedTables).toEqual([{ databaseId: 'db_a', table: 'docs', rows: 4 }, { databaseId: 'db_b', table: 'notes', rows: 2 }]);
    expect(d.provider.embed).toHaveBeenCalledWith(['q'], 'query');
  });

  it('when offset moves the window, then the ranking continues where the previous page ended', async () => {
    const input = { caller, connections: [connection('db_a'), connection('db_b')], query: 'q', minScore: -1 };
    const all = await semanticSearch(deps({ tables: twoTables }), { ...input, limit: 6 });
    const page = await semanticSearch(deps({ tables: twoTables }), { ...input, limit: 2, offset: 2 });
    expect(page.hits).toEqual(all.hits.slice(2, 4));
    expect(page.total).toBe(6);
  });

  it('when one AI request is made, then it is counted once, for the caller, before the query is embedded', async () => {
    const admit = vi.fn(async () => undefined);
    const d = deps({ tables: twoTables, limits: { admitAiRequest: admit } });
    await semanticSearch(d, { caller, connections: [connection('db_a')], query: 'q', limit: 5 });
    expect(admit).toHaveBeenCalledTimes(1);
    expect(admit).toHaveBeenCalledWith(caller);
    expect(admit.mock.invocationCallOrder[0]).toBeLessThan(vi.mocked(d.provider.embed).mock.invocationCallOrder[0]);
  });

  it('when the AI limit is used up, then the error passes through and nothing is embedded', async () => {
    const d = deps({ tables: twoTables, limits: { admitAiRequest: vi.fn(async () => Promise.reject(new Error('AI_RATE_LIMIT_EXCEEDED'))) } });
    await expect(semanticSearch(d, { caller, connections: [connection('db_a')], query: 'q', limit: 5 })).rejects.toThrow('AI_RATE_LIMIT_EXCEEDED');
    expect(d.provider.embed).not.toHaveBeenCalled();
  });

  it('when tables have no finished index of this model, then they are listed with the reason, and nothing is counted', async () => {
    const d = deps({
      jobs: {
        latestDone: vi.fn(async () => [job('db_a', 'old', 'fake:other-model')]),
        live: vi.fn(async () => [job('db_a', 'docs', 'fake:hash-8', 'running')]),
      },
      tablesOf: vi.fn(async () => [docsTable, { ...docsTable, name: 'old' }, { ...docsTable, name: 'fresh' }, { ...docsTable, name: 'keyless', primaryKey: [] }]),
    });
    const result = await semanticSearch(d, { caller, connections: [connection('db_a')], query: 'q', limit: 5 });
    expect(result.hits).toEqual([]);
    expect(result.notIndexed.map((n) => [n.table, n.reason])).toEqual([['docs', 'indexing'], ['old', 'model_changed'], ['fresh', 'never_indexed']]);
    expect(result.notIndexed.every((n) => n.message.length > 20)).toBe(true);
    expect(d.limits.admitAiRequest).not.toHaveBeenCalled();
    expect(d.provider.embed).not.toHaveBeenCalled();
    const error = semanticIndexRequired(result.notIndexed);
    expect(error).toMatchObject({ code: 'SEMANTIC_INDEX_REQUIRED', status: 409 });
    expect(error.message).toContain('docs, old, fresh');
  });

  it('when a table filter is given, then only those tables are searched (by name or schema.table, any case)', async () => {
    const d = deps({ tables: twoTables });
    const result = await semanticSearch(d, { caller, connections: [connection('db_a'), connection('db_b')], tables: ['NOTES'], query: 'q', limit: 5 });
    expect(result.searchedTables.map((t) => t.table)).toEqual(['notes']);
    expect(result.notIndexed).toEqual([]);
  });

  it("when a database's schema cannot be read, then its indexed tables are still searched from the store", async () => {
    const d = deps({ tables: twoTables, tablesOf: vi.fn(async () => Promise.reject(new Error('unreachable'))) });
    const result = await semanticSearch(d, { caller, connections: [connection('db_a'), connection('db_b')], query: 'q', limit: 5 });
    expect(result.searchedTables).toHaveLength(2);
  });

  it('when the model fails, then 503 SERVICE_UNAVAILABLE says semantic search is unavailable', async () => {
    const d = deps({ tables: twoTables });
    d.provider.embed = vi.fn(async () => Promise.reject(new EmbeddingError('The embedding service answered HTTP 500.')));
    await expect(semanticSearch(d, { caller, connections: [connection('db_a')], query: 'q', limit: 5 })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE', status: 503, message: expect.stringContaining('HTTP 500'),
    });
  });
});
