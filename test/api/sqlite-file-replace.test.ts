/**
 * An uploaded SQLite file replaced while its connection is being synced into the search index (uploadSqliteFile over
 * a connected file): whatever point the sync had reached, it must not finish on the old file's rows, and once the
 * table says ready the index holds exactly the new file's rows. Each point of the sync is reached without sleeping:
 * the store call the runner makes there is held until the replacement has been answered.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { indexJobRepository } from '../../src/repositories/index-job-repository.js';
import { indexTableRepository } from '../../src/repositories/index-table-repository.js';
import { spaceName } from '../../src/search-index/index-store.js';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { liftKeyLimits } from '../support/hostile.js';
import { waitForIndex } from '../support/indexing.js';
import { grantPlan } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
const scratch = mkdtempSync(join(tmpdir(), 'quarry-sqlite-replace-'));

/**
 * The old file: 25,000 rows about basalt, more than one write of a first sync (20,000 rows, five pages), so the sync
 * saves its progress once before its end; a pro account, whose index takes that many rows of a table.
 */
const OLD_ROWS = 25_000;
/** Rows a first sync holds before it writes them (the job runner's default), and the progress it then saves. */
const FIRST_WRITE_ROWS = 20_000;
/** The new file: 500 rows about marble, keyed 20, 40, … 10,000: every key is also an old key, with other text. */
const NEW_ROWS = 500;
const newBody = (id: number) => `marble slab ${id}`;

async function fileBytes(statements: string[]): Promise<Buffer> {
  return readFileSync(await onSqlite(scratch, `${randomBytes(6).toString('hex')}.db`, statements));
}
const oldFile = () => fileBytes([
  'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
  `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${OLD_ROWS}) INSERT INTO notes SELECT i, 'basalt block ' || i FROM n`,
]);
const newFile = () => fileBytes([
  'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
  `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${NEW_ROWS}) INSERT INTO notes SELECT i * 20, 'marble slab ' || (i * 20) FROM n`,
]);

interface Tenant { user: TestUser; key: TestKey; file: string; databaseId?: string }

