/** Shapes and helpers shared by the per-engine schema discovery files. */
import type { TableSchema } from './types.js';

export type FullTextKind = TableSchema['fullTextIndexes'][number]['kind'];

/** One full-text index, with how to query it. JSON-safe, so it can be cached next to `tables`. */
export interface FullTextIndexInfo {
  /** The table the index belongs to (for FTS5: the FTS table itself, and again for its content table). */
  table: string;
  /** PostgreSQL schema; null elsewhere. */
  schema: string | null;
  name: string;
  kind: FullTextKind;
  /** Text columns the index covers, in index order (MySQL's MATCH() must name exactly these). */
  columns: string[];
  /**
   * PostgreSQL: the indexed tsvector expression exactly as the index defines it, e.g.
   * `to_tsvector('english'::regconfig, ((title || ' '::text) || body))`, or the quoted tsvector column. A query must
   * repeat it verbatim (`<expression> @@ websearch_to_tsquery(...)`) for the planner to use the index.
   */
  expression: string | null;
  /** PostgreSQL text search configuration of the expression (`english`), when it is a literal. */
  language: string | null;
  /** SQLite: the FTS5 table to MATCH against. */
  ftsTable: string | null;
  /** SQLite: the external content table (`content=`) and its rowid column (`content_rowid=`, default `rowid`). */
  contentTable: string | null;
  contentRowid: string | null;
}

/** The connection's `tables` list. Names compare case-insensitively; a bare name means the default schema. */
export class AllowList {
  private readonly entries: Array<{ schema: string | null; name: string }>;

  constructor(entries: string[]) {
    this.entries = entries.map((entry) => {
      const dot = entry.indexOf('.');
      return dot === -1
        ? { schema: null, name: entry.toLowerCase() }
        : { schema: entry.slice(0, dot).toLowerCase(), name: entry.slice(dot + 1).toLowerCase() };
    });
  }

  /** Schemas named by `schema.table` entries. */
  schemas(): string[] {
    return [...new Set(this.entries.flatMap((e) => (e.schema ? [e.schema] : [])))];
  }

  /** `defaultSchema`: what a bare name means (`public`, the MySQL database, `main`). */
  allows(schema: string, name: string, defaultSchema: string): boolean {
    const s = schema.toLowerCase();
    const n = name.toLowerCase();
    return this.entries.some((e) => e.name === n && (e.schema ?? defaultSchema.toLowerCase()) === s);
  }
}

/** Column names referred to in an SQL expression, in order of first appearance (literals and casts ignored). */
export function columnsInExpression(expression: string, tableColumns: readonly string[]): string[] {
  const known = new Set(tableColumns);
  const found: string[] = [];
  const code = expression.replace(/'(?:[^']|'')*'/g, "''");
  const pattern = /(::\s*)?(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))/g;
  for (const match of code.matchAll(pattern)) {
    if (match[1]) continue; // a type after ::
    const name = match[2] !== undefined ? match[2].replace(/""/g, '"') : (match[3] ?? '');
    if (known.has(name) && !found.includes(name)) found.push(name);
  }
  return found;
}

export function toInt(value: unknown): number {
  const n = typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
  return Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

/** Catalog text that some servers return as bytes. */
export function toText(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return value === null || value === undefined ? '' : String(value);
}

/** What each engine's discovery returns. */
export interface EngineDiscovery {
  tables: TableSchema[];
  fullTextIndexes: FullTextIndexInfo[];
}

/** A FullTextIndexInfo with the engine-specific fields defaulted to null. */
export function fullTextInfo(
  base: Pick<FullTextIndexInfo, 'table' | 'schema' | 'name' | 'kind' | 'columns'> & Partial<FullTextIndexInfo>,
): FullTextIndexInfo {
  return { expression: null, language: null, ftsTable: null, contentTable: null, contentRowid: null, ...base };
}

/** The wire entry of TableSchema.fullTextIndexes. */
export function wireIndex(info: FullTextIndexInfo): TableSchema['fullTextIndexes'][number] {
  return { name: info.name, kind: info.kind, columns: info.columns };
}
