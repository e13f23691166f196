/**
 * Values read from a user's database are cut in SQL, before they reach Quarry's process: one row of one tenant
 * (a 20 MB text, a generated column that computes 150 MB) must never cost the memory every other tenant relies on.
 * Each engine cuts with its own function (SQLite `substr`, MySQL/MariaDB `LEFT`, PostgreSQL `left`/`substring`);
 * numbers, dates and other small fixed-size types are read as they are. A value of a type that cannot be cut without
 * changing what it is (JSON, arrays, geometry) is read only when it fits, else as null.
 *
 * Lengths are in characters for text and bytes for binary data; a character is at most 4 bytes in UTF-8, so a value
 * read is at most 4 × `maxChars` bytes.
 */
import type { Engine } from './types.js';

/** Most bytes SQLite may build for one value or row (sqlite3_limit LENGTH): beyond it the statement fails, nothing is allocated. */
export const MAX_SQLITE_VALUE_BYTES = 32 * 1024 * 1024;

/** Most characters of a row's text that search reads: the index keeps no more, and the live path scans no more. */
export const MAX_SEARCHED_TEXT_CHARS = 100_000;
/** Most characters of one field a result shows (live or from the index). */
export const MAX_RESULT_FIELD_CHARS = 32_768;
/** Most characters of a snippet or highlighted text an engine returns. */
export const MAX_SNIPPET_CHARS = 2000;

/** The reason a statement failed because a value was larger than the engine may build (SQLITE_TOOBIG). */
export const VALUE_TOO_LARGE = 'value_too_large';

const POSTGRES_TEXT = /^(text|character varying|character|varchar|char|bpchar|citext|name)\b/i;
const POSTGRES_BYTES = /^bytea\b/i;
const POSTGRES_FIXED = /^(smallint|integer|bigint|int[248]?|real|double precision|float[48]?|numeric|decimal|boolean|bool|date|time|timestamp|interval|uuid|money|oid|serial|bigserial|smallserial|inet|cidr|macaddr|macaddr8|point|bit)\b/i;

const MYSQL_CUT = /^(char|varchar|tinytext|text|mediumtext|longtext|binary|varbinary|tinyblob|blob|mediumblob|longblob)\b/i;
const MYSQL_FIXED = /^(tinyint|smallint|mediumint|int|integer|bigint|decimal|numeric|float|double|real|bit|bool|boolean|date|datetime|timestamp|time|year|enum|set)\b/i;

/**
 * `ref` (a quoted column, possibly `alias.column`) as an expression whose value is at most `maxChars` characters
 * (or bytes), for a column of the engine's declared `type` (the discovered schema's; SQLite checks each value's own
 * type, as its columns may hold any).
 */
export function boundedValue(engine: Engine, ref: string, type: string | undefined, maxChars: number): string {
  const n = Math.max(1, Math.floor(maxChars));
  const declared = (type ?? '').trim();
  switch (engine) {
    case 'sqlite':
      return `CASE WHEN typeof(${ref}) IN ('text', 'blob') THEN substr(${ref}, 1, ${n}) ELSE ${ref} END`;
    case 'postgres':
      if (POSTGRES_TEXT.test(declared) && !declared.endsWith('[]')) return `left(${ref}::text, ${n})`;
      if (POSTGRES_BYTES.test(declared) && !declared.endsWith('[]')) return `substring(${ref} from 1 for ${n})`;
      if (POSTGRES_FIXED.test(declared) && !declared.endsWith('[]')) return ref;
      return `CASE WHEN octet_length(${ref}::text) <= ${n} THEN ${ref} END`;
    case 'mysql':
      if (MYSQL_CUT.test(declared)) return `LEFT(${ref}, ${n})`;
      if (MYSQL_FIXED.test(declared)) return ref;
      return `CASE WHEN LENGTH(${ref}) <= ${n} THEN ${ref} END`;
  }
}

/** The size in bytes of a bounded value as the engine holds it (0 for null). */
export function valueBytes(engine: Engine, expression: string): string {
  switch (engine) {
    case 'sqlite':
      return `COALESCE(length(CAST(${expression} AS BLOB)), 0)`;
    case 'postgres':
      return `COALESCE(pg_column_size(${expression}), 0)`;
    case 'mysql':
      return `COALESCE(LENGTH(${expression}), 0)`;
  }
}