async function tenant(): Promise<Tenant> {
  const user = await registerUser(t.client);
  await grantPlan(t, user, 'pro');
  const key = await createKey(t.client, user);
  await liftKeyLimits(key.id);
  return { user, key, file: `stones-${randomBytes(3).toString('hex')}.db` };
}
const upload = (who: Tenant, bytes: Buffer) =>
  t.client.request('PUT', `/api/v1/sqlite-files/${who.file}`, undefined, { token: who.user.token, raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
async function connect(who: Tenant): Promise<string> {
  const res = await t.client.post('/api/v1/databases', { name: 'Stones', engine: 'sqlite', database: who.file, environment: 'test' }, { token: who.user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  who.databaseId = res.body.data.database.id as string;
  return who.databaseId;
}

/**
 * A store call of the runner, held at its first call that `when` picks until `release()`; `reached` gives the job it
 * was made for (undefined for a claim).
 */
function holdAt<K extends 'claimNext' | 'progress' | 'finish'>(method: K, when: (...args: Parameters<typeof indexJobRepository[K]>) => boolean) {
  const original = indexJobRepository[method].bind(indexJobRepository) as (...args: unknown[]) => Promise<unknown>;
  let reach!: (jobId: string | undefined) => void;
  let release!: () => void;
  const reached = new Promise<string | undefined>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  vi.spyOn(indexJobRepository, method).mockImplementation((async (...args: unknown[]) => {
    if (!held && (when as (...a: unknown[]) => boolean)(...args)) {
      held = true;
      reach(typeof args[0] === 'string' ? args[0] : undefined);
      await released;
    }
    return original(...args);
  }) as never);
  return { reached, release };
}

/**
 * Replaces the tenant's file while a runner call is held: the call is let go once the replacement has cancelled the
 * job in the store (a sync learns it at its next store call, as here) or has been answered, whichever comes first.
 */
async function replaceWhileHeld(who: Tenant, hold: ReturnType<typeof holdAt>): Promise<void> {
  const jobId = await hold.reached;
  const replacing = upload(who, await newFile());
  const cancelled = (async () => {
    while ((await indexJobRepository.findById(jobId!))?.status !== 'cancelled') await new Promise((resolve) => setTimeout(resolve, 20));
  })();
  await Promise.race([replacing, cancelled]);
  hold.release();
  const res = await replacing;
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data).toMatchObject({ replaced: true });
}

/** The index rows of the tenant's `notes` table, read from the index itself: id → body. */
async function indexedNotes(who: Tenant): Promise<Map<number, string>> {
  const space = await t.server.services.searchIndex.store.space(spaceName(who.user.id, 'test'));
  const table = await indexTableRepository.find(who.databaseId!, 'notes');
  const found = new Map<number, string>();
  if (!space || !table) return found;
  for await (const batch of space.scanSource(table.id)) {
    for (const row of await space.rows(batch.map((r) => r.rid))) {
      const { id } = JSON.parse(row.pk) as { id: number };
      expect(found.has(id), `row ${id} is in the index twice`).toBe(false);
      found.set(id, (JSON.parse(row.fields) as { body: string }).body);
    }
  }
  return found;
}

/** Waits for the index to settle, then checks it holds the new file row by row and answers searches from it alone. */
async function expectIndexIsNewFile(who: Tenant): Promise<void> {
  const [notes] = await waitForIndex(t.client, who.user.token, who.databaseId!);
  expect(notes).toMatchObject({ table: 'notes', state: 'ready', rows: NEW_ROWS, job: { status: 'done' } });
  const expected = new Map(Array.from({ length: NEW_ROWS }, (_, i) => [(i + 1) * 20, newBody((i + 1) * 20)] as const));
  expect(await indexedNotes(who)).toEqual(expected);
  const search = (query: string) => t.client.post('/api/v1/search', { query, databases: [who.databaseId] }, { token: who.key.secret });
  const basalt = await search('basalt');
  expect(basalt.status).toBe(200);
  expect(basalt.body.data.results).toEqual([]);
  for (const id of [20, 5000, 10_000]) {
    const res = await search(`"${newBody(id)}"`);
    expect(res.body.data.results.map((r: { fields: { body: string } }) => r.fields.body), newBody(id)).toContain(newBody(id));
  }
}

beforeAll(async () => {
  t = await startTestServer();
});
afterEach(() => {
  vi.restoreAllMocks();
  t.assertContract();
});
afterAll(() => t.stop());

describe('uploadSqliteFile over a file whose connection is being synced', () => {
  it('when the file is replaced before its first sync starts, then the sync reads the new file and the index equals it', async () => {
    const who = await tenant();
    expect((await upload(who, await oldFile())).status).toBe(201);
    const claim = holdAt('claimNext', () => true);
    await connect(who);
    await claim.reached;
    expect((await upload(who, await newFile())).body.data).toMatchObject({ replaced: true });
    claim.release();
    await expectIndexIsNewFile(who);
  });

  it('when the file is replaced partway through its first sync (its first write, 20,000 of 25,000 rows), then that sync stops and the index equals the new file', async () => {
    const who = await tenant();
    expect((await upload(who, await oldFile())).status).toBe(201);
    const page = holdAt('progress', (_id, changes) => changes.rowsDone === FIRST_WRITE_ROWS);
    await connect(who);
    await replaceWhileHeld(who, page);
    await expectIndexIsNewFile(who);
  });

  it('when the file is replaced as its first sync is ending (every old row read), then that sync does not end ready and the index equals the new file', async () => {
    const who = await tenant();
    expect((await upload(who, await oldFile())).status).toBe(201);
    const end = holdAt('finish', (_id, status) => status === 'done');
    await connect(who);
    await replaceWhileHeld(who, end);
    await expectIndexIsNewFile(who);
  });

  it('when the file is replaced after its sync is ready, then the next sync leaves exactly the new rows', async () => {
    const who = await tenant();
    expect((await upload(who, await oldFile())).status).toBe(201);
    await connect(who);
    const [notes] = await waitForIndex(t.client, who.user.token, who.databaseId!);
    expect(notes).toMatchObject({ state: 'ready', rows: OLD_ROWS });
    expect((await upload(who, await newFile())).body.data).toMatchObject({ replaced: true });
    await expectIndexIsNewFile(who);
  });
});
