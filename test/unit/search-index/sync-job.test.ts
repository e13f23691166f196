/**
 * One table's sync into the index, against Quarry's real store (the job's progress) and a real SQLite source read
 * through the project's executor: rows inserted, changed and deleted at the source are found, found changed or gone
 * after the next sync; unchanged rows are skipped; a plan's row limit truncates; a stopped sync resumes from its
 * cursor; semantic syncs embed only new text and reuse vectors by text hash.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PooledExecutor, SqlExecutor, TableSchema } from '../../../src/connectors/index.js';
import { indexJobRepository as jobs, type IndexJobRecord } from '../../../src/repositories/index-job-repository.js';
import { rowId } from '../../../src/search-index/documents.js';
import type { IndexSpace } from '../../../src/search-index/index-store.js';
import { runSyncJob, type SyncDeps, type SyncOutcome } from '../../../src/search-index/sync-job.js';
import { docsTable, FakeProvider, onSource, openStore, queueJob, rowText, SLOW, sourceExecutor, sourceTable, vectorOf, type TestStore } from './support.js';

const SRC = 'itb_docs';

let store: TestStore;
let source: PooledExecutor;
let space: IndexSpace;

beforeEach(async () => {
  store = await openStore();
  source = await sourceTable(store.dir, 20);
  space = await store.index.ensureSpace(store.space);
});
afterEach(async () => {
  await source?.close();
  await store?.close();
});

interface SyncOptions {
  rowLimit?: number;
  provider?: FakeProvider | null;
  src?: string;
  table?: TableSchema;
  executor?: SqlExecutor;
  deps?: Partial<SyncDeps>;
  signal?: AbortSignal;
  /** A job already queued (resumed): claimed and run instead of a new one. */
  job?: IndexJobRecord;
}

/** Claims a (new) job and runs one sync of it to its outcome. */
async function sync(options: SyncOptions = {}): Promise<{ outcome: SyncOutcome; job: IndexJobRecord }> {
  const provider = options.provider ?? null;
  const queued = options.job ?? await queueJob(store, {
    rowLimit: options.rowLimit ?? 1000, semantic: provider !== null, providerId: provider?.id ?? null,
  });
  const claimed = await jobs.claimNext(new Date(), new Date(Date.now() - 60_000), []);
  expect(claimed?.id).toBe(queued.id);
  const outcome = await runSyncJob(
    { jobs, now: Date.now, pageRows: 7, embedPageRows: 4, queryTimeoutMs: 5000, optimizeEveryRows: 1_000_000, writeRows: 7, ...options.deps },
    {
      job: claimed!, executor: options.executor ?? source, table: options.table ?? docsTable, src: options.src ?? SRC, space,
      provider, columns: [], signal: options.signal ?? new AbortController().signal,
    },
  );
  return { outcome, job: (await jobs.findById(queued.id))! };
}

const rid = (id: number, src = SRC) => rowId(src, JSON.stringify({ id }));
const found = async (words: string) => (await space.searchText({ words }, { srcs: [SRC] }, 50)).map((h) => h.rid);

