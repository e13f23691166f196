/**
 * Sphinx (Debian's `sphinxsearch`, 2.2) as the search-speed anchor: it indexes the same PostgreSQL table Quarry
 * syncs, and answers the same queries through SphinxQL (the MySQL protocol, so mysql2 speaks it) with its bm25
 * ranker. Everything lives in a temporary folder and a loopback port; nothing of the system's own Sphinx is used.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { rssOf } from '../../lib/processes.js';
import { freePort } from '../../lib/spawn-server.js';

export interface SphinxAnchor {
  /** Rows the indexer read and the seconds it took, from its own start to its exit. */
  indexed: { rows: number; seconds: number; bytes: number };
  /** The top `limit` ids for any of the words, ranked by bm25. */
  search(words: string[], limit: number): Promise<number>;
  /** A connection of its own, for a concurrent worker. */
  connect(): Promise<{ search(words: string[], limit: number): Promise<number>; close(): Promise<void> }>;
  rssBytes(): number;
  /** searchd's process id. */
  pid: number;
  stop(): Promise<void>;
}

/** Installs the Debian package when its programs are missing (the benchmark machine reaches Debian's mirror). */
function ensureInstalled(): void {
  if (existsSync('/usr/bin/indexer') && existsSync('/usr/bin/searchd')) return;
  console.log('installing sphinxsearch (Debian package) for the anchor');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'sphinxsearch'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

const folderBytes = (dir: string): number => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

/** Any word may match, as Quarry's natural mode: Sphinx's OR operator over the words. */
const anyWord = (words: string[]): string => words.map((word) => word.replace(/[^\p{L}\p{N}]/gu, '')).filter(Boolean).join(' | ');
const SQL = 'SELECT id, WEIGHT() AS w FROM articles WHERE MATCH(?) LIMIT ? OPTION ranker=bm25, max_matches=1000';

export async function startSphinx(pgUrl: URL, table = 'articles'): Promise<SphinxAnchor> {
  ensureInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'quarry-sphinx-'));
  const port = await freePort();
  // English stemming as Quarry's analyzer does, and the same table: title and body as two full-text fields.
  writeFileSync(join(dir, 'sphinx.conf'), `
source articles {
  type = pgsql
  sql_host = ${pgUrl.hostname}
  sql_port = ${pgUrl.port || 5432}
  sql_user = ${decodeURIComponent(pgUrl.username || 'postgres')}
  sql_pass = ${decodeURIComponent(pgUrl.password)}
  sql_db = ${pgUrl.pathname.slice(1)}
  sql_query = SELECT id, title, body FROM ${table}
}
index articles {
  source = articles
  path = ${dir}/articles
  morphology = stem_en
}
indexer {
  mem_limit = 256M
}
searchd {
  listen = 127.0.0.1:${port}:mysql41
  log = ${dir}/searchd.log
  query_log = ${dir}/query.log
  pid_file = ${dir}/searchd.pid
  binlog_path =
  workers = threads
  # A caller's connection waits idle while Quarry is measured (minutes with a baseline): not dropped meanwhile.
  client_timeout = 86400
}
`);
  const config = join(dir, 'sphinx.conf');
  const t0 = performance.now();
  const output = execFileSync('indexer', ['--config', config, '--all'], { encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  const rows = Number(/collected (\d+) docs/.exec(output)?.[1] ?? NaN);
  const bytes = folderBytes(dir) - statSync(config).size;

  const child: ChildProcess = spawn('searchd', ['--config', config, '--nodetach'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr!.on('data', (chunk) => (log += chunk));
  const connect = async () => {
    const connection = await mysql.createConnection({ host: '127.0.0.1', port });
    // searchd closing a connection between queries is an 'error' event: kept, and thrown by the next search on it,
    // instead of ending the whole benchmark as an uncaught exception.
    let lost: Error | null = null;
    connection.on('error', (error: Error) => (lost = error));
    return {
      search: async (words: string[], limit: number) => {
        if (lost) throw new Error(`searchd closed a connection: ${(lost as Error).message}\n${log.slice(-2000)}`);
        return ((await connection.query(SQL, [anyWord(words), limit]))[0] as unknown[]).length;
      },
      close: () => connection.end(),
    };
  };
  let main: Awaited<ReturnType<typeof connect>> | null = null;
  const deadline = Date.now() + 20_000;
  while (!main) {
    try {
      main = await connect();
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`searchd did not start: ${(error as Error).message}\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const served = main;
  return {
    indexed: { rows, seconds, bytes },
    search: (words, limit) => served.search(words, limit),
    connect,
    rssBytes: () => rssOf(child.pid!),
    pid: child.pid!,
    async stop() {
      await served.close();
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
