import { describe, expect, it } from 'vitest';
import { BatchWriter } from '../../../src/lib/batch-writer.js';
import { SearchRecorder, type SearchRecordInput } from '../../../src/services/search/search-recorder.js';

/** A writer on a clock the test moves (retry waits), refusing rows for good only when told so. */
const writer = (write: (batch: number[]) => Promise<void>, options: { maxBuffered?: number; isRejected?: (error: unknown) => boolean } = {}) => {
  const errors: unknown[] = [];
  const clock = { now: 0 };
  const batches = new BatchWriter<number>({ write, flushMs: 1000, onError: (e) => errors.push(e), label: 'numbers', now: () => clock.now, ...options });
  return { batches, errors, clock };
};

/** A failure of the store that passes (down, out of connections): anything the writer is not told is a refusal. */
const down = () => Object.assign(new Error('sorry, too many clients already'), { code: '53300' });
const refused = (error: unknown) => /^23/.test((error as { code?: string }).code ?? '');

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

  it('when a write fails, then its rows stay, ahead of newer ones, for the next attempt once its wait is over', async () => {
    const written: number[][] = [];
    let fail = true;
    const { batches, errors, clock } = writer(async (batch) => {
      if (fail) throw down();
      written.push(batch);
    });
    batches.add(1);
    await batches.flush();
    expect(errors).toHaveLength(1);
    fail = false;
    batches.add(2);
    await batches.flush(); // within the wait: nothing is tried
    expect(written).toEqual([]);
    clock.now += 1000;
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

  it('when the buffer is over its cap, then the oldest rows are dropped, counted and reported', () => {
    const { batches, errors } = writer(async () => undefined, { maxBuffered: 2 });
    for (const n of [1, 2, 3]) batches.add(n);
    expect(batches.pending).toBe(2);
    expect(batches.stats().overflowed).toBe(1);
    expect(String(errors[0])).toContain('dropped the 1 oldest numbers');
  });

  it('when stopped, then what is buffered is written, even while a retry wait runs', async () => {
    const written: number[][] = [];
    let fail = true;
    const { batches } = writer(async (batch) => {
      if (fail) throw down();
      written.push(batch);
    });
    batches.start();
    batches.add(7);
    await batches.flush();
    fail = false;
    await batches.stop();
    expect(written).toEqual([[7]]);
  });
});

describe('BatchWriter while the store fails', () => {
  it('when 500 rows meet a store that is down, then each flush makes one attempt, the waits double up to the cap, and nothing is dropped', async () => {
    let attempts = 0;
    let up = false;
    const written: number[] = [];
    const { batches, clock } = writer(async (batch) => {
      attempts += 1;
      if (!up) throw down();
      written.push(...batch);
    }, { isRejected: refused });
    for (let i = 0; i < 500; i += 1) batches.add(i);
    await batches.flush();
    expect(attempts).toBe(1);
    const waits: number[] = [];
    for (let round = 0; round < 7; round += 1) {
      const before = attempts;
      let waited = 0;
      while (attempts === before) {
        clock.now += 500;
        waited += 500;
        await batches.flush();
      }
      waits.push(waited);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(attempts).toBe(8);
    up = true;
    clock.now += 30_000;
    await batches.flush();
    expect(written).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(batches.stats()).toEqual({ pending: 0, rejected: 0, overflowed: 0, failures: 0 });
  });

  it('when part of the store\'s connections are refused (too many clients) batch after batch, then no row is dropped and every row is written once', async () => {
    let calls = 0;
    const written: number[] = [];
    const { batches, clock } = writer(async (batch) => {
      calls += 1;
      if (calls % 3 !== 0) throw down(); // two of every three attempts find no free connection
      written.push(...batch);
    }, { isRejected: refused });
    for (let i = 0; i < 300; i += 1) {
      batches.add(i);
      if (i % 50 === 49) {
        clock.now += 60_000;
        await batches.flush();
      }
    }
    while (batches.pending > 0) {
      clock.now += 60_000;
      await batches.flush();
    }
    expect(written).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(batches.stats().rejected).toBe(0);
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
    let now = 0;
    const recorder = new SearchRecorder({
      records: {
        insertMany: async (rows) => {
          attempts.push(rows.map((row) => row.id));
          if (down) throw new Error('store down');
        },
      },
      flushMs: 60_000,
      onError: () => undefined,
      now: () => now,
    });
    const search: Omit<SearchRecordInput, 'query'> = { userId: 'u', keyId: 'k', searchMode: 'natural', databases: ['db'], tables: ['t'], resultCount: 1, responseTimeMs: 1, status: 'ok', unindexedTables: null, createdAt: new Date(0) };
    recorder.record({ ...search, query: 'first' });
    recorder.record({ ...search, query: 'second' });
    await recorder.flush();
    down = false;
    now += 60_000;
    await recorder.flush();
    const [failed, written] = attempts;
    expect(failed).toHaveLength(2);
    expect(new Set(failed).size).toBe(2);
    expect(written).toEqual(failed);
  });
});

describe('BatchWriter with a row the store refuses', () => {
  it('when one row of 64 violates a constraint while the store is up, then the 63 others go in, that row is dropped and counted, in a few attempts', async () => {
    const written: number[] = [];
    let attempts = 0;
    const { batches, errors } = writer(async (batch) => {
      attempts += 1;
      if (batch.includes(41)) throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
      written.push(...batch);
    }, { isRejected: refused });
    for (let i = 0; i < 64; i += 1) batches.add(i);
    await batches.flush();
    expect(written).toEqual(Array.from({ length: 64 }, (_, i) => i).filter((i) => i !== 41));
    expect(batches.stats()).toMatchObject({ pending: 0, rejected: 1 });
    expect(attempts).toBeLessThanOrEqual(2 * 6 + 1); // halving: log2(64) levels, two writes each
    expect(String(errors[0])).toContain('dropped 1 of the numbers');
    batches.add(64);
    await batches.flush();
    expect(written.at(-1)).toBe(64);
  });

  it('when the store goes down while a refused batch is being split, then the rows not written yet are kept, none dropped', async () => {
    let splitting = 0;
    const written: number[] = [];
    let up = true;
    const { batches, clock } = writer(async (batch) => {
      if (!up) throw down();
      if (batch.includes(3)) {
        splitting += 1;
        if (splitting === 2) up = false; // down from the second attempt on
        throw Object.assign(new Error('violates check constraint'), { code: '23514' });
      }
      written.push(...batch);
    }, { isRejected: refused });
    for (let i = 0; i < 8; i += 1) batches.add(i);
    await batches.flush();
    expect(batches.stats().rejected).toBe(0);
    expect(batches.pending + written.length).toBe(8);
    up = true;
    clock.now += 60_000;
    await batches.flush();
    expect(written.sort((a, b) => a - b)).toEqual([0, 1, 2, 4, 5, 6, 7]);
    expect(batches.stats()).toMatchObject({ pending: 0, rejected: 1 });
  });
});
