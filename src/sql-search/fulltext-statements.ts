import type { components } from '../../generated/openapi.js';

type Engine = components['schemas']['DatabaseEngine'];
type TableSchema = components['schemas']['TableSchema'];

/** What is known about a table searched without a full-text index (from the connection's schema cache). */
export interface UnindexedTableHint {
  table: string;
  /** null when the connection's schema was never discovered or does not list the table. */
  schema: TableSchema | null;
}

const simple = /^[a-z_][a-z0-9_]*$/;
const quotePg = (name: string) => (simple.test(name) ? name : `"${name.replace(/"/g, '""')}"`);
const quoteSqlite = quotePg;
const quoteMysql = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``);
const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;
/** `<table>_fts`, reduced to a plain identifier of at most 63 characters. */
const indexName = (table: string) => `${table.replace(/[^A-Za-z0-9_]/g, '_').toLowerCase().slice(0, 59)}_fts`;

/**
 * The exact statement that gives `table` a full-text index on its engine, over the text columns its discovered
 * schema lists; null when those columns are unknown. Each statement creates an index that schema discovery
 * recognises (GIN over to_tsvector, MySQL FULLTEXT, an external-content FTS5 table).
 */
export function fullTextIndexStatement(engine: Engine, hint: UnindexedTableHint): string | null {
  const schema = hint.schema;
  const columns = schema?.textColumns ?? [];
  if (!schema || columns.length === 0) return null;
  const name = schema.name;
  switch (engine) {
    case 'postgres': {
      const table = schema.schema && schema.schema !== 'public' ? `${quotePg(schema.schema)}.${quotePg(name)}` : quotePg(name);
      const document = columns.map((column) => `coalesce(${quotePg(column)}, '')`).join(" || ' ' || ");
      return `CREATE INDEX ${indexName(name)} ON ${table} USING GIN (to_tsvector('english', ${document}))`;
    }
    case 'mysql':
      return `ALTER TABLE ${quoteMysql(name)} ADD FULLTEXT INDEX ${indexName(name)} (${columns.map(quoteMysql).join(', ')})`;
    case 'sqlite': {
      const fts = indexName(name);
      const key = schema.primaryKey.length === 1 ? schema.columns.find((column) => column.name === schema.primaryKey[0]) : undefined;
      // content_rowid must be the table's INTEGER PRIMARY KEY (an alias of rowid); otherwise rowid itself.
      const rowid = key && /^integer$/i.test(key.type.trim()) ? `, content_rowid=${sqlString(key.name)}` : '';
      return `CREATE VIRTUAL TABLE ${fts} USING fts5(${columns.map(quoteSqlite).join(', ')}, content=${sqlString(name)}${rowid}); ` +
        `INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`;
    }
  }
}

/** Finds a table of a schema cache by the name a search record gave (`table` or `schema.table`). */
export function findCachedTable(cache: TableSchema[] | null, table: string): TableSchema | null {
  if (!cache) return null;
  const dot = table.indexOf('.');
  const [schemaName, name] = dot === -1 ? [null, table] : [table.slice(0, dot), table.slice(dot + 1)];
  const lower = name.toLowerCase();
  return (
    cache.find((t) => t.name === name && (schemaName === null || t.schema === schemaName)) ??
    cache.find((t) => t.name.toLowerCase() === lower && (schemaName === null || t.schema?.toLowerCase() === schemaName.toLowerCase())) ??
    null
  );
}

export const effortOf: Record<Engine, string> = {
  postgres: 'One CREATE INDEX per table (add CONCURRENTLY on a busy table).',
  mysql: 'One ALTER TABLE per table.',
  sqlite: 'One FTS5 table per table, plus triggers to keep it current.',
};
