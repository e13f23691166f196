/**
 * Shared set-up of the search index's unit tests: Quarry's own store (a temp SQLite file, migrated), an index folder,
 * a real SQLite source table read through the project's executor, and a deterministic embedding provider.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { Sequelize } from 'sequelize';
import { createExecutor, type PooledExecutor, type TableSchema } from '../../../src/connectors/index.js';
import type { EmbeddingProvider } from '../../../src/embeddings/index.js';
import { normalize } from '../../../src/embeddings/vectors.js';
import { releaseModels, setupModels } from '../../../src/models/index.js';
import { databaseConnectionRepository, type DatabaseConnectionRecord } from '../../../src/repositories/database-connection-repository.js';
import { indexJobRepository, type IndexJobRecord, type NewIndexJob } from '../../../src/repositories/index-job-repository.js';
import { userRepository } from '../../../src/repositories/user-repository.js';
import { IndexStore, spaceName } from '../../../src/search-index/index-store.js';
import { createMigrator } from '../../../src/store/migrator.js';
import { createSequelize } from '../../../src/store/sequelize.js';

/** Real store, real index files: allow for a loaded machine (the project's default is 30 s). */
export const SLOW = 60_000;

export interface TestStore {
  dir: string;
  sequelize: Sequelize;
  connection: DatabaseConnectionRecord;
  /** The search space of the connection's user and environment. */
  space: string;
  index: IndexStore;
  close(): Promise<void>;
}

/** Quarry's own store in a temp SQLite file, migrated, with one user and one SQLite connection; an index folder beside it. */
export async function openStore(): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-search-index-'));
  const sequelize = createSequelize({ databaseUrl: `sqlite:${join(dir, 'store.sqlite')}`, storeKind: 'sqlite' });
  setupModels(sequelize);
  await createMigrator(sequelize).up();
  await addUser('usr_1');
  const connection = await addConnection('db_1', 'usr_1');
  const index = new IndexStore({ uri: join(dir, 'index'), readConsistencySeconds: 0 });
  return {
    dir,
    sequelize,
    connection,
    space: spaceName('usr_1', 'test'),
    index,
    async close() {
      await index.close();
      await sequelize.close();
      releaseModels(sequelize);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function addUser(id: string): Promise<void> {
  await userRepository.create({ id, email: `${id}@example.com`, name: id, passwordHash: 'x', role: 'user', lastActiveAt: new Date() });
}

export function addConnection(id: string, userId: string): Promise<DatabaseConnectionRecord> {
  return databaseConnectionRepository.create({
    id, userId, name: id, engine: 'sqlite', host: null, port: null, database: 'docs.db', username: null,
    passwordEncrypted: null, ssl: false, environment: 'test', tables: null, status: 'connected', lastTestedAt: null, lastError: null,
  });
}

let jobs = 0;

/** A queued job of the table (semantic when a provider id is given). */
export async function queueJob(store: TestStore, overrides: Partial<NewIndexJob> = {}): Promise<IndexJobRecord> {
  jobs += 1;
  const job = await indexJobRepository.createQueued({
    id: `ijob_test${jobs}`, connectionId: store.connection.id, tableName: 'docs', space: store.space, trigger: 'manual',
    semantic: false, providerId: null, rowLimit: 1000, ...overrides,
  });
  if (!job) throw new Error('the table already has a live job');
  return job;
}

export const docsTable: TableSchema = {
  name: 'docs',
  schema: null,
  primaryKey: ['id'],
  rowEstimate: 0,
  columns: [
    { name: 'id', type: 'INTEGER', searchable: false },
    { name: 'title', type: 'TEXT', searchable: true },
    { name: 'body', type: 'TEXT', searchable: true },
    { name: 'views', type: 'INTEGER', searchable: false },
  ],
  textColumns: ['title', 'body'],
  fullTextIndexes: [],
};

/** Runs statements on the source SQLite file `docs.db` in `dir`. */
export async function onSource(dir: string, statements: string[]): Promise<void> {
  const db = new sqlite3.Database(join(dir, 'docs.db'));
  try {
    for (const sql of statements) await new Promise<void>((resolve, reject) => db.run(sql, (err) => (err ? reject(err) : resolve())));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** The text row `id` of sourceTable holds, as the index and the embedding model read it. */
export const rowText = (id: number) => `title ${id}\nbody of row ${id}`;

/** A `docs` table of `n` rows with distinct text, and the project's read-only executor on it. */
export async function sourceTable(dir: string, n: number): Promise<PooledExecutor> {
  await onSource(dir, [
    'CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body TEXT, views INTEGER)',
    ...Array.from({ length: n }, (_, i) => `INSERT INTO docs (id, title, body, views) VALUES (${i + 1}, 'title ${i + 1}', 'body of row ${i + 1}', 0)`),
  ]);
  return sourceExecutor(dir);
}

export function sourceExecutor(dir: string): Promise<PooledExecutor> {
  return createExecutor(
    { engine: 'sqlite', host: null, port: null, database: join(dir, 'docs.db'), username: null, password: null, ssl: false, tables: null },
    { hostPolicy: { allowlist: [], allowPrivate: false, allowLoopback: false }, max: 2, connectTimeoutMs: 1000 },
  );
}

/**
 * A deterministic stand-in for the model: the vector of a text is derived from its hash. It records every text it
 * embeds, and can be held at a gate to keep a job inside a page.
 */
export class FakeProvider implements EmbeddingProvider {
  readonly dimensions = 8;
  readonly embedded: string[] = [];
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  /** Resolves when the next embed call is waiting at the gate. */
  waiting: Promise<void> = Promise.resolve();
  private reachedGate: (() => void) | null = null;

  constructor(readonly id = 'fake:hash-8') {}

  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
    this.waiting = new Promise((resolve) => (this.reachedGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.gate) {
      this.reachedGate?.();
      await this.gate;
    }
    this.embedded.push(...texts);
    return texts.map((text) => vectorOf(text));
  }

  async close(): Promise<void> {}
}

export function vectorOf(text: string): Float32Array {
  const bytes = createHash('sha256').update(text).digest();
  return normalize(Float32Array.from({ length: 8 }, (_, i) => bytes[i]! - 128));
}

export const silentLogger = { error: () => undefined, warn: () => undefined };

/** Polls until `check` holds (5 s at most). */
export async function until(check: () => Promise<boolean>, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
