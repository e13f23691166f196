import { describe, expect, it } from 'vitest';
import { BatchWriter } from '../../../src/services/batch-writer.js';
import { SearchRecorder, type SearchRecordInput } from '../../../src/services/search-recorder.js';

const writer = (write: (batch: number[]) => Promise<void>, maxBuffered?: number) => {
  const errors: unknown[] = [];
  const batches = new BatchWriter<number>({ write, flushMs: 60_000, onError: (e) => errors.push(e), label: 'numbers', maxBuffered });
  return { batches, errors };
};

describe('BatchWriter', () => {
  it('when rows are added, then nothing is written until a flush, which writes them as one batch', async () => {
    const written: number[][] = [];
    const { batches } = writer(async (batch) => void written.push(batch));
    batches.add(1);
    batches.add(2);
    expect(written).toEqual([]);
    await batches.flush();
    expect(written).toEqual([[1, 2]]);
    await batches.flush();
    expect(written).toHaveLength(1);
  });

  it('when a write fails, then its rows stay, ahead of newer ones, for the next flush', async () => {
    const written: number[][] = [];
    let fail = true;
    const { batches, errors } = writer(async (batch) => {
      if (fail) throw new Error('store down');
      written.push(batch);
    });
    batches.add(1);
    await batches.flush();
    expect(errors).toHaveLength(1);
    fail = false;
    batches.add(2);
    await batches.flush();
    expect(written).toEqual([[1, 2]]);
  });

  it('when flushes overlap, then they share one write and none is lost', async () => {
    const written: number[][] = [];
    const { batches } = writer(async (batch) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      written.push(batch);
    });
    batches.add(1);
    const first = batches.flush();
    batches.add(2);
    await Promise.all([first, batches.flush()]);
    expect(written).toEqual([[1], [2]]);
  });

  it('when the buffer is over its cap, then the oldest rows are dropped and reported', () => {
    const { batches, errors } = writer(async () => undefined, 2);
    for (const n of [1, 2, 3]) batches.add(n);
    expect(batches.pending).toBe(2);
    expect(String(errors[0])).toContain('dropped the 1 oldest numbers');
  });

  it('when stopped, then what is buffered is written', async () => {
    const written: number[][] = [];
    const { batches } = writer(async (batch) => void written.push(batch));
    batches.start();
    batches.add(7);
    await batches.stop();
    expect(written).toEqual([[7]]);
  });
});

describe('SearchRecorder', () => {
  it('when a search is recorded, then it is buffered with an id and written on flush, numbers made whole', async () => {
    const inserted: Array<Record<string, unknown>> = [];
    const recorder = new SearchRecorder({ records: { insertMany: async (rows) => void inserted.push(...rows) }, flushMs: 60_000, onError: () => undefined });
    recorder.record({
      userId: 'u', keyId: 'k', query: 'x'.repeat(600), searchMode: 'natural', databases: ['db'], tables: ['t'], resultCount: 3,
      responseTimeMs: 12.6, status: 'ok', unindexedTables: [{ databaseId: 'db', table: 't' }], createdAt: new Date(0),
    });
    expect(inserted).toEqual([]);
    await recorder.flush();
    expect(inserted[0]).toMatchObject({ id: expect.stringMatching(/^srch_[A-Za-z0-9]{22}$/), responseTimeMs: 13, unindexedTables: [{ databaseId: 'db', table: 't' }] });
    expect((inserted[0]!.query as string).length).toBe(500);
  });

  it('when the store refuses a batch and takes it on the next flush, then each search keeps the id it was first written with', async () => {
    const attempts: string[][] = [];
    let down = true;
    const recorder = new SearchRecorder({
      records: {
        insertMany: async (rows) => {
          attempts.push(rows.map((row) => row.id));
          if (down) throw new Error('store down');
        },
      },
      flushMs: 60_000,
      onError: () => undefined,
    });
    const search: Omit<SearchRecordInput, 'query'> = { userId: 'u', keyId: 'k', searchMode: 'natural', databases: ['db'], tables: ['t'], resultCount: 1, responseTimeMs: 1, status: 'ok', unindexedTables: null, createdAt: new Date(0) };
    recorder.record({ ...search, query: 'first' });
    recorder.record({ ...search, query: 'second' });
    await recorder.flush();
    down = false;
    await recorder.flush();
    const [failed, , , written] = attempts;
    expect(failed).toHaveLength(2);
    expect(new Set(failed).size).toBe(2);
    expect(written).toEqual(failed);
  });
});

describe('BatchWriter with a row the store refuses', () => {
  it('when one row of a batch is rejected while the store is up, then the others are written and that row is dropped and reported', async () => {
    const written: string[] = [];
    const errors: unknown[] = [];
    const writer = new BatchWriter<string>({
      label: 'test rows',
      flushMs: 60_000,
      onError: (error) => errors.push(error),
      write: async (batch) => {
        if (batch.includes('bad\u0000')) throw new Error('unrecognized token');
        written.push(...batch);
      },
    });
    writer.add('a');
    writer.add('bad\u0000');
    writer.add('b');
    await writer.flush();
    expect(written).toEqual(['a', 'b']);
    expect(writer.pending).toBe(0);
    expect(String(errors[0])).toContain('dropped 1 test rows');
    writer.add('c');
    await writer.flush();
    expect(written).toEqual(['a', 'b', 'c']);
  });

  it('when every row fails (store down), then all are kept for the next flush, in order', async () => {
    let down = true;
    const written: string[] = [];
    const writer = new BatchWriter<string>({
      label: 'test rows',
      flushMs: 60_000,
      onError: () => {},
      write: async (batch) => {
        if (down) throw new Error('connection refused');
        written.push(...batch);
      },
    });
    writer.add('a');
    writer.add('b');
    await writer.flush();
    expect(writer.pending).toBe(2);
    writer.add('c');
    down = false;
    await writer.flush();
    expect(written).toEqual(['a', 'b', 'c']);
  });
});
