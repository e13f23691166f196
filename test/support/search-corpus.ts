/**
 * One small corpus seeded identically into PostgreSQL (GIN index), MariaDB (FULLTEXT) and SQLite (FTS5 over an
 * external content table), so search tests can compare the engines on the same rows.
 */
import { onMysql, onPostgres, onSqlite } from './seed-databases.js';

export interface CorpusRow {
  id: number;
  title: string;
  body: string;
}

export const SPECIAL_ROWS: CorpusRow[] = [
  { id: 1, title: 'Wireless noise cancelling headphones', body: 'Over-ear headphones with active noise cancelling and a 30 hour battery.' },
  { id: 2, title: 'Wired studio headphones', body: 'Closed-back wired headphones for studio monitoring. The battery is never needed.' },
  { id: 3, title: 'Bluetooth speaker', body: 'Portable wireless speaker with deep bass and a long battery life.' },
  { id: 4, title: 'Noise cancelling earbuds', body: 'True wireless earbuds with noise cancelling, ideal for travel.' },
  { id: 5, title: 'Mechanical keyboard', body: 'A tactile keyboard with hot-swappable switches & <RGB> lighting "for gamers".' },
  { id: 6, title: 'Charging cable', body: 'Braided cable that charges phones and headphones quickly.' },
];

/** Rows 101..130: thirty more rows about batteries, so "battery" pages. */
export const FILLER_ROWS: CorpusRow[] = Array.from({ length: 30 }, (_, i) => ({
  id: 101 + i,
  title: `Battery pack ${i + 1}`,
  body: `Compact battery pack holding ${(i + 1) * 1000} mAh for travel and camping.`,
}));

export const CORPUS: CorpusRow[] = [...SPECIAL_ROWS, ...FILLER_ROWS];

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const values = (rows: CorpusRow[]) => rows.map((r) => `(${r.id}, ${literal(r.title)}, ${literal(r.body)})`).join(', ');

/** `name` is used as given (quoted by the caller's rules): it may be hostile. */
export async function seedPostgres(quotedName: string, rows: CorpusRow[] = CORPUS, columns = { title: 'title', body: 'body' }): Promise<void> {
  const title = `"${columns.title.replace(/"/g, '""')}"`;
  const body = `"${columns.body.replace(/"/g, '""')}"`;
  await onPostgres([
    `CREATE TABLE ${quotedName} (id int PRIMARY KEY, ${title} text NOT NULL, ${body} text)`,
    `INSERT INTO ${quotedName} (id, ${title}, ${body}) VALUES ${values(rows)}`,
    `CREATE INDEX ON ${quotedName} USING GIN (to_tsvector('english', ${title} || ' ' || coalesce(${body}, '')))`,
    `ANALYZE ${quotedName}`,
  ]);
}

export async function seedMysql(quotedName: string, rows: CorpusRow[] = CORPUS, columns = { title: 'title', body: 'body' }): Promise<void> {
  const title = `\`${columns.title.replace(/`/g, '``')}\``;
  const body = `\`${columns.body.replace(/`/g, '``')}\``;
  await onMysql([
    `CREATE TABLE ${quotedName} (id INT PRIMARY KEY, ${title} VARCHAR(200) NOT NULL, ${body} TEXT, FULLTEXT KEY ft (${title}, ${body})) ENGINE=InnoDB`,
    `INSERT INTO ${quotedName} (id, ${title}, ${body}) VALUES ${values(rows)}`,
  ]);
}

/** An external-content FTS5 index `<table>_fts` over `<table>`. */
export async function seedSqlite(dir: string, file: string, table: string, rows: CorpusRow[] = CORPUS): Promise<string> {
  const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const fts = `${table}_fts`;
  return onSqlite(dir, file, [
    `CREATE TABLE ${q(table)} (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)`,
    `INSERT INTO ${q(table)} (id, title, body) VALUES ${values(rows)}`,
    `CREATE VIRTUAL TABLE ${q(fts)} USING fts5(title, body, content=${literal(table)}, content_rowid='id')`,
    `INSERT INTO ${q(fts)}(${q(fts)}) VALUES ('rebuild')`,
  ]);
}
