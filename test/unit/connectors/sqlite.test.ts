import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteExecutor } from '../../../src/connectors/sqlite.js';
import { onSqlite } from '../../support/seed-databases.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-sqlite-executor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fileWith = (name: string, body: string) =>
  onSqlite(dir, name, ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)', `INSERT INTO notes (body) VALUES ('${body}')`]);

describe('createSqliteExecutor', () => {
  it('when another file is renamed over the one its handles opened (an upload handled by another process), then the next queries read the new file', async () => {
    const path = await fileWith('live.db', 'old file');
    const executor = createSqliteExecutor(
      { engine: 'sqlite', host: null, port: null, database: path, username: null, password: null, ssl: false, tables: null },
      { max: 2, connectTimeoutMs: 1000 },
    );
    const read = async () => (await executor.query<{ body: string }>('SELECT body FROM notes', [], { timeoutMs: 1000 })).map((r) => r.body);
    try {
      // Both handles open on the old file.
      expect(await Promise.all([read(), read()])).toEqual([['old file'], ['old file']]);
      renameSync(await fileWith('incoming.db', 'new file'), path);
      expect(await Promise.all([read(), read()])).toEqual([['new file'], ['new file']]);
      expect(await read()).toEqual(['new file']);
    } finally {
      await executor.close();
    }
  });
});
