import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseConnectionRepository } from '../../src/repositories/database-connection-repository.js';
import { createKey, registerUser, type TestUser } from '../support/factories.js';
import { mysqlConnection, onMysql, onPostgres, onSqlite, postgresConnection } from '../support/seed-databases.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const suffix = randomBytes(4).toString('hex');
const pgIndexed = `docs_fts_${suffix}`;
const pgPlain = `notes_${suffix}`;
const myIndexed = `reviews_${suffix}`;

let t: TestServer;
let owner: TestUser;
let sqliteDir: string;

beforeAll(async () => {
  t = await startTestServer();
  owner = await registerUser(t.client);
  sqliteDir = join(t.dataDir, 'sqlite', owner.id);
  await grantPlan(t, owner, 'pro');
  await createKey(t.client, owner, { rateLimitTier: 'pro' });
  await onPostgres([
    `CREATE TABLE ${pgIndexed} (id serial PRIMARY KEY, title text NOT NULL, body text, views int)`,
    `CREATE INDEX ${pgIndexed}_idx ON ${pgIndexed} USING GIN (to_tsvector('english', title || ' ' || coalesce(body, '')))`,
    `CREATE TABLE ${pgPlain} (code varchar(20) PRIMARY KEY, note text)`,
  ]);
  await onMysql([
    `CREATE TABLE ${myIndexed} (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT, stars INT, FULLTEXT KEY ft_body (body)) ENGINE=InnoDB`,
  ]);
  await onSqlite(sqliteDir, 'notes.db', [
    'CREATE TABLE IF NOT EXISTS articles (id INTEGER PRIMARY KEY, title TEXT, body TEXT)',
    "CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(title, body, content='articles', content_rowid='id')",
  ]);
});
afterEach(() => t.assertContract());
afterAll(async () => {
  await onPostgres([`DROP TABLE IF EXISTS ${pgIndexed}`, `DROP TABLE IF EXISTS ${pgPlain}`]).catch(() => undefined);
  await onMysql([`DROP TABLE IF EXISTS ${myIndexed}`]).catch(() => undefined);
  await t.stop();
});

const create = (body: Record<string, unknown>, user = owner) => t.client.post('/api/v1/databases', body, { token: user.token });

