/**
 * The live path's search statements (src/sql-search) run on real engines: PostgreSQL with a GIN expression
 * index and with a stored tsvector column, MariaDB FULLTEXT, SQLite FTS5, and the LIKE fallback on each. Natural mode:
 * any word may match, quoted items are required and excluded ones left out, and a ranking that considers at most
 * `bound` candidates says so (approximate) when more rows matched. Boolean mode keeps requiring every word. The same
 * rows are seeded in every engine under unique names, and dropped after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutor } from '../../src/connectors/executor.js';
import type { ConnectionSettings, PooledExecutor } from '../../src/connectors/types.js';
import { compileQuery } from '../../src/search-core/query.js';
import { tableQueries } from '../../src/sql-search/queries.js';
import { loadSearchSchema } from '../../src/sql-search/schema-catalog.js';
import { chooseTargets } from '../../src/sql-search/targets.js';
import type { SearchTarget, TableRanking } from '../../src/sql-search/types.js';
import { onMysql, onPostgres, onSqlite } from '../support/seed-databases.js';
import { LOOPBACK_POLICY, reachable, settingsFromUrl, uniqueName } from './connectors-support.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const pgSettings = settingsFromUrl('postgres', PG_URL);
const mySettings = settingsFromUrl('mysql', MYSQL_URL);
const pgUp = await reachable(pgSettings.host ?? '127.0.0.1', pgSettings.port ?? 5432);
const myUp = await reachable(mySettings.host ?? '127.0.0.1', mySettings.port ?? 3306);

/**
 * Twenty rows share "gadget" (and "alpha ... beta", never adjacent); a few rows hold the rarer words the tests look
 * for. The rare rows come last, so a ranking that read rows in physical order up to the bound would miss them.
 */
const ROWS: Array<[number, string, string]> = [
  ...Array.from({ length: 20 }, (_, i): [number, string, string] => [i + 1, `Gadget ${i + 1}`, `A gadget with alpha parts and beta parts, model ${i + 1}.`]),
  [50, 'Zephyr gadget', 'The zephyr gadget is light.'],
  [51, 'Quiet earbuds', 'Noise cancelling earbuds for travel.'],
  [52, 'Loud earbuds', 'Cancelling plans because of the noise.'],
  [53, 'Broken gadget', 'A broken gadget for parts.'],
  [54, 'Quasar lamp', 'A lamp shaped like a quasar.'],
  [60, 'Alpha beta', 'The alpha beta release.'],
];
const BOUND = 5;

interface Engine {
  label: string;
  executor: PooledExecutor;
  target: SearchTarget;
}

async function targetOf(executor: PooledExecutor, table: string, indexed: boolean): Promise<SearchTarget> {
  const schema = await loadSearchSchema(executor, [table], 10_000);
  const target = chooseTargets(schema, { tables: [table] }).find((t) => t.table === table);
  if (!target || (indexed && !target.index)) throw new Error(`${table}: no usable full-text index`);
  return indexed ? target : { ...target, index: null, ftsColumns: null };
}

async function search(engine: Engine, text: string, mode: 'natural' | 'boolean' = 'natural', bound = BOUND): Promise<TableRanking & { ids: number[] }> {
  const queries = tableQueries(engine.target, compileQuery(text, mode).query, engine.executor, bound)!;
  const statement = queries.rank(40, { from: 0, to: 40 });
  const rows = await engine.executor.query(statement.sql, statement.params, { timeoutMs: 10_000 });
  const ranking = queries.decodeRanking(rows, { from: 0, to: 40 });
  return { ...ranking, ids: ranking.rows.map((r) => Number(r.keys[0])) };
}

const values = ROWS.map(([id, title, body]) => `(${id}, '${title}', '${body}')`).join(', ');
const engines: Engine[] = [];
const cleanups: Array<() => Promise<void>> = [];
const pgExpression = uniqueName('q_live');
const pgStored = uniqueName('q_live_tsv');
const myTable = uniqueName('q_live');

