/** Shared set-up of the semantic unit tests: a real store (SQLite), a real source table, a deterministic provider. */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { Sequelize } from 'sequelize';
import { createExecutor, type PooledExecutor, type TableSchema } from '../../../src/connectors/index.js';
import { releaseModels, setupModels } from '../../../src/models/index.js';
import { databaseConnectionRepository, type DatabaseConnectionRecord } from '../../../src/repositories/database-connection-repository.js';
import { userRepository } from '../../../src/repositories/user-repository.js';
import type { EmbeddingProvider } from '../../../src/semantic/index.js';
import { normalize } from '../../../src/semantic/vectors.js';
import { createMigrator } from '../../../src/store/migrator.js';
import { createSequelize } from '../../../src/store/sequelize.js';

export interface TestStore {
  dir: string;
  sequelize: Sequelize;
  connection: DatabaseConnectionRecord;
  close(): Promise<void>;
}

/** Quarry's own store in a temp SQLite file, migrated, with one user and one connection. */
export async function openStore(): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-semantic-'));
  const sequelize = createSequelize({ databaseUrl: `sqlite:${join(dir, 'store.sqlite')}`, storeKind: 'sqlite' });
  setupModels(sequelize);
  await createMigrator(sequelize).up();
  await userRepository.create({ id: 'usr_1', email: 'a@example.com', name: 'A', passwordHash: 'x', role: 'user', lastActiveAt: new Date() });
  const connection = await databaseConnectionRepository.create({
    id: 'db_1', userId: 'usr_1', name: 'Docs', engine: 'sqlite', host: null, port: null, database: 'docs.db', username: null,
    passwordEncrypted: null, ssl: false, environment: 'test', tables: null, status: 'connected', lastTestedAt: null, lastError: null,
  });
  return {
    dir,
    sequelize,
    connection,
    async close() {
      await sequelize.close();
      releaseModels(sequelize);
      rmSync(dir, { recursive: true, force: true });
    },
  };
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

/** A `docs` table of `n` rows with distinct text, and a read-only executor on it. */
export async function sourceTable(dir: string, n: number): Promise<PooledExecutor> {
  await onSource(dir, [
    'CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    ...Array.from({ length: n }, (_, i) => `INSERT INTO docs (id, title, body) VALUES (${i + 1}, 'title ${i + 1}', 'body of row ${i + 1}')`),
  ]);
  return createExecutor(
    { engine: 'sqlite', host: null, port: null, database: join(dir, 'docs.db'), username: null, password: null, ssl: false, tables: null },
    { hostPolicy: { allowlist: [], allowPrivate: false, allowLoopback: false }, max: 2, connectTimeoutMs: 1000 },
  );
}

/**
 * A deterministic stand-in for the model: the vector of a text is derived from its hash. It records every text it
 * embeds, and can be held at a gate to stop a job mid-page.
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
  return normalize(Float32Array.from({ length: 8 }, (_, i) => bytes[i] - 128));
}

export const silentLogger = { error: () => undefined, warn: () => undefined };
