import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { mysqlUrl } from './stores.js';

export const userPostgresUrl = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs statements on the `test` PostgreSQL database (the users' side of Quarry, not its store). */
export async function onPostgres(statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: userPostgresUrl });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function onMysql(statements: string[]): Promise<void> {
  const connection = await mysql.createConnection({ uri: mysqlUrl, multipleStatements: false });
  try {
    for (const sql of statements) await connection.query(sql);
  } finally {
    await connection.end();
  }
}

/** Creates (or opens) a SQLite file inside `dir` and runs statements on it. */
export async function onSqlite(dir: string, file: string, statements: string[]): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  const db = new sqlite3.Database(path);
  try {
    for (const sql of statements) {
      await new Promise<void>((resolve, reject) => db.run(sql, (err) => (err ? reject(err) : resolve())));
    }
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
  return path;
}

export const postgresConnection = (overrides: Record<string, unknown> = {}) => {
  const url = new URL(userPostgresUrl);
  return { name: 'Local PostgreSQL', engine: 'postgres', host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), username: decodeURIComponent(url.username || 'postgres'), password: decodeURIComponent(url.password || ''), environment: 'test', ...overrides };
};

export const mysqlConnection = (overrides: Record<string, unknown> = {}) => {
  const url = new URL(mysqlUrl);
  return { name: 'Local MariaDB', engine: 'mysql', host: url.hostname, port: Number(url.port || 3306), database: url.pathname.slice(1), username: decodeURIComponent(url.username || 'root'), password: decodeURIComponent(url.password || ''), environment: 'test', ...overrides };
};
