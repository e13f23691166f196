/**
 * Cross-tenant SQLite files found by the outside attack, kept beside the OWASP tests: every user has
 * their own folder, connects only files in it, learns nothing about anyone else's from an error, and puts files
 * there through uploadSqliteFile (checked to be SQLite, within the plan's size, replaced atomically).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseConnectionModel } from '../../src/models/index.js';
import { registerUser, createKey, type TestKey, type TestUser } from '../support/factories.js';
import { liftKeyLimits } from '../support/hostile.js';
import { waitForIndex } from '../support/indexing.js';
import { onSqlite } from '../support/seed-databases.js';
import { sendUpload as sendUploadTo } from '../support/sqlite-uploads.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let aliceKey: TestKey;
const scratch = mkdtempSync(join(tmpdir(), 'quarry-sqlite-upload-'));

/** The bytes of a fresh SQLite database holding one `notes` table with these rows. */
async function sqliteBytes(rows: string[]): Promise<Buffer> {
  const file = `${randomBytes(6).toString('hex')}.db`;
  const path = await onSqlite(scratch, file, [
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)',
    ...rows.map((body) => `INSERT INTO notes (body) VALUES ('${body}')`),
  ]);
  return readFileSync(path);
}

const upload = (user: TestUser, name: string, bytes: Uint8Array, contentType = 'application/octet-stream') =>
  t.client.request('PUT', `/api/v1/sqlite-files/${encodeURIComponent(name)}`, undefined, { token: user.token, raw: bytes, headers: { 'content-type': contentType } });
const sendUpload = (user: TestUser, name: string, bytes: Buffer, chunked: boolean) => sendUploadTo(t.server.url, user.token, name, bytes, chunked);
const connect = (user: TestUser, database: string) =>
  t.client.post('/api/v1/databases', { name: `file ${database}`.slice(0, 100), engine: 'sqlite', database, environment: 'test' }, { token: user.token });

beforeAll(async () => {
  t = await startTestServer();
  alice = await registerUser(t.client);
  bob = await registerUser(t.client);
  aliceKey = await createKey(t.client, alice);
  await liftKeyLimits(aliceKey.id);
});
afterEach(() => t.assertContract());
afterAll(() => t.stop());

describe('API1 another tenant\'s SQLite file', () => {
  it("when bob names alice's uploaded file by its name, by climbing into her folder or by an absolute path, then he is refused with the errors of a file that does not exist", async () => {
    expect((await upload(alice, 'ledger.db', await sqliteBytes(['quarterly numbers nobody else may read']))).status).toBe(201);
    expect((await connect(alice, 'ledger.db')).status).toBe(201);

    const hers = await connect(bob, 'ledger.db');
    const nobodys = await connect(bob, `nothing-${randomBytes(4).toString('hex')}.db`);
    expect(hers.status, JSON.stringify(hers.body)).toBe(422);
    expect(hers.body.error).toEqual(nobodys.body.error);
    expect(hers.body.error.code).toBe('DATABASE_NOT_FOUND');

    const climbs = [`../${alice.id}/ledger.db`, `${join(t.dataDir, 'sqlite', alice.id, 'ledger.db')}`, `./../${alice.id}/ledger.db`];
    const guesses = [`../${bob.id}x/ledger.db`, '/nothing/here.db', './../nobody/ledger.db'];
    for (const [i, path] of climbs.entries()) {
      const res = await connect(bob, path);
      const guess = await connect(bob, guesses[i]!);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toEqual(guess.body.error);
    }
    const everything = JSON.stringify([hers.body, nobodys.body]);
    expect(everything).not.toContain(alice.id);
    expect(everything).not.toContain(t.dataDir);
    expect((await t.client.get('/api/v1/databases', { token: bob.token })).body.data.total).toBe(0);
    expect((await t.client.get('/api/v1/sqlite-files', { token: bob.token })).body.data.files).toEqual([]);
  });

  it('when a file sits in the shared SQLITE_DATA_DIR itself (the old layout), then no user can connect it', async () => {
    await onSqlite(join(t.dataDir, 'sqlite'), 'shared.db', ['CREATE TABLE secrets (id INTEGER PRIMARY KEY, body TEXT)']);
    const res = await connect(bob, 'shared.db');
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('DATABASE_NOT_FOUND');
  });

  it('when a name starts with a dot (an upload in progress), then it is never connectable', async () => {
    mkdirSync(join(t.dataDir, 'sqlite', bob.id), { recursive: true });
    writeFileSync(join(t.dataDir, 'sqlite', bob.id, '.upload-0123456789abcdef'), await sqliteBytes(['half written']));
    const res = await connect(bob, '.upload-0123456789abcdef');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('SQLITE_PATH_NOT_ALLOWED');
  });
});

