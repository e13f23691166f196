/**
 * The first of two locks on writes ("a write statement can never run through Quarry"). Every executor
 * also runs inside the engine's read-only mode; this check exists because engines leave gaps of their own:
 * sqlite3 silently ignores everything after the first statement, a read-only SQLite handle still runs
 * `VACUUM INTO 'file'`, and a MySQL session can switch itself back with `SET SESSION TRANSACTION READ WRITE`.
 * Only one SELECT / WITH / VALUES statement passes.
 */
import { LRUCache } from 'lru-cache';
import { ConnectorError } from './errors.js';
import type { Engine } from './types.js';

const ALLOWED_FIRST_WORDS = new Set(['SELECT', 'WITH', 'VALUES']);

class GuardRefusal extends Error {}

/** The SQL with string literals, quoted identifiers and comments replaced by spaces; throws GuardRefusal on doubt. */
function codeOnly(sql: string, engine: Engine): string {
  let out = '';
  let i = 0;
  const n = sql.length;
  const isIdentChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);

  const skipQuoted = (quote: string, backslashEscapes: boolean): void => {
    i++;
    while (i < n) {
      const c = sql[i];
      if (backslashEscapes && c === '\\') { i += 2; continue; }
      if (c === quote) {
        if (sql[i + 1] === quote) { i += 2; continue; }
        i++;
        return;
      }
      i++;
    }
    throw new GuardRefusal('unterminated quote');
  };

  while (i < n) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === "'") {
      const prefix = sql[i - 1];
      const postgresEscape = engine === 'postgres' && (prefix === 'E' || prefix === 'e') && !isIdentChar(sql[i - 2]);
      const escapeString = engine === 'mysql' || postgresEscape;
      skipQuoted("'", escapeString);
      out += ' ';
    } else if (c === '"') {
      skipQuoted('"', engine === 'mysql');
      out += ' ';
    } else if (c === '`' && engine !== 'postgres') {
      skipQuoted('`', false);
      out += ' ';
    } else if (c === '[' && engine === 'sqlite') {
      const end = sql.indexOf(']', i + 1);
      if (end === -1) throw new GuardRefusal('unterminated identifier');
      i = end + 1;
      out += ' ';
    } else if (c === '-' && next === '-' && (engine !== 'mysql' || i + 2 >= n || /[\s\x00-\x1f]/.test(sql[i + 2] as string))) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '#' && engine === 'mysql') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '/' && next === '*') {
      // MySQL runs the text of /*! ... */ and /*M! ... */ as SQL: never let it hide anything.
      if (engine === 'mysql' && (sql[i + 2] === '!' || sql.startsWith('M!', i + 2))) throw new GuardRefusal('executable comment');
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === '*' && sql[i + 1] === '/') { depth--; i += 2; continue; }
        if (engine === 'postgres' && sql[i] === '/' && sql[i + 1] === '*') { depth++; i += 2; continue; }
        i++;
      }
      if (depth > 0) throw new GuardRefusal('unterminated comment');
      out += ' ';
    } else if (c === '$' && engine === 'postgres' && !isIdentChar(sql[i - 1])) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (!tag) { out += c; i++; continue; }
      const end = sql.indexOf(tag[0], i + tag[0].length);
      if (end === -1) throw new GuardRefusal('unterminated dollar quote');
      i = end + tag[0].length;
      out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function refusal(engine: Engine, cause?: unknown): ConnectorError {
  return new ConnectorError(
    'DATABASE_ERROR',
    'Quarry runs single read-only statements only (SELECT, WITH or VALUES).',
    { engine, reason: 'not_read_only' },
    { cause },
  );
}

/**
 * Statements already found read-only, by engine and text. Search runs the same few statement texts over and over
 * (the query text is a parameter), so each is lexed once; the least recently run leaves first (lru-cache).
 */
const passed = new LRUCache<string, true>({ max: 2000 });

/** Throws DATABASE_ERROR (reason `not_read_only`) unless `sql` is one SELECT, WITH or VALUES statement. */
export function assertReadOnlySql(sql: string, engine: Engine): void {
  const key = `${engine}\u0000${sql}`;
  if (passed.has(key)) return;
  checkReadOnly(sql, engine);
  passed.set(key, true);
}

function checkReadOnly(sql: string, engine: Engine): void {
  let code: string;
  try {
    code = codeOnly(sql, engine);
  } catch (err) {
    throw refusal(engine, err);
  }
  const body = code.trim().replace(/;\s*$/, '');
  if (body.includes(';')) throw refusal(engine);
  const firstWord = /^[\s(]*([A-Za-z]+)/.exec(body)?.[1]?.toUpperCase();
  if (!firstWord || !ALLOWED_FIRST_WORDS.has(firstWord)) throw refusal(engine);
  if (engine === 'mysql' && /\bINTO\s+(OUTFILE|DUMPFILE)\b/i.test(body)) throw refusal(engine);
}
