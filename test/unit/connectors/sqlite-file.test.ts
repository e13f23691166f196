/**
 * sqliteFileProblem, the check before an uploaded SQLite file is kept: its cost is bounded by the size of the file and
 * SQLite's value limit, not by what the file's schema asks SQLite to compute, and damage is found all the same.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteFileProblem } from '../../../src/connectors/sqlite-file.js';
import { onSqlite } from '../../support/seed-databases.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-sqlite-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Far more than a bounded check needs on a loaded machine, far less than computing the bombs takes. */
const BUDGET_MS = 10_000;
const THIRTY_ROWS = (table: string) =>
  `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30) INSERT INTO ${table} (seed) SELECT '${table}' || i FROM n`;
/*
 * Each bomb's column is added after its rows: SQLite computes a virtual column as a row is inserted, which would cost
 * the fixture itself 30 x 150 MB (30-40 s on a slow machine). The file, its schema and rows are the same.
 */
/** printf past SQLite's length limit answers null. */
const PRINTF_BOMB = [
  'CREATE TABLE bomb (id INTEGER PRIMARY KEY, seed TEXT)',
  THIRTY_ROWS('bomb'),
  "ALTER TABLE bomb ADD COLUMN big TEXT GENERATED ALWAYS AS (printf('%.*c',150000000,'x')||seed) VIRTUAL",
];
/** zeroblob past SQLite's length limit fails the statement (SQLITE_TOOBIG). */
const ZEROBLOB_BOMB = [
  'CREATE TABLE blast (id INTEGER PRIMARY KEY, seed TEXT)',
  THIRTY_ROWS('blast'),
  'ALTER TABLE blast ADD COLUMN big TEXT GENERATED ALWAYS AS (hex(zeroblob(150000000))||seed) VIRTUAL',
];

const file = (statements: string[]) => onSqlite(dir, `${randomBytes(6).toString('hex')}.db`, statements);

/** The file with the header of the record that starts with `marker` (3 columns: rowid alias, text, text) claiming more bytes than it holds. */
function withBrokenRecord(path: string, marker: Buffer): string {
  const bytes = readFileSync(path);
  // Record header: its size (4), the rowid alias stored as NULL (0), two 10-character texts (serial type 33).
  const at = bytes.indexOf(Buffer.concat([Buffer.from([4, 0, 33, 33]), marker]));
  expect(at).toBeGreaterThan(0);
  bytes[at + 3] = 127; // a 57-character text: past the end of the record
  const broken = `${path}.broken.db`;
  writeFileSync(broken, bytes);
  return broken;
}

describe('sqliteFileProblem', () => {
  it('when the file\'s generated columns compute 150 MB per row (printf and zeroblob), then it is kept, well within the check\'s time', async () => {
    const path = await file([...PRINTF_BOMB, ...ZEROBLOB_BOMB, 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)']);
    expect(await sqliteFileProblem(path, BUDGET_MS)).toBeNull();
  }, 30_000);

  it('when only a zeroblob column computes more than SQLite may build, then the file is kept', async () => {
    expect(await sqliteFileProblem(await file(ZEROBLOB_BOMB), BUDGET_MS)).toBeNull();
  }, 30_000);

  it('when the first pages are sound, the rest garbage and a table computes 150 MB per row, then the file is refused as damaged', async () => {
    const sound = readFileSync(await file([
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)',
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO notes SELECT i, 'row ' || i || ' ${'of stone and mortar '.repeat(8)}' FROM n`,
      ...ZEROBLOB_BOMB,
      ...PRINTF_BOMB,
    ]));
    const pageSize = sound.readUInt16BE(16);
    const damaged = join(dir, 'damaged.db');
    writeFileSync(damaged, Buffer.concat([sound.subarray(0, 2 * pageSize), randomBytes(sound.length - 2 * pageSize)]));
    expect(await sqliteFileProblem(damaged, BUDGET_MS)).toContain('damaged');
  }, 30_000);

  it('when a record of a table checked after the zeroblob table is broken, then the file is refused as damaged', async () => {
    // Created first, so that SQLite's check of every row reaches it after the zeroblob table.
    const path = await file([
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, a TEXT, b TEXT)',
      "INSERT INTO notes (a, b) VALUES ('QQQQQQQQQQ', 'ZZZZZZZZZZ')",
      ...ZEROBLOB_BOMB,
    ]);
    expect(await sqliteFileProblem(path, BUDGET_MS)).toBeNull();
    expect(await sqliteFileProblem(withBrokenRecord(path, Buffer.from('QQ')), BUDGET_MS)).toContain('damaged');
  }, 30_000);

  it('when a later record of the zeroblob table itself is broken, then the file is refused as damaged', async () => {
    const path = await file([
      'CREATE TABLE blast (id INTEGER PRIMARY KEY, a TEXT, b TEXT, big TEXT GENERATED ALWAYS AS (hex(zeroblob(150000000))||a) VIRTUAL)',
      "INSERT INTO blast (a, b) VALUES ('first row!', 'sound one!'), ('KKKKKKKKKK', 'ZZZZZZZZZZ')",
    ]);
    expect(await sqliteFileProblem(path, BUDGET_MS)).toBeNull();
    expect(await sqliteFileProblem(withBrokenRecord(path, Buffer.from('KK')), BUDGET_MS)).toContain('damaged');
  }, 30_000);
});