describe('a text sync', () => {
  it('when a table is synced, then every row is in the index, searchable, and the job is done with its counters', async () => {
    const { outcome, job } = await sync();
    expect(outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(job).toMatchObject({
      status: 'done', rowsDone: 20, rowsTotal: 20, rowsWritten: 20, rowsSkipped: 0, rowsEmbedded: 0, rowsDeleted: 0,
      truncated: false, cursor: '[20]', heartbeatAt: null,
    });
    expect(job.finishedAt).toBeInstanceOf(Date);
    expect(await space.countRows(SRC)).toBe(20);
    expect(await found('title 7')).toContain(rid(7));
    const [stored] = await space.rows([rid(7)]);
    expect(JSON.parse(stored!.fields)).toEqual({ id: 7, title: 'title 7', body: 'body of row 7', views: 0 });
  }, SLOW);

  it('when nothing changed, then the next sync writes nothing and skips every row', async () => {
    await sync();
    const { job } = await sync();
    expect(job).toMatchObject({ status: 'done', rowsDone: 20, rowsWritten: 0, rowsSkipped: 20, rowsDeleted: 0 });
  }, SLOW);

  it('when rows are inserted, changed and deleted at the source, then after the next sync they are found, found changed, or gone', async () => {
    await sync();
    await onSource(store.dir, [
      "INSERT INTO docs (id, title, body, views) VALUES (21, 'zebra crossing', 'stripes on the road', 0)",
      "UPDATE docs SET body = 'giraffes eat acacia leaves' WHERE id = 7",
      'UPDATE docs SET views = 99 WHERE id = 8',
      'DELETE FROM docs WHERE id = 12',
    ]);
    expect(await found('zebra')).toEqual([]);
    const { outcome, job } = await sync();
    expect(outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(job).toMatchObject({ rowsDone: 20, rowsWritten: 3, rowsSkipped: 17, rowsDeleted: 1 });
    expect(await found('zebra')).toEqual([rid(21)]);
    expect(await found('giraffes')).toEqual([rid(7)]);
    expect(await found('body')).not.toContain(rid(7));
    expect(await found('body')).toContain(rid(6));
    expect(JSON.parse((await space.rows([rid(8)]))[0]!.fields).views).toBe(99);
    expect(await space.rows([rid(12)])).toEqual([]);
    expect(await found('title 12')).not.toContain(rid(12));
  }, SLOW);

  it('when the table has more rows than the row limit, then the first rows by key are indexed and the job says truncated', async () => {
    const { outcome, job } = await sync({ rowLimit: 12 });
    expect(outcome).toEqual({ status: 'done', rows: 12, truncated: true });
    expect(job).toMatchObject({ rowsDone: 12, rowsTotal: 12, truncated: true, cursor: '[12]' });
    expect(await space.rows([rid(12), rid(13)])).toHaveLength(1);
  }, SLOW);

  it('when the limit equals the table, then nothing is truncated', async () => {
    expect((await sync({ rowLimit: 20 })).outcome).toEqual({ status: 'done', rows: 20, truncated: false });
  }, SLOW);

  it('when the row limit drops below what the index holds, then rows past it leave the index', async () => {
    await sync();
    const { outcome, job } = await sync({ rowLimit: 5 });
    expect(outcome).toEqual({ status: 'done', rows: 5, truncated: true });
    expect(job).toMatchObject({ rowsDone: 5, rowsDeleted: 15, rowsSkipped: 5 });
    expect((await space.rows([rid(5), rid(6), rid(20)])).map((r) => r.pk)).toEqual(['{"id":5}']);
  }, SLOW);

  it('when a sync is stopped between pages, then the rows it read are written, their cursor kept, and the resumed job reads on after it', async () => {
    const abort = new AbortController();
    const stopped = await sync({
      signal: abort.signal,
      deps: { jobs: { ...jobs, progress: async (id, changes) => {
        const saved = await jobs.progress(id, changes);
        if (changes.cursor) abort.abort();
        return saved;
      } } },
    });
    expect(stopped.outcome).toEqual({ status: 'stopped' });
    // Stopped as its first write saved its cursor, while the second page was read: that page is written too.
    expect(stopped.job).toMatchObject({ status: 'running', rowsDone: 14, rowsWritten: 14, cursor: '[14]' });
    await jobs.release([stopped.job.id]);

    const reads: unknown[][] = [];
    const spy: SqlExecutor = { ...source, engine: 'sqlite', quoteIdent: source.quoteIdent, placeholder: source.placeholder,
      query: (sql, params, options) => {
        if (/ORDER BY/.test(sql)) reads.push(params);
        return source.query(sql, params, options);
      } };
    const resumed = await sync({ job: stopped.job, executor: spy });
    expect(resumed.outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(reads[0]).toEqual([14]);
    expect(resumed.job).toMatchObject({ status: 'done', rowsDone: 20, rowsWritten: 20, rowsSkipped: 0 });
  }, SLOW);

  it("when a table's first sync runs, then it writes several pages at a time and folds its rows into the index once, at its end", async () => {
    const calls: string[] = [];
    for (const name of ['append', 'upsert', 'optimize'] as const) {
      const original = space[name].bind(space) as (...args: unknown[]) => Promise<unknown>;
      (space as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        calls.push(name === 'optimize' ? name : `${name} ${(args[0] as unknown[]).length}`);
        return original(...args);
      };
    }
    const { outcome, job } = await sync({ deps: { writeRows: 14, optimizeEveryRows: 7 } });
    expect(outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(job).toMatchObject({ rowsDone: 20, rowsWritten: 20, cursor: '[20]' });
    // Pages of 7 rows: two pages in one append, the last page in another; one fold after the last write.
    expect(calls).toEqual(['append 14', 'append 6', 'optimize']);
    expect(await found('title 7')).toContain(rid(7));

    // A later sync of the table, searched while it runs, folds what it rewrote every `optimizeEveryRows` rows.
    await onSource(store.dir, ['UPDATE docs SET views = views + 1']);
    calls.length = 0;
    await sync({ deps: { writeRows: 14, optimizeEveryRows: 7 } });
    expect(calls).toEqual(['upsert 14', 'optimize', 'upsert 6', 'optimize']);
  }, SLOW);

  it('when rows are written, then the next page is read meanwhile, and each write saves the cursor of its own rows once they are in the index', async () => {
    const events: string[] = [];
    const append = space.append.bind(space);
    space.append = async (rows) => {
      events.push(`append ${rows.length} starts`);
      // A slow write: the next page's read comes while it runs.
      await new Promise((resolve) => setTimeout(resolve, 150));
      await append(rows);
      events.push(`append ${rows.length} ends`);
    };
    const reading: SqlExecutor = { ...source, engine: 'sqlite', quoteIdent: source.quoteIdent, placeholder: source.placeholder,
      query: (sql, params, options) => {
        if (/ORDER BY/.test(sql)) events.push(`read after ${JSON.stringify(params?.[0] ?? null)}`);
        return source.query(sql, params, options);
      } };
    const saved: string[] = [];
    const progress = async (id: string, changes: Parameters<typeof jobs.progress>[1]) => {
      if (changes.cursor) saved.push(`${changes.cursor} with ${await space.countRows(SRC)} rows in the index`);
      return jobs.progress(id, changes);
    };
    const { outcome } = await sync({ executor: reading, deps: { writeRows: 7, jobs: { ...jobs, progress } } });
    expect(outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    const firstWrite = events.slice(events.indexOf('append 7 starts'), events.indexOf('append 7 ends'));
    expect(firstWrite.filter((e) => e.startsWith('read after')).length).toBeGreaterThan(0);
    expect(saved).toEqual(['[7] with 7 rows in the index', '[14] with 14 rows in the index', '[20] with 20 rows in the index']);
  }, SLOW);

  it('when a sync stops with rows read but not written yet, then its saved cursor covers only the rows in the index and the resumed job writes every row once', async () => {
    const abort = new AbortController();
    // The third page's read stops the job: it has written the first two pages (one write), holds the third.
    const stopping: SqlExecutor = { ...source, engine: 'sqlite', quoteIdent: source.quoteIdent, placeholder: source.placeholder,
      query: (sql, params, options) => {
        if (/ORDER BY/.test(sql) && params?.[0] === 14) abort.abort();
        return source.query(sql, params, options);
      } };
    const stopped = await sync({ signal: abort.signal, executor: stopping, deps: { writeRows: 14 } });
    expect(stopped.outcome).toEqual({ status: 'stopped' });
    expect(stopped.job).toMatchObject({ status: 'running', rowsDone: 14, rowsWritten: 14, cursor: '[14]' });
    expect(await space.countRows(SRC)).toBe(14);
    await jobs.release([stopped.job.id]);

    const resumed = await sync({ job: stopped.job, deps: { writeRows: 14 } });
    expect(resumed.outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(resumed.job).toMatchObject({ status: 'done', rowsDone: 20, rowsWritten: 20 });
    expect(await space.countRows(SRC)).toBe(20);
    expect(await space.rows(Array.from({ length: 20 }, (_, i) => rid(i + 1)))).toHaveLength(20);
  }, SLOW);

  it('when a process dies after a write but before its progress is saved, then the resumed job rewrites those rows without a copy', async () => {
    let saves = 0;
    const dying = { ...jobs, progress: async (id: string, changes: Parameters<typeof jobs.progress>[1]) => {
      if (changes.cursor && ++saves === 2) throw new Error('the process died');
      return jobs.progress(id, changes);
    } };
    await expect(sync({ deps: { jobs: dying, writeRows: 7 } })).rejects.toThrow('the process died');
    const left = (await jobs.latest(store.connection.id, 'docs'))!;
    expect(left).toMatchObject({ cursor: '[7]', rowsWritten: 7 });
    expect(await space.countRows(SRC)).toBe(14);
    await jobs.release([left.id]);

    const resumed = await sync({ job: left, deps: { writeRows: 7 } });
    expect(resumed.outcome).toEqual({ status: 'done', rows: 20, truncated: false });
    expect(await space.countRows(SRC)).toBe(20);
  }, SLOW);

  it('when the job was cancelled in the store, then the sync ends cancelled without writing', async () => {
    const job = await queueJob(store);
    await jobs.claimNext(new Date(), new Date(Date.now() - 60_000), []);
    await jobs.cancel(job.id, new Date());
    const outcome = await runSyncJob(
      { jobs, now: Date.now, pageRows: 7, embedPageRows: 4, queryTimeoutMs: 5000, optimizeEveryRows: 1_000_000, writeRows: 7 },
      { job: (await jobs.findById(job.id))!, executor: source, table: docsTable, src: SRC, space, provider: null, columns: [], signal: new AbortController().signal },
    );
    expect(outcome).toEqual({ status: 'cancelled' });
    expect(await space.countRows(SRC)).toBe(0);
  }, SLOW);

  it('when a table has a composite key, then it is paged and checked for deleted rows by both columns', async () => {
    await onSource(store.dir, [
      'CREATE TABLE lines (order_id INTEGER, line INTEGER, note TEXT, PRIMARY KEY (order_id, line))',
      ...[1, 2, 3].flatMap((order) => [1, 2, 3].map((line) => `INSERT INTO lines VALUES (${order}, ${line}, 'note ${order}-${line}')`)),
    ]);
    const lines: TableSchema = {
      name: 'lines', schema: null, primaryKey: ['order_id', 'line'], rowEstimate: 0, textColumns: ['note'], fullTextIndexes: [],
      columns: [{ name: 'order_id', type: 'INTEGER', searchable: false }, { name: 'line', type: 'INTEGER', searchable: false }, { name: 'note', type: 'TEXT', searchable: true }],
    };
    const executor = await sourceExecutor(store.dir);
    try {
      const first = await sync({ table: lines, src: 'itb_lines', executor, deps: { pageRows: 2 } });
      expect(first.job).toMatchObject({ rowsDone: 9, rowsWritten: 9, cursor: '[3,3]' });
      await onSource(store.dir, ['DELETE FROM lines WHERE order_id = 2 AND line = 3']);
      const second = await sync({ table: lines, src: 'itb_lines', executor, deps: { pageRows: 2 } });
      expect(second.job).toMatchObject({ rowsDone: 8, rowsSkipped: 8, rowsDeleted: 1 });
      const pks = [];
      for await (const batch of space.scanSource('itb_lines')) pks.push(...batch.map((r) => r.pk));
      expect(pks).toHaveLength(8);
      expect(pks).not.toContain('{"order_id":2,"line":3}');
      expect(pks).toContain('{"order_id":2,"line":2}');
    } finally {
      await executor.close();
    }
  }, SLOW);
});

describe('rows the index cannot hold', () => {
  it('when a table has a row whose key is too long to index, then a row deleted at the source still leaves the index', async () => {
    await onSource(store.dir, [
      'CREATE TABLE pages (url TEXT PRIMARY KEY, body TEXT)',
      `INSERT INTO pages VALUES ('https://example.com/${'x'.repeat(600)}', 'an endless page'), ('https://example.com/a', 'first page'), ('https://example.com/b', 'second page')`,
    ]);
    const pages: TableSchema = {
      name: 'pages', schema: null, primaryKey: ['url'], rowEstimate: 0, textColumns: ['body'], fullTextIndexes: [],
      columns: [{ name: 'url', type: 'TEXT', searchable: true }, { name: 'body', type: 'TEXT', searchable: true }],
    };
    const executor = await sourceExecutor(store.dir);
    try {
      const first = await sync({ table: pages, src: 'itb_pages', executor });
      expect(first.job).toMatchObject({ rowsDone: 3, rowsWritten: 2 });
      expect(await space.countRows('itb_pages')).toBe(2);
      await onSource(store.dir, ["DELETE FROM pages WHERE url = 'https://example.com/b'"]);
      const second = await sync({ table: pages, src: 'itb_pages', executor });
      expect(second.job).toMatchObject({ rowsDone: 2, rowsDeleted: 1 });
      expect(await space.countRows('itb_pages')).toBe(1);
    } finally {
      await executor.close();
    }
  }, SLOW);
});

describe('rows too large to read', () => {
  const bombs: TableSchema = {
    name: 'bombs', schema: null, primaryKey: ['id'], rowEstimate: 0, textColumns: ['seed', 'big'], fullTextIndexes: [],
    columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'seed', type: 'TEXT', searchable: true }, { name: 'big', type: 'TEXT', searchable: true }],
  };

  it('when some rows hold a value SQLite may not build, then the page is read row by row, only those rows are skipped and counted', async () => {
    // Rows 3, 4 and 9 compute a 150 MB value; the others a short one. Before values were bounded, one page read them all.
    await onSource(store.dir, [
      "CREATE TABLE bombs (id INTEGER PRIMARY KEY, seed TEXT, big TEXT GENERATED ALWAYS AS (CASE WHEN id IN (3, 4, 9) THEN hex(zeroblob(150000000)) ELSE 'small ' || seed END) VIRTUAL)",
      ...Array.from({ length: 12 }, (_, i) => `INSERT INTO bombs (id, seed) VALUES (${i + 1}, 'seed${i + 1}')`),
    ]);
    const executor = await sourceExecutor(store.dir);
    try {
      const { outcome, job } = await sync({ table: bombs, src: 'itb_bombs', executor, deps: { pageRows: 5 } });
      expect(outcome).toMatchObject({ status: 'done', rows: 9 });
      expect(job).toMatchObject({ status: 'done', rowsDone: 12, rowsWritten: 9, rowsOversize: 3, cursor: '[12]' });
      const stored = (await space.rows([rowId('itb_bombs', '{"id":5}')]))[0]!;
      expect(JSON.parse(stored.fields)).toEqual({ id: 5, seed: 'seed5', big: 'small seed5' });
    } finally {
      await executor.close();
    }
  }, SLOW);

  // 35 MB of text: more than SQLite may build for Quarry (32 MiB), so the row cannot even be cut.
  it('when a row grows too large after it was indexed, then its old copy leaves the index and it is counted', async () => {
    await onSource(store.dir, ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)', "INSERT INTO notes VALUES (1, 'first'), (2, 'second')"]);
    const notes: TableSchema = {
      name: 'notes', schema: null, primaryKey: ['id'], rowEstimate: 0, textColumns: ['body'], fullTextIndexes: [],
      columns: [{ name: 'id', type: 'INTEGER', searchable: false }, { name: 'body', type: 'TEXT', searchable: true }],
    };
    const executor = await sourceExecutor(store.dir);
    try {
      await sync({ table: notes, src: 'itb_notes', executor });
      expect(await space.countRows('itb_notes')).toBe(2);
      await onSource(store.dir, ['UPDATE notes SET body = (SELECT group_concat(x, \' \') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 7000000) SELECT \'word\' AS x FROM n)) WHERE id = 2']);
      const { job } = await sync({ table: notes, src: 'itb_notes', executor });
      expect(job).toMatchObject({ status: 'done', rowsDone: 2, rowsOversize: 1 });
      expect(await space.countRows('itb_notes')).toBe(1);
    } finally {
      await executor.close();
    }
  }, SLOW);
});

describe('a semantic sync', () => {
  it('when a table is synced with embeddings, then every row with text gets its vector and is found by it', async () => {
    const provider = new FakeProvider();
    await onSource(store.dir, ["INSERT INTO docs (id, title, body, views) VALUES (21, NULL, '', 0)"]);
    const { job } = await sync({ provider });
    expect(job).toMatchObject({ status: 'done', rowsDone: 21, rowsWritten: 21, rowsEmbedded: 20 });
    expect([...provider.embedded].sort()).toEqual(Array.from({ length: 20 }, (_, i) => rowText(i + 1)).sort());
    const hits = await space.searchVector(vectorOf(rowText(7)), { srcs: [SRC] }, 3, 0.2);
    expect(hits[0]).toMatchObject({ rid: rid(7), src: SRC });
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect((await space.existing([rid(21)])).get(rid(21))!.vmodel).toBeNull();
  }, SLOW);

  it('when nothing changed, then nothing is embedded; a changed text is embedded again and a changed count reuses its vector', async () => {
    await sync({ provider: new FakeProvider() });
    const again = new FakeProvider();
    expect((await sync({ provider: again })).job).toMatchObject({ rowsWritten: 0, rowsEmbedded: 0, rowsSkipped: 20 });
    expect(again.embedded).toEqual([]);

    await onSource(store.dir, ["UPDATE docs SET body = 'a new body' WHERE id = 7", 'UPDATE docs SET views = 5 WHERE id = 3', 'DELETE FROM docs WHERE id = 11']);
    const changed = new FakeProvider();
    expect((await sync({ provider: changed })).job).toMatchObject({ rowsDone: 19, rowsWritten: 2, rowsEmbedded: 1, rowsSkipped: 17, rowsDeleted: 1 });
    expect(changed.embedded).toEqual(['title 7\na new body']);
    expect((await space.searchVector(vectorOf(rowText(3)), { srcs: [SRC] }, 1, 0.2))[0]!.rid).toBe(rid(3));
    expect((await space.searchVector(vectorOf('title 7\na new body'), { srcs: [SRC] }, 1, 0.2))[0]!.rid).toBe(rid(7));
  }, SLOW);

  it('when another table holds the same texts, then their vectors are reused, not embedded again', async () => {
    await sync({ provider: new FakeProvider() });
    const copy = new FakeProvider();
    const { job } = await sync({ provider: copy, src: 'itb_copy' });
    expect(job).toMatchObject({ rowsWritten: 20, rowsEmbedded: 0 });
    expect(copy.embedded).toEqual([]);
    expect(await space.searchVector(vectorOf(rowText(4)), { srcs: ['itb_copy'] }, 1, 0.2)).toEqual([{ rid: rid(4, 'itb_copy'), src: 'itb_copy', score: expect.closeTo(1, 5) }]);
  }, SLOW);

  it('when a text-only table turns semantic, or the model changes, then every row is embedded with the new model', async () => {
    await sync();
    const first = new FakeProvider('fake:model-a');
    expect((await sync({ provider: first })).job).toMatchObject({ rowsWritten: 20, rowsEmbedded: 20, rowsSkipped: 0 });
    const next = new FakeProvider('fake:model-b');
    expect((await sync({ provider: next })).job).toMatchObject({ rowsWritten: 20, rowsEmbedded: 20, rowsSkipped: 0 });
    expect((await space.existing([rid(1)])).get(rid(1))!.vmodel).toBe('fake:model-b');
  }, SLOW);
});