describe('uploadSqliteFile checks what it keeps', () => {
  const folderOf = (user: TestUser) => join(t.dataDir, 'sqlite', user.id);

  it.each([
    ['random bytes', randomBytes(4096)],
    ['a text file', Buffer.from('id,title\n1,not a database\n')],
    ['the SQLite header and garbage', Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), randomBytes(8192)])],
    ['an empty body', Buffer.alloc(0)],
  ])('when the body is %s, then 422 INVALID_SQLITE_FILE and nothing is kept', async (_, bytes) => {
    const name = `bad-${randomBytes(3).toString('hex')}.db`;
    const res = await upload(bob, name, bytes);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error.code).toBe('INVALID_SQLITE_FILE');
    expect(readdirSync(folderOf(bob)).filter((f) => f === name || f.startsWith('.upload-') && f !== '.upload-0123456789abcdef')).toEqual([]);
  });

  it('when the file\'s first pages are sound and the rest is garbage, then 422 INVALID_SQLITE_FILE from the check of every page and nothing is kept', async () => {
    const sound = readFileSync(await onSqlite(scratch, `${randomBytes(6).toString('hex')}.db`, [
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)',
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO notes SELECT i, 'row ' || i || ' ${'of stone and mortar '.repeat(8)}' FROM n`,
    ]));
    const pageSize = sound.readUInt16BE(16);
    expect(sound.length / pageSize).toBeGreaterThan(50);
    // Page 1 (the schema) and page 2 (the table's root) stay sound: the header check and the schema read pass.
    const damaged = Buffer.concat([sound.subarray(0, 2 * pageSize), randomBytes(sound.length - 2 * pageSize)]);
    const name = `damaged-${randomBytes(3).toString('hex')}.db`;
    const res = await upload(bob, name, damaged);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'INVALID_SQLITE_FILE', details: { fileName: name } });
    expect(res.body.error.message).toContain('quick_check');
    expect(readdirSync(folderOf(bob)).filter((f) => f === name || f.startsWith('.upload-') && f !== '.upload-0123456789abcdef')).toEqual([]);
    expect((await upload(bob, name, sound)).status).toBe(201);
  });

  it('when the body is JSON or the name is a -wal file or not a plain name, then 415 or 400', async () => {
    const bytes = await sqliteBytes(['x']);
    const json = await upload(bob, 'a.db', Buffer.from('{"file":"a.db"}'), 'application/json');
    expect(json.status).toBe(415);
    expect(json.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/octet-stream.' });
    const wal = await upload(bob, 'a.db-wal', bytes);
    expect(wal.status).toBe(400);
    expect(wal.body.error.details.errors[0].path).toBe('/fileName');
    for (const name of ['.hidden.db', 'a b.db', 'über.db', '-x.db']) expect((await upload(bob, name, bytes)).status, name).toBe(400);
    expect((await t.client.post('/api/v1/auth/login', undefined, { raw: bytes, headers: { 'content-type': 'application/octet-stream' } })).status).toBe(415);
  });

  it('when the declared or streamed size is over the free plan (50 MiB), then 413 and no file, not even a temporary one', async () => {
    const declared = await new Promise<number>((resolve, reject) => {
      const req = request(new URL('/api/v1/sqlite-files/huge.db', t.server.url), {
        method: 'PUT', agent: false,
        headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/octet-stream', 'content-length': String(60 * 1024 * 1024) },
      }, (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      req.write(randomBytes(1024));
    });
    expect(declared).toBe(413);
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(new URL('/api/v1/sqlite-files/huge.db', t.server.url), {
        method: 'PUT', agent: false,
        headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
      }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      const chunk = Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(1024 * 1024 - 16)]);
      let sent = 0;
      const pump = () => {
        while (sent < 52) {
          sent += 1;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 50 * 1024 * 1024, plan: 'free' } });
    expect(existsSync(join(folderOf(bob), 'huge.db'))).toBe(false);
    expect(readdirSync(folderOf(bob)).filter((f) => f.startsWith('.upload-') && f !== '.upload-0123456789abcdef')).toEqual([]);
  });

  it('when four 45 MiB uploads race for a free folder of 150 MiB, then exactly three are kept, the fourth and a streamed fifth are 413 and nothing else stays', async () => {
    const carol = await registerUser(t.client);
    const big = readFileSync(await onSqlite(scratch, `${randomBytes(6).toString('hex')}.db`, [
      'CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)',
      'INSERT INTO blobs VALUES (1, zeroblob(47000000))',
    ]));
    expect(big.length).toBeGreaterThan(45 * 1024 * 1024 - 1024 * 1024);
    expect(4 * big.length).toBeGreaterThan(150 * 1024 * 1024);
    expect(3 * big.length).toBeLessThanOrEqual(150 * 1024 * 1024);
    const folderFull = { code: 'PAYLOAD_TOO_LARGE', details: { limit: 150 * 1024 * 1024, plan: 'free' } };

    const raced = await Promise.all([1, 2, 3, 4].map((i) => sendUpload(carol, `part-${i}.db`, big, false)));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 201, 201, 413]);
    expect(JSON.parse(raced.find((r) => r.status === 413)!.body).error).toMatchObject(folderFull);

    const streamed = await sendUpload(carol, 'part-5.db', big, true);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error).toMatchObject(folderFull);

    const listed = (await t.client.get('/api/v1/sqlite-files', { token: carol.token })).body.data;
    expect(listed.total).toBe(3);
    expect(listed.usedBytes).toBeLessThanOrEqual(150 * 1024 * 1024);
    expect(readdirSync(folderOf(carol)).sort()).toEqual(listed.files.map((f: { name: string }) => f.name));
    // The refused uploads gave their room back: a file replaced in place still fits.
    const refused = `part-${raced.findIndex((r) => r.status === 413) + 1}.db`;
    expect((await upload(carol, listed.files[0].name, await sqliteBytes(['small again']))).status).toBe(200);
    expect((await upload(carol, refused, big)).status).toBe(201);
  }, 120_000);

  it('when a connected file is replaced while searches run, then every search answers from the old or the new file and afterwards from the new one', async () => {
    expect((await upload(alice, 'catalog.db', await sqliteBytes(['granite sealer old edition']))).status).toBe(201);
    const id = (await connect(alice, 'catalog.db')).body.data.database.id as string;
    const search = () => t.client.post('/api/v1/search', { query: 'granite', databases: [id] }, { token: aliceKey.secret });
    expect((await search()).body.data.results.map((r: { fields: { body: string } }) => r.fields.body)).toEqual(['granite sealer old edition']);

    let running = true;
    const seen: string[] = [];
    const loop = (async () => {
      while (running) {
        const res = await search();
        expect(res.status).toBe(200);
        expect(res.body.data.databases[0].status).toBe('ok');
        seen.push(...res.body.data.results.map((r: { fields: { body: string } }) => r.fields.body));
      }
    })();
    const replaced = await upload(alice, 'catalog.db', await sqliteBytes(['granite sealer new edition', 'granite polish']));
    running = false;
    await loop;
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ file: { name: 'catalog.db' }, replaced: true });
    // The upload queued a sync of the connection's tables; once it has run, the index holds the new rows.
    const [catalogTable] = await waitForIndex(t.client, alice.token, id);
    expect(catalogTable!.job).toMatchObject({ trigger: 'upload', status: 'done' });
    expect(new Set(seen).size).toBeGreaterThan(0);
    for (const body of seen) expect(['granite sealer old edition', 'granite sealer new edition', 'granite polish']).toContain(body);
    const after = (await search()).body.data.results.map((r: { fields: { body: string } }) => r.fields.body).sort();
    expect(after).toEqual(['granite polish', 'granite sealer new edition']);
    const listed = (await t.client.get('/api/v1/sqlite-files', { token: alice.token })).body.data;
    expect(listed.files.map((f: { name: string }) => f.name)).toEqual(['catalog.db', 'ledger.db']);
    expect(listed.limits).toEqual({ plan: 'free', fileBytes: 50 * 1024 * 1024, folderBytes: 150 * 1024 * 1024 });
    const inUse = await t.client.delete('/api/v1/sqlite-files/catalog.db', { token: alice.token });
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.details.databaseIds).toEqual([id]);
  });
});

describe('SQLite connections made before per-user folders', () => {
  const legacy = async (user: TestUser, file: string) => {
    const record = await DatabaseConnectionModel.create({
      id: `db_legacy${randomBytes(6).toString('hex')}`, userId: user.id, name: 'legacy', engine: 'sqlite', host: null, port: null,
      database: file, username: null, passwordEncrypted: null, ssl: false, environment: 'test', tables: null,
    });
    return record.id;
  };

  it('when one account connected a file in the shared folder, then the start moves it into that account\'s folder; a file two accounts connected stays put and neither reaches it', async () => {
    const own = `own-${randomBytes(3).toString('hex')}.db`;
    const shared = `shared-${randomBytes(3).toString('hex')}.db`;
    await onSqlite(join(t.dataDir, 'sqlite'), own, ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)']);
    await onSqlite(join(t.dataDir, 'sqlite'), shared, ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)']);
    const carol = await registerUser(t.client);
    const ownId = await legacy(carol, own);
    const sharedIds = [await legacy(carol, shared), await legacy(bob, shared)];

    await t.server.services.sqliteFiles.adoptSharedFiles();
    expect(existsSync(join(t.dataDir, 'sqlite', carol.id, own))).toBe(true);
    expect(existsSync(join(t.dataDir, 'sqlite', own))).toBe(false);
    expect(existsSync(join(t.dataDir, 'sqlite', shared))).toBe(true);
    expect((await t.client.post(`/api/v1/databases/${ownId}/test`, undefined, { token: carol.token })).body.data.ok).toBe(true);
    const [carolShared, bobShared] = [
      await t.client.post(`/api/v1/databases/${sharedIds[0]}/test`, undefined, { token: carol.token }),
      await t.client.post(`/api/v1/databases/${sharedIds[1]}/test`, undefined, { token: bob.token }),
    ];
    for (const res of [carolShared, bobShared]) expect(res.body.data).toMatchObject({ ok: false, error: { code: 'DATABASE_NOT_FOUND' } });
    await t.server.services.sqliteFiles.adoptSharedFiles(); // again: nothing left to do, nothing breaks
    expect(existsSync(join(t.dataDir, 'sqlite', carol.id, own))).toBe(true);
  });
});
