/** Shapes shared by the SQL search engine (src/sql-search): what is searched, how, and what comes back per table. */
import type { Engine, FullTextIndexInfo, SqlExecutor } from '../connectors/index.js';

/** 0-based positions of a table's ranking whose rows get their details in the rank statement. */
export interface DetailWindow {
  from: number;
  to: number;
}

export type Dialect = Pick<SqlExecutor, 'quoteIdent' | 'placeholder'>;

export interface Statement {
  sql: string;
  params: unknown[];
}

/** A column that identifies a row: a primary key column, or the engine's row address (ctid, rowid). */
export interface KeyColumn {
  name: string;
  pseudo: boolean;
}

/** One table of one database, and how to search it. */
export interface SearchTarget {
  engine: Engine;
  /** The table reported in results (for an external-content FTS5 index: the content table). */
  table: string;
  /** PostgreSQL schema; null elsewhere. */
  schema: string | null;
  /** Columns returned as `fields` (PostgreSQL tsvector columns are left out: they are index data). */
  columns: string[];
  /** The engine's declared type of each of `columns` (how a value is cut in SQL); unknown types are cut as unknown. */
  columnTypes?: string[];
  keys: KeyColumn[];
  /** Text columns searched, and the candidates for matchedColumns. */
  searchColumns: string[];
  /** The full-text index used; null means the bounded fallback scan. */
  index: FullTextIndexInfo | null;
  /** SQLite: the FTS5 table's columns in order (highlight() takes a column number). */
  ftsColumns: string[] | null;
  rowEstimate: number;
}

/** What a page row shows besides its identity. */
export interface HitDetail {
  fields: Record<string, unknown>;
  snippet: string;
  matchedColumns: string[];
}

/** One ranked row of one table. */
export interface RankedRow {
  keys: unknown[];
  /** The engine's own score (higher is better); only used inside its table. */
  score: number;
  detail: HitDetail | null;
}

/** A table's answer to the rank statement. */
export interface TableRanking {
  rows: RankedRow[];
  /** Matching rows in the table; when `approximate`, those found within the bound (a lower bound). */
  total: number;
  /** True when `total` is a lower bound rather than a count (always so when `approximate`). */
  totalIsEstimate: boolean;
  /**
   * True when more rows matched than the live path ranks (LIVE_RANK_CANDIDATES, or the fallback's FALLBACK_SCAN_ROWS):
   * the rows are the best of those considered, a better row may have been left out, and the ranking ends at the bound.
   */
  approximate: boolean;
}

/** Builds the statements of one table for one query. */
export interface TableQueries {
  target: SearchTarget;
  /** False when details always need the second statement (FTS5's snippet() works only in the MATCH query). */
  inlineDetails: boolean;
  /** The top `top` rows by score; rows at 0-based positions [window.from, window.to) also carry their details. */
  rank(top: number, window: DetailWindow): Statement;
  /** Details of the rows with these keys. */
  details(keys: unknown[][]): Statement;
  decodeRanking(rows: Record<string, unknown>[], window: DetailWindow): TableRanking;
  decodeDetails(rows: Record<string, unknown>[]): Array<{ keys: unknown[]; detail: HitDetail }>;
}