describe('createDatabase', () => {
  it('when PostgreSQL is reachable, then the connection is saved as connected and the password is never returned', async () => {
    const res = await create(postgresConnection({ password: 'not-checked-by-trust-auth', tables: [pgIndexed, pgPlain] }));
    expect(res.status).toBe(201);
    expect(res.body.data.database).toMatchObject({ engine: 'postgres', status: 'connected', lastError: null, environment: 'test', tables: [pgIndexed, pgPlain] });
    expect(JSON.stringify(res.body)).not.toContain('not-checked-by-trust-auth');
    const listed = await t.client.get('/api/v1/databases', { token: owner.token });
    expect(listed.body.data.databases.map((d: { id: string }) => d.id)).toContain(res.body.data.database.id);
    const profile = await t.client.get('/api/v1/auth/profile', { token: owner.token });
    expect(profile.body.data.user.connectedDatabases).toContain(res.body.data.database.id);
  });

  it('when the password is stored, then only AES-256-GCM ciphertext is in the store', async () => {
    const res = await create(mysqlConnection({ name: 'stored secret' }));
    expect(res.status).toBe(201);
    const stored = await databaseConnectionRepository.findById(res.body.data.database.id);
    expect(stored!.passwordEncrypted).toMatch(/^v1:/);
    expect(stored!.passwordEncrypted).not.toContain(mysqlConnection().password || '\u0000never');
  });

  it('when the MariaDB password is wrong, then 422 DATABASE_AUTH_FAILED and nothing is saved', async () => {
    const before = (await t.client.get('/api/v1/databases', { token: owner.token })).body.data.total;
    const res = await create(mysqlConnection({ password: 'definitely-wrong' }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('DATABASE_AUTH_FAILED');
    expect(res.body.error.message).not.toMatch(/root|127\.0\.0\.1|Access denied/);
    expect((await t.client.get('/api/v1/databases', { token: owner.token })).body.data.total).toBe(before);
  });

  it('when the port is closed, then 422 DATABASE_UNREACHABLE', async () => {
    const res = await create(postgresConnection({ port: 1 }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('DATABASE_UNREACHABLE');
  });

  it('when the PostgreSQL database does not exist, then 422 DATABASE_NOT_FOUND', async () => {
    const res = await create(postgresConnection({ database: `missing_${suffix}` }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('DATABASE_NOT_FOUND');
  });

  it.each(['169.254.169.254', 'metadata.google.internal', '0.0.0.0'])('when the host is %s, then 400 HOST_NOT_ALLOWED', async (host) => {
    const res = await create(postgresConnection({ host }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('HOST_NOT_ALLOWED');
  });

  it.each(['../quarry.sqlite', '/etc/passwd', 'sub/../../x.db'])('when the SQLite path is %s, then 400 SQLITE_PATH_NOT_ALLOWED', async (database) => {
    const res = await create({ name: 'escape', engine: 'sqlite', database });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('SQLITE_PATH_NOT_ALLOWED');
  });

  it('when a SQLite file inside the owner\'s own folder is named, then it connects without host or credentials', async () => {
    const res = await create({ name: 'Notes', engine: 'sqlite', database: 'notes.db', environment: 'live' });
    expect(res.status).toBe(201);
    expect(res.body.data.database).toMatchObject({ engine: 'sqlite', host: null, port: null, username: null, database: 'notes.db' });
  });

  it('when host or username is missing for a server engine, then 400 naming the field', async () => {
    const res = await create({ name: 'x', engine: 'postgres', database: 'test', username: 'postgres' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors[0].path).toBe('/host');
  });

  it('when a free user (no paid key) adds a fourth database, then 403 TIER_LIMIT_EXCEEDED naming the tier', async () => {
    const free = await registerUser(t.client);
    for (let i = 0; i < 3; i += 1) expect((await create(postgresConnection({ name: `db ${i}` }), free)).status).toBe(201);
    const fourth = await create(postgresConnection({ name: 'db 4' }), free);
    expect(fourth.status).toBe(403);
    expect(fourth.body.error).toMatchObject({ code: 'TIER_LIMIT_EXCEEDED', details: { tier: 'free', limit: 3, upgradeUrl: expect.any(String) } });
    expect(fourth.body.error.message).toContain('free');
  });

});

describe('schema, test and status', () => {
  it('when the schema is read, then tables, text columns, primary keys and full-text indexes per engine are reported', async () => {
    const pgDb = (await create(postgresConnection({ tables: [pgIndexed, pgPlain] }))).body.data.database;
    const schema = await t.client.get(`/api/v1/databases/${pgDb.id}/schema`, { token: owner.token });
    expect(schema.status).toBe(200);
    const indexed = schema.body.data.tables.find((table: { name: string }) => table.name === pgIndexed);
    expect(indexed).toMatchObject({ primaryKey: ['id'], textColumns: ['title', 'body'] });
    expect(indexed.fullTextIndexes[0]).toMatchObject({ kind: 'gin_tsvector', columns: expect.arrayContaining(['title', 'body']) });
    const plain = schema.body.data.tables.find((table: { name: string }) => table.name === pgPlain);
    expect(plain).toMatchObject({ primaryKey: ['code'], fullTextIndexes: [] });
    expect(schema.body.data.tables).toHaveLength(2);

    const myDb = (await create(mysqlConnection({ tables: [myIndexed] }))).body.data.database;
    const mySchema = await t.client.get(`/api/v1/databases/${myDb.id}/schema?refresh=true`, { token: owner.token });
    expect(mySchema.body.data.tables[0].fullTextIndexes[0]).toMatchObject({ kind: 'mysql_fulltext', columns: ['body'] });

    const liteDb = (await create({ name: 'Notes 2', engine: 'sqlite', database: 'notes.db' })).body.data.database;
    const liteSchema = await t.client.get(`/api/v1/databases/${liteDb.id}/schema`, { token: owner.token });
    const kinds = liteSchema.body.data.tables.flatMap((table: { fullTextIndexes: { kind: string }[] }) => table.fullTextIndexes.map((index) => index.kind));
    expect(kinds).toContain('fts5');
  });

  it('when tested and its status read, then ok with the server version and an open pool', async () => {
    const db = (await create(postgresConnection())).body.data.database;
    const test = await t.client.post(`/api/v1/databases/${db.id}/test`, undefined, { token: owner.token });
    expect(test.body.data).toMatchObject({ ok: true, serverVersion: expect.stringMatching(/^PostgreSQL \d+/), error: null });
    const status = await t.client.get(`/api/v1/databases/${db.id}/status`, { token: owner.token });
    expect(status.body.data).toMatchObject({ status: 'connected', pool: { open: true, max: 5 } });
  });
});

describe('updateDatabase and deleteDatabase', () => {
  it('when renamed, then only the name changes; when the new password is wrong, then 422 and nothing changes', async () => {
    const db = (await create(mysqlConnection({ name: 'Before' }))).body.data.database;
    const renamed = await t.client.put(`/api/v1/databases/${db.id}`, { name: 'After' }, { token: owner.token });
    expect(renamed.body.data.database).toMatchObject({ name: 'After', status: 'connected' });
    const broken = await t.client.put(`/api/v1/databases/${db.id}`, { password: 'wrong-again' }, { token: owner.token });
    expect(broken.status).toBe(422);
    expect(broken.body.error.code).toBe('DATABASE_AUTH_FAILED');
    const test = await t.client.post(`/api/v1/databases/${db.id}/test`, undefined, { token: owner.token });
    expect(test.body.data.ok).toBe(true);
  });

  it('when deleted, then it is gone and its pool is closed', async () => {
    const db = (await create(postgresConnection({ name: 'Temporary' }))).body.data.database;
    await t.client.post(`/api/v1/databases/${db.id}/test`, undefined, { token: owner.token });
    expect((await t.client.delete(`/api/v1/databases/${db.id}`, { token: owner.token })).status).toBe(200);
    expect((await t.client.get(`/api/v1/databases/${db.id}`, { token: owner.token })).status).toBe(404);
    expect(t.server.services.pools.stats(db.id)).toBeNull();
  });
});

describe('tenant isolation', () => {
  it("when another user names a connection in any database operation, then the same 404 as an unknown id", async () => {
    const db = (await create(postgresConnection({ name: 'Private' }))).body.data.database;
    const intruder = await registerUser(t.client);
    const as = { token: intruder.token };
    const answers = await Promise.all([
      t.client.get(`/api/v1/databases/${db.id}`, as),
      t.client.put(`/api/v1/databases/${db.id}`, { name: 'mine' }, as),
      t.client.delete(`/api/v1/databases/${db.id}`, as),
      t.client.post(`/api/v1/databases/${db.id}/test`, undefined, as),
      t.client.get(`/api/v1/databases/${db.id}/schema`, as),
      t.client.get(`/api/v1/databases/${db.id}/status`, as),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
    expect((await t.client.get('/api/v1/databases', as)).body.data.total).toBe(0);
    expect((await t.client.get(`/api/v1/databases/${db.id}`, { token: owner.token })).body.data.database.name).toBe('Private');
  });
});