beforeAll(async () => {
  if (pgUp) {
    await onPostgres([
      `CREATE TABLE ${pgExpression} (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL)`,
      `INSERT INTO ${pgExpression} VALUES ${values}`,
      `CREATE INDEX ON ${pgExpression} USING GIN (to_tsvector('english', title || ' ' || body))`,
      `CREATE TABLE ${pgStored} (id int PRIMARY KEY, title text NOT NULL, body text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', title || ' ' || body)) STORED)`,
      `INSERT INTO ${pgStored} (id, title, body) VALUES ${values}`,
      `CREATE INDEX ON ${pgStored} USING GIN (tsv)`,
      `ANALYZE ${pgExpression}`, `ANALYZE ${pgStored}`,
    ]);
    const executor = await createExecutor(pgSettings, { hostPolicy: LOOPBACK_POLICY });
    cleanups.push(async () => {
      await executor.close();
      await onPostgres([`DROP TABLE IF EXISTS ${pgExpression}, ${pgStored}`]);
    });
    engines.push(
      { label: 'PostgreSQL expression index', executor, target: await targetOf(executor, pgExpression, true) },
      { label: 'PostgreSQL stored tsvector', executor, target: await targetOf(executor, pgStored, true) },
      { label: 'PostgreSQL LIKE fallback', executor, target: await targetOf(executor, pgExpression, false) },
    );
  }
  if (myUp) {
    await onMysql([
      `CREATE TABLE ${myTable} (id INT PRIMARY KEY, title VARCHAR(200) NOT NULL, body TEXT NOT NULL, FULLTEXT KEY ft (title, body)) ENGINE=InnoDB`,
      `INSERT INTO ${myTable} VALUES ${values}`,
    ]);
    const executor = await createExecutor(mySettings, { hostPolicy: LOOPBACK_POLICY });
    cleanups.push(async () => {
      await executor.close();
      await onMysql([`DROP TABLE IF EXISTS ${myTable}`]);
    });
    engines.push(
      { label: 'MariaDB FULLTEXT', executor, target: await targetOf(executor, myTable, true) },
      { label: 'MariaDB LIKE fallback', executor, target: await targetOf(executor, myTable, false) },
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'quarry-live-it-'));
  const file = await onSqlite(dir, 'live.db', [
    'CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)',
    `INSERT INTO items VALUES ${values}`,
    "CREATE VIRTUAL TABLE items_fts USING fts5(title, body, content='items', content_rowid='id')",
    "INSERT INTO items_fts (items_fts) VALUES ('rebuild')",
  ]);
  const settings: ConnectionSettings = { engine: 'sqlite', host: null, port: null, database: file, username: null, password: null, ssl: false, tables: null };
  const executor = await createExecutor(settings, { hostPolicy: LOOPBACK_POLICY });
  cleanups.push(async () => {
    await executor.close();
    await rm(dir, { recursive: true, force: true });
  });
  engines.push(
    { label: 'SQLite FTS5', executor, target: await targetOf(executor, 'items', true) },
    { label: 'SQLite LIKE fallback', executor, target: await targetOf(executor, 'items', false) },
  );
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const indexed = (engine: Engine) => !engine.label.includes('LIKE');

describe('live natural-mode search statements', () => {
  it('when PostgreSQL or MariaDB is down, then only the reachable engines are checked (CI has both)', () => {
    expect(engines.length).toBe(2 + (pgUp ? 3 : 0) + (myUp ? 2 : 0));
    if (process.env.CI === 'true') expect(pgUp && myUp).toBe(true);
  });

  it('when any of the words may match and fewer rows match than the bound, then each is found and the ranking is exact', async () => {
    for (const engine of engines) {
      const ranking = await search(engine, 'zephyr quasar');
      expect([...ranking.ids].sort((a, b) => a - b), engine.label).toEqual([50, 54]);
      expect(ranking, engine.label).toMatchObject({ total: 2, totalIsEstimate: false, approximate: false });
    }
  });

  it('when a common word matches more rows than the bound, then the rows of the rarest word are ranked first and the ranking says it is approximate', async () => {
    for (const engine of engines.filter(indexed)) {
      const ranking = await search(engine, 'gadget zephyr');
      expect(ranking.ids[0], engine.label).toBe(50);
      expect(ranking.rows.length, engine.label).toBeLessThanOrEqual(BOUND);
      expect(ranking, engine.label).toMatchObject({ totalIsEstimate: true, approximate: true });
    }
  });

  it('when the bound is above the matches, then the same query ranks every match exactly', async () => {
    for (const engine of engines.filter(indexed)) {
      const ranking = await search(engine, 'gadget zephyr', 'natural', 100);
      expect(ranking, engine.label).toMatchObject({ total: 22, totalIsEstimate: false, approximate: false });
      expect(ranking.ids[0], engine.label).toBe(50);
    }
  });

  it('when words are quoted, then the phrase is required and its words must be adjacent; other words only rank', async () => {
    for (const engine of engines) {
      expect((await search(engine, '"noise cancelling" quasar', 'natural', 100)).ids, engine.label).toEqual([51]);
    }
  });

  it('when a word is excluded, then no row holding it is returned', async () => {
    for (const engine of engines) {
      const ids = (await search(engine, 'gadget -broken', 'natural', 100)).ids;
      expect(ids, engine.label).toContain(50);
      expect(ids, engine.label).not.toContain(53);
      expect(ids, engine.label).toHaveLength(21);
    }
  });

  it('when boolean mode names two words, then both are still required', async () => {
    for (const engine of engines) {
      expect((await search(engine, 'gadget zephyr', 'boolean', 100)).ids, engine.label).toEqual([50]);
    }
  });

  it.runIf(pgUp)('when no candidate of a PostgreSQL expression index has the phrase adjacent, then the ranking is empty and still says it is approximate', async () => {
    const engine = engines.find((e) => e.label === 'PostgreSQL expression index')!;
    // Rows 1-20 hold "alpha" and "beta" apart and come first; only row 60 has them adjacent.
    expect(await search(engine, '"alpha beta"', 'natural', BOUND)).toMatchObject({ rows: [], total: 0, approximate: true, totalIsEstimate: true });
    expect((await search(engine, '"alpha beta"', 'natural', 100)).ids).toEqual([60]);
  });

  it.runIf(pgUp)('when boolean mode matches more rows than the bound, then an expression index ranks the bound and says so; a stored tsvector ranks them all', async () => {
    const expression = await search(engines.find((e) => e.label === 'PostgreSQL expression index')!, 'gadget', 'boolean');
    expect(expression.rows).toHaveLength(BOUND);
    expect(expression).toMatchObject({ approximate: true, totalIsEstimate: true });
    const stored = await search(engines.find((e) => e.label === 'PostgreSQL stored tsvector')!, 'gadget', 'boolean');
    expect(stored).toMatchObject({ total: 22, approximate: false, totalIsEstimate: false });
  });
});
