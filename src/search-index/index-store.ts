/**
 * Quarry's own search index on LanceDB: the only module that reads or writes it, as repositories are the
 * only code that touches Sequelize.
 *
 * Layout: one LanceDB table per search space, that is per user and environment (`space_<userId>_<environment>`).
 * Every indexed source table of that user's connections in that environment keeps its rows there, told apart by
 * `src` (the indexed table's id). One table per space is what gives one BM25 statistics space: a term's rarity is
 * the same whichever database holds the row, so a federated search ranks as one index over all the data would.
 * Spaces never mix users, so one tenant's data never weighs on another's ranking.
 *
 * Columns: `rid` (the row's stable id: a hash of its table and primary key), `src`, `pk` (the primary key as JSON),
 * `hash` (of the row's text and fields: an unchanged row is not rewritten), `thash` (of its text alone: a vector is
 * reused while the text is the same), `text` (the text columns, what BM25 ranks), `fields` (the row's columns as
 * JSON, what results show), and, once a table of the space is searched semantically, `vector` and `vmodel` (the
 * embedding model that made it).
 *
 * Only ids Quarry makes ever appear in a filter (`src`, `rid`); they are checked against a strict alphabet before
 * they are written into one, so no caller text reaches LanceDB's SQL.
 */
import { Mutex } from 'async-mutex';
import type { Connection, Table } from '@lancedb/lancedb';
import type { Table as ArrowTable } from 'apache-arrow';
import type { Logger } from '../lib/logger.js';
import type { HeadingScorer } from './heading.js';
import { loadLance } from './lance.js';
import { rowsTable } from './arrow-rows.js';
import { placesByRid, ROW_COLUMNS, type Utf8Data, type VersionRows, VersionRowsBuilder } from './row-cache.js';
import { worthRecording, WrittenSince, type WrittenRow } from './written-rows.js';
import { SpaceVocabulary, VocabularyBuilder } from './vocabulary.js';
import { SeenVersion } from './seen-version.js';
import { countRowWords, type RowWords } from './row-words.js';
import { buildPostings } from './postings.js';
import { MAX_TOKEN_BYTES, queryStems } from './analyzer.js';

export { MAX_TOKEN_BYTES } from './analyzer.js';

/**
 * The weight of a query word found in a row's heading, on top of its weight in the row's whole text: a title that
 * names what the query asks for is the strongest sign of a relevant row. Every weight from 0.2 to 1 ranked relevant
 * rows higher than the text alone on the Cranfield collection (npm run bench:heading); 0.5 sits in the middle.
 */
export const HEADING_BOOST = 0.5;

/** One row of an indexed table, as the index keeps it. */
export interface IndexRow {
  rid: string;
  src: string;
  pk: string;
  hash: string;
  thash: string;
  text: string;
  /** The row's heading (its table's first text column, when it has several): matched again, with HEADING_BOOST. */
  head: string;
  fields: string;
  /** Only for tables searched semantically; null elsewhere. */
  vector?: number[] | null;
  vmodel?: string | null;
  /** The table's filterable and sortable columns, by their names in the index (filter-columns.ts). */
  filters?: Record<string, number | boolean | string | null>;
}

/** What a stored row says about itself, to decide whether it must be written again. */
export interface StoredState {
  hash: string;
  thash: string;
  vmodel: string | null;
}

/** A ranked row reference: which row, from which table, with the engine's score (higher is better). */
export interface IndexHit {
  rid: string;
  src: string;
  score: number;
  /** Filter columns the search asked for (scope.columns), by their names in the index. */
  values?: Record<string, unknown>;
  /** The row's text, when the query asked for it (withText, or withWords without counted words). */
  text?: string;
  /** The row's words counted already (row-words.ts), when the query asked for them (withWords) and they are held. */
  words?: RowWords;
  /**
   * The row's primary key and stored fields (JSON), when the query asked for them (withRows); a row held in memory
   * decodes them when first read (row-cache.ts).
   */
  row?: { readonly pk: string; readonly fields: string };
}

/** A text query: words ranked by BM25 (any may match); `exclude` words keep a row out. */
export interface TextQuery {
  /** Words that rank a row; any of them may match. */
  words: string;
  /** Words a row must hold (a quoted word or phrase), each of them. */
  require?: string[];
  /** Words a row must not hold. */
  exclude?: string[];
  /** Edits a word may differ by and still match (typo tolerance); 0 or absent: exact words only. */
  fuzziness?: number;
  /** Bring back each hit's text (to see which word a fuzzy query matched). */
  withText?: boolean;
  /**
   * Bring back what relevance feedback reads of each hit: its words counted already when the version's rows are held
   * with them (row-words.ts), otherwise its text.
   */
  withWords?: boolean;
  /** Rank words found in a row's heading higher (HEADING_BOOST); off for lookups that only ask whether a word is there. */
  headings?: boolean;
  /** Best headings whose weight is added (at least the query's limit): a row whose heading ranks deeper gets none. */
  headingDepth?: number;
  /**
   * Weighs each ranked row's heading in Quarry from the space's statistics (heading.ts): one query, no second one
   * over the headings. Absent (the statistics are being built), headings are ranked by a second query.
   */
  headingScorer?: HeadingScorer;
  /** Bring back each hit's primary key and stored fields (the rows of the page, read by the ranking query itself). */
  withRows?: boolean;
}

/** Which rows a search reads: these tables (null: every table of the space), this compiled filter, these columns. */
export interface SearchScope {
  srcs: string[] | null;
  where?: string | null;
  columns?: string[];
}

function scopeFilter(scope: SearchScope): string | null {
  const parts = [scope.srcs ? `src IN (${literalList(scope.srcs)})` : null, scope.where ? `(${scope.where})` : null].filter(Boolean);
  return parts.length > 0 ? parts.join(' AND ') : null;
}

/**
 * The hits of a result read column by column (an Arrow table's columns, not a proxy object per row: a search
 * counts up to COUNT_CAP matches, and per-row proxies were most of the time spent reading them).
 */
function hits(
  table: ArrowTable,
  score: (raw: number) => number,
  scoreColumn: string,
  columns: string[] | undefined,
  withText: boolean | undefined,
  heading?: HeadingScorer,
): IndexHit[] {
  // An empty answer may come without its columns.
  const raw = (table.getChild(scoreColumn)?.toArray() ?? []) as ArrayLike<number>;
  return hitsOf(table, Array.from(raw, (value) => score(Number(value))), columns, withText, heading);
}

/** The hits of a result's rows, with these scores (one per row, in order). */
function hitsOf(
  table: ArrowTable,
  scores: ArrayLike<number>,
  columns: string[] | undefined,
  withText: boolean | undefined,
  heading?: HeadingScorer,
): IndexHit[] {
  const strings = (name: string) => (table.getChild(name) ? ([...table.getChild(name)!] as Array<string | null>) : null);
  const rid = (strings('rid') ?? []) as string[];
  const src = (strings('src') ?? []) as string[];
  const values = (columns ?? []).map((c) => [c, [...(table.getChild(c) ?? [])]] as const);
  const text = withText ? strings('text') : null;
  const head = heading ? strings('head') : null;
  const [pk, fields] = [strings('pk'), strings('fields')];
  return rid.map((id, i) => {
    const found: IndexHit = { rid: id, src: src[i]!, score: scores[i]! };
    if (head) found.score += HEADING_BOOST * heading!.score(head[i]);
    if (values.length > 0) found.values = Object.fromEntries(values.map(([c, list]) => [c, list[i] ?? null]));
    if (text) found.text = text[i] ?? '';
    if (pk && fields) found.row = { pk: pk[i] ?? '{}', fields: fields[i] ?? '{}' };
    return found;
  });
}

export interface IndexStoreOptions {
  /** A folder, or an object store URI (s3://, gs://, az://) shared by several processes. */
  uri: string;
  /** How stale a reader's view of a table written by another process may be (LanceDB's read consistency interval). */
  readConsistencySeconds: number;
  /** LanceDB's storage options for an object store (endpoint, region, credentials: config.index.storageOptions). */
  storageOptions?: Record<string, string>;
  /**
   * Distinct words and stems the spaces' vocabularies may hold in memory together, for typo tolerance
   * (vocabulary.ts): the least recently searched spaces give theirs up first, and a space with more on its own is
   * checked by index lookups, as before. 0 turns vocabularies off.
   */
  vocabularyMaxTerms?: number;
  /**
   * What LanceDB keeps in memory for this process (its session's caches): the indexes' parts and the tables'
   * metadata, in bytes. Absent: LanceDB's defaults (6 GB and 1 GB), which let a large index hold gigabytes.
   */
  cacheBytes?: { index: number; metadata: number };
  /**
   * How long a version of a space stays after a newer one is written (INDEX_KEEP_VERSIONS_MS): readers of other
   * processes may still read it for their read-consistency interval and one search. Older ones are removed when a
   * sync optimizes the space, this long after a sync ends (job-runner.ts) and on the schedule (cleanUp).
   */
  keepVersionsMs?: number;
  /**
   * Bytes the spaces' rows may take in this process (row-cache.ts): each space's current version's ranked columns,
   * text and stored fields, read once so that a search asks the index for its ranking alone. The least recently
   * searched spaces give theirs up first; a space larger on its own is read from the index column by column, as
   * before. 0 or absent: off.
   */
  rowCacheBytes?: number;
  /** Told when a space's rows are held in memory or found too large to hold (an operator's view of the row cache). */
  logger?: Pick<Logger, 'info'>;
}

/**
 * A space's rows in memory, of one version, and their reading: as for the vocabulary, a
 * version is read in the background at most once per four times the last read's duration, and never again when it
 * was found larger than the budget.
 */
interface RowsState {
  ready: VersionRows | null;
  /**
   * The last rows read with postings (and places by rid): the same as `ready` once its postings are built; until
   * then an older version's, which keeps ranking the space beside the rows written since (written-rows.ts).
   */
  ranking: VersionRows | null;
  building: Promise<void> | null;
  nextBuildAt: number;
  tooLarge: number | null;
  usedAt: number;
}

/** A space's vocabulary as a search uses it: of the version it reads (`current`), or of an older one. */
export interface SearchVocabulary {
  vocabulary: SpaceVocabulary;
  current: boolean;
}

/** Words and stems held in memory by default: about 64 MB (about 32 bytes each, docs/benchmarks.md). */
export const VOCABULARY_MAX_TERMS = 2_000_000;
/** Rows' text read between two yields to other work while a vocabulary is built. */
const VOCABULARY_YIELD_CHARS = 64 * 1024;

/**
 * A space's vocabulary and its making. It describes one version of the space's table: any write (here or in another
 * process) makes a new version. Until the new version's is built, in the background, searches use the last one built
 * and look up in the index the words it lacks (typos.ts); builds start at most once per four times the last one's
 * duration, so a space written page after page by a sync, or change after change by a stream, is not read whole
 * after every write.
 */
interface VocabularyState {
  ready: { version: number; vocabulary: SpaceVocabulary } | null;
  building: Promise<void> | null;
  nextBuildAt: number;
  /** A version found to hold more words than the limit: not read again until it changes. */
  tooLarge: number | null;
  usedAt: number;
}

/** The limit all spaces' vocabularies share, and how one that was just built makes room. */
interface VocabularyBudget {
  maxTerms: number;
  fit(built: VocabularyState): void;
}

const noVocabulary = (): VocabularyState => ({ ready: null, building: null, nextBuildAt: 0, tooLarge: null, usedAt: 0 });

/** Ids Quarry writes into LanceDB filters: generated, never from a caller. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,80}$/;
/** How long an older version of a space is kept by default (LanceDB's own default keeps them 7 days). */
export const KEEP_OLD_VERSIONS_MS = 5 * 60_000;
/** Vectors a space holds before an approximate index (IVF_FLAT) is worth building; below, a flat scan is exact and fast. */
export const VECTOR_INDEX_MIN_ROWS = 10_000;

function literalList(ids: string[]): string {
  for (const id of ids) if (!SAFE_ID.test(id)) throw new Error(`not an index id: ${JSON.stringify(id)}`);
  return ids.map((id) => `'${id}'`).join(', ');
}

/** Rows as LanceDB takes them: filter columns are columns of their own. */
function records(rows: IndexRow[]): Array<Record<string, unknown>> {
  return rows.map(({ filters, ...row }) => (filters ? { ...row, ...filters } : row));
}

/** BM25 over a text column, without positions (an index about 7 times smaller; phrases are matched word by word). */
function textIndex(lancedb: Awaited<ReturnType<typeof loadLance>>['lancedb']) {
  return lancedb.Index.fts({ withPosition: false, maxTokenLength: MAX_TOKEN_BYTES });
}

/** Where the index is kept, as health names it: the URI's scheme (`s3`, `gs`, `file`...), or `folder` for a path. */
export function storageKind(uri: string): string {
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri)?.[1]?.toLowerCase() ?? 'folder';
}

/** An index URI of an object store (`s3://`, `gs://`, `az://`, ...) rather than a folder. */
export function isObjectStore(uri: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(uri) && !/^file:/i.test(uri);
}

export function spaceName(userId: string, environment: string): string {
  const name = `space_${userId}_${environment}`;
  if (!SAFE_ID.test(name)) throw new Error(`not a search space name: ${JSON.stringify(name)}`);
  return name;
}

/** What the object store said, without the engine's source locations and repeated causes. */
export function storageFailure(error: unknown): string {
  const message = String((error as Error)?.message ?? error).replace(/^lance error:\s*/i, '');
  const cut = message.search(/, \/\S+\.rs:\d+|\s+Caused by:/);
  return (cut > 0 ? message.slice(0, cut) : message).slice(0, 500);
}

/**
 * Reads one version's kept columns (row-cache.ts) by one scan with row ids; null when they take more than `budget`
 * bytes, known from the first batch's bytes per row (a larger space is not read through to find out). Other work
 * runs between batches.
 */
async function readRows(table: Table, version: number, budget: number): Promise<VersionRows | null> {
  const present = new Set((await table.schema()).fields.map((f) => f.name));
  const columns = ROW_COLUMNS.filter((c) => present.has(c));
  const total = await table.countRows();
  const builder = new VersionRowsBuilder();
  let read = 0;
  for await (const batch of table.query().select(columns).withRowId()) {
    const data = (name: string) => (batch.getChild(name)?.data as Utf8Data[] | undefined) ?? null;
    builder.addBatch(batch.getChild('_rowid')!.toArray() as BigUint64Array, Object.fromEntries(columns.map((c) => [c, data(c)])), batch.numRows);
    read += batch.numRows;
    // What the whole version would take at this batch's bytes per row (no more than the bytes held, once all is read).
    if (read > 0 && (builder.bytes / read) * Math.max(total, read) > budget) return null;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return builder.finish(version);
}

/**
 * The hits of a ranking that brought back row ids and scores only, their columns read from the rows in memory. The
 * rows held may be of an older version than the ranking's (the space was written since, and the new version's rows
 * are being read): a row id names the same row in every version that holds it (LanceDB's row ids are row addresses,
 * a fragment and an offset, and a written row goes to a new fragment, never over another row), so a ranked row the
 * older version holds is read from it, and only the rows written since are taken from the index by id (`take`).
 * Null when those rows could not be taken as ranked (the space was written again meanwhile).
 */
async function hitsFromMemory(
  table: ArrowTable,
  rows: VersionRows,
  columns: string[] | undefined,
  asked: { text?: boolean; words?: boolean; rows?: boolean },
  heading: HeadingScorer | undefined,
  take: (rowIds: bigint[], columns: string[]) => Promise<ArrowTable>,
): Promise<IndexHit[] | null> {
  // An empty answer may come without its columns.
  const ids = (table.getChild('_rowid')?.toArray() ?? new BigUint64Array(0)) as BigUint64Array;
  const scores = (table.getChild('_score')?.toArray() ?? []) as ArrayLike<number>;
  const held: number[] = [];
  const places: number[] = [];
  const written: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const at = rows.indexOf(ids[i]!);
    if (at < 0) written.push(i);
    else {
      held.push(i);
      places.push(at);
    }
  }
  const valuesOf = (picked: number[]) => (columns ?? []).map((c) => {
    const list = [...(table.getChild(c) ?? [])];
    return [c, picked.map((i) => list[i])] as const;
  });
  const fromMemory = hitsAt(places, held.map((i) => Number(scores[i])), rows, valuesOf(held), asked, heading);
  if (written.length === 0) return fromMemory;
  const withText = asked.text === true || asked.words === true;
  const wanted = ['rid', 'src', ...(columns ?? []), ...(withText ? ['text'] : []), ...(heading ? ['head'] : []), ...(asked.rows ? ['pk', 'fields'] : [])];
  // The space may have been written again since the ranking (a compaction moves every row to new ids): a row not
  // taken as ranked makes the caller read the ranking again, with its columns.
  const taken = await take(written.map((i) => ids[i]!), wanted).catch(() => null);
  const takenIds = taken?.getChild('_rowid')?.toArray() as BigUint64Array | undefined;
  // Matched to the ranking by row id (taken rows come in no promised order).
  const rankOf = new Map(written.map((i) => [ids[i]!, i]));
  const takenRanks = Array.from(takenIds ?? [], (id) => rankOf.get(id) ?? -1);
  if (!taken || takenRanks.length !== written.length || new Set(takenRanks).size !== written.length || takenRanks.includes(-1)) return null;
  const fromIndex = hitsOf(taken, takenRanks.map((i) => Number(scores[i])), columns, withText, heading);
  const ranked = new Array<IndexHit>(ids.length);
  held.forEach((i, k) => (ranked[i] = fromMemory[k]!));
  takenRanks.forEach((i, k) => (ranked[i] = fromIndex[k]!));
  return ranked;
}

/**
 * The best `limit` rows of the held version's postings (less those written or deleted since) and of the rows written
 * since (written-rows.ts), by their text's score; each row's heading weighed after, as on the postings alone.
 */
function hitsWithWritten(
  rows: VersionRows,
  written: WrittenSince,
  stems: string[],
  limit: number,
  srcs: string[] | null,
  asked: { text?: boolean; words?: boolean; rows?: boolean },
  heading: HeadingScorer | undefined,
): IndexHit[] {
  const postings = rows.postings!;
  const fresh = written.rank(rows, postings, stems, limit, srcs);
  const ranked = postings.rank(stems, limit, srcs, fresh.skip);
  // Both lists come best first: merged to the best `limit` of the two.
  const places: number[] = [];
  const scores: number[] = [];
  let i = 0;
  let j = 0;
  while (i + j < limit && (i < ranked.places.length || j < fresh.hits.length)) {
    if (j >= fresh.hits.length || (i < ranked.places.length && ranked.scores[i]! >= fresh.hits[j]!.score)) {
      places.push(ranked.places[i]!);
      scores.push(ranked.scores[i++]!);
    } else j += 1;
  }
  const found = hitsAt(places, scores, rows, [], asked, heading);
  const withText = asked.text === true || asked.words === true;
  for (const { score, row } of fresh.hits.slice(0, j)) {
    const hit: IndexHit = { rid: row.rid, src: row.src, score };
    if (heading) hit.score += HEADING_BOOST * heading.score(row.head);
    // Relevance feedback counts a written row's words from its text (feedback.ts).
    if (withText) hit.text = row.text;
    if (asked.rows) hit.row = { pk: row.pk, fields: row.fields };
    found.push(hit);
  }
  return found.sort((a, b) => b.score - a.score);
}

/** The hits at these places of the version's rows, with these scores (and these columns' values, in the same order). */
function hitsAt(
  places: ArrayLike<number>,
  scores: ArrayLike<number>,
  rows: VersionRows,
  values: ReadonlyArray<readonly [string, readonly unknown[]]>,
  asked: { text?: boolean; words?: boolean; rows?: boolean },
  heading?: HeadingScorer,
): IndexHit[] {
  const words = asked.words ? rows.words : null;
  const withText = asked.text || (asked.words && !words);
  const found: IndexHit[] = [];
  for (let i = 0; i < places.length; i++) {
    const at = places[i]!;
    // The postings know each row's table by number: one string fewer to decode per ranked row.
    const src = rows.postings ? rows.postings.srcAt(at) : (rows.value('src', at) ?? '');
    const hit: IndexHit = { rid: rows.value('rid', at) ?? '', src, score: Number(scores[i]) };
    if (heading) hit.score += HEADING_BOOST * heading.score(rows.value('head', at));
    if (values.length > 0) hit.values = Object.fromEntries(values.map(([c, list]) => [c, list[i] ?? null]));
    if (withText) hit.text = rows.value('text', at) ?? '';
    if (words) hit.words = words.at(at);
    if (asked.rows) hit.row = rows.rowAt(at);
    found.push(hit);
  }
  return found;
}

/** A space's column names as of the version they were read at (IndexSpace.columnNames); null until read. */
interface ColumnsState {
  of: { version: number; names: ReadonlySet<string> } | null;
}

export class IndexStore {
  private readonly tables = new Map<string, Promise<Table | null>>();
  /** The version of each space whose indexes were loaded into the index cache (object stores only). */
  private readonly prewarmed = new Map<string, number>();
  private readonly locks = new Map<string, Mutex>();
  private readonly vocabularies = new Map<string, VocabularyState>();
  private readonly rowStates = new Map<string, RowsState>();
  private readonly columnStates = new Map<string, ColumnsState>();
  /** Each space's version as last read (seen-version.ts), shared by its searches and the reading of its rows. */
  private readonly versionStates = new Map<string, SeenVersion>();
  private readonly writtenStates = new Map<string, WrittenSince>();
  private readonly budget: VocabularyBudget = {
    maxTerms: VOCABULARY_MAX_TERMS,
    fit: (built) => {
      const ready = [...this.vocabularies.values()].filter((v) => v.ready && v !== built).sort((a, b) => a.usedAt - b.usedAt);
      let total = (built.ready?.vocabulary.terms ?? 0) + ready.reduce((sum, v) => sum + v.ready!.vocabulary.terms, 0);
      for (const least of ready) {
        if (total <= this.budget.maxTerms) break;
        total -= least.ready!.vocabulary.terms;
        least.ready = null;
      }
    },
  };
  private connecting: Promise<Connection> | null = null;
  private session: import('@lancedb/lancedb').Session | null = null;

  /** Bytes LanceDB holds in this process's caches now (null: LanceDB's default session, not measured). */
  cachedBytes(): number | null {
    return this.session ? Number(this.session.sizeBytes()) : null;
  }

  /** Connects on first use, so a server that never searches an index does not load the engine. */
  constructor(private readonly options: IndexStoreOptions) {
    this.budget.maxTerms = options.vocabularyMaxTerms ?? VOCABULARY_MAX_TERMS;
  }

  private connection(): Promise<Connection> {
    const caches = this.options.cacheBytes;
    this.connecting ??= loadLance().then(({ lancedb }) => {
      if (caches) this.session = new lancedb.Session(BigInt(caches.index), BigInt(caches.metadata));
      return lancedb.connect(this.options.uri, {
        // Nine tenths of the setting: a version read is reused for the last tenth (seen-version.ts).
        readConsistencyInterval: this.options.readConsistencySeconds * 0.9,
        storageOptions: this.options.storageOptions,
        ...(this.session ? { session: this.session } : {}),
      });
    });
    return this.connecting;
  }

  /**
   * Lists the index's tables, to learn at start that its object store answers with these settings: a wrong endpoint,
   * bucket or credentials then stops the start instead of failing every search later. Rejects with what the store said.
   */
  async checkReachable(): Promise<void> {
    try {
      await (await this.connection()).tableNames();
    } catch (error) {
      this.connecting = null; // a later use connects again
      throw new Error(storageFailure(error));
    }
  }

  /** The space if it exists (a search never creates one). */
  async space(name: string): Promise<IndexSpace | null> {
    let table = this.tables.get(name);
    if (!table) {
      table = this.connection().then((connection) => connection.openTable(name)).catch((error: unknown) => {
        this.tables.delete(name);
        if (/not found|does not exist/i.test(String((error as Error)?.message))) return null;
        throw error;
      });
      this.tables.set(name, table);
    }
    const opened = await table;
    if (!opened) this.tables.delete(name); // created later by a sync: look again next time
    if (!opened) return null;
    let words = this.vocabularies.get(name);
    if (!words) this.vocabularies.set(name, (words = noVocabulary()));
    let seen = this.versionStates.get(name);
    if (!seen) this.versionStates.set(name, (seen = new SeenVersion(this.options.readConsistencySeconds * 100)));
    if (isObjectStore(this.options.uri)) this.prewarm(name, opened, seen);
    const rows = this.cacheRows(name, opened, seen);
    let columns = this.columnStates.get(name);
    if (!columns) this.columnStates.set(name, (columns = { of: null }));
    const pinned = <T>(version: number, read: (table: Table) => Promise<T>) => this.pinned(name, version, read);
    let written = this.writtenStates.get(name) ?? null;
    if (!written && rows) this.writtenStates.set(name, (written = new WrittenSince()));
    return new IndexSpace(opened, this.lock(name), pinned, words, this.budget, this.options.keepVersionsMs, isObjectStore(this.options.uri), rows, columns, written, seen);
  }

  /**
   * The space's rows in memory (row-cache.ts): read in the background when the current version has none yet. Null
   * when the budget is 0.
   */
  private cacheRows(name: string, table: Table, seen: SeenVersion): RowsState | null {
    const budget = this.options.rowCacheBytes ?? 0;
    if (budget <= 0) return null;
    let state = this.rowStates.get(name);
    if (!state) this.rowStates.set(name, (state = { ready: null, ranking: null, building: null, nextBuildAt: 0, tooLarge: null, usedAt: 0 }));
    const current = state;
    current.usedAt = Date.now();
    if (current.building || Date.now() < current.nextBuildAt) return current;
    current.building = (async () => {
      const started = Date.now();
      try {
        const version = await seen.of(table);
        if (current.ready?.version === version || current.tooLarge === version) return;
        // The rows this process wrote since the postings' version rank beside them until they are many (written-rows.ts).
        const ranking = current.ranking;
        if (ranking && this.writtenStates.get(name)?.fewSince(ranking.version, version, ranking.rows)) return;
        const read = await this.pinned(name, version, (handle) => readRows(handle, version, budget));
        if (!read) {
          current.tooLarge = version;
          current.ranking = null;
          this.options.logger?.info({ space: name, version, budgetMb: budget / 1048576 }, 'index rows too large to hold in memory');
          return;
        }
        // Read from a handle held at the version, so the rows are that version's whatever was written meanwhile; kept
        // even when the space has moved on: a row id names the same row in every version that holds it (searchText).
        current.ready = read;
        this.fitRows(current, budget);
        this.options.logger?.info(
          { space: name, version, rows: read.rows, megabytes: Math.round(read.bytes / 1048576), ms: Date.now() - started },
          'index rows held in memory',
        );
        // Then each row's words, for relevance feedback (row-words.ts), within what the budget leaves.
        const counting = Date.now();
        const words = await countRowWords(read, budget - read.bytes);
        if (current.ready !== read) return; // dropped to make room, or replaced, meanwhile
        if (!words) {
          current.ranking = null;
          this.options.logger?.info({ space: name, version, budgetMb: budget / 1048576 }, 'index row words too large to hold in memory');
          return;
        }
        read.words = words;
        this.fitRows(current, budget);
        this.options.logger?.info(
          { space: name, version, words: words.words.folded.length, megabytes: Math.round(words.bytes / 1048576), ms: Date.now() - counting },
          'index row words counted',
        );
        // Then the postings of the rows' text, from the words counted (postings.ts), within what the budget leaves;
        // for a version the space has moved on from too: the rows written since rank beside them (written-rows.ts).
        const indexing = Date.now();
        const postings = await buildPostings(words, read, MAX_TOKEN_BYTES);
        if (current.ready !== read) return;
        if (!postings || read.bytes + postings.bytes > budget) {
          current.ranking = null;
          this.options.logger?.info({ space: name, version, built: postings !== null, budgetMb: budget / 1048576 }, 'index postings not held in memory');
          return;
        }
        read.postings = postings;
        read.ridPlaces = await placesByRid(read);
        if (current.ready !== read) return;
        current.ranking = read;
        this.writtenStates.get(name)?.drop(version);
        this.fitRows(current, budget);
        this.options.logger?.info(
          { space: name, version, rows: postings.documents, megabytes: Math.round(postings.bytes / 1048576), ms: Date.now() - indexing },
          'index postings held in memory',
        );
      } finally {
        current.nextBuildAt = Date.now() + 4 * (Date.now() - started);
      }
    })().catch(() => undefined).finally(() => (current.building = null));
    return current;
  }

  /**
   * Runs `read` on a handle of the space's table of its own, held at `version` (closed after): a scan of it reads
   * that version, whatever is written meanwhile through the space's shared handle.
   */
  private async pinned<T>(name: string, version: number, read: (table: Table) => Promise<T>): Promise<T> {
    const table = await (await this.connection()).openTable(name);
    try {
      await table.checkout(version);
      return await read(table);
    } finally {
      table.close();
    }
  }

  /** Drops the least recently searched spaces' rows until every space's rows fit the budget together. */
  private fitRows(built: RowsState, budget: number): void {
    const others = [...this.rowStates.values()].filter((s) => s.ready && s !== built).sort((a, b) => a.usedAt - b.usedAt);
    let total = (built.ready?.bytes ?? 0) + others.reduce((sum, s) => sum + s.ready!.bytes, 0);
    for (const least of others) {
      if (total <= budget) break;
      total -= least.ready!.bytes;
      least.ready = null;
      least.ranking = null;
    }
  }

  /**
   * On an object store, each version's indexes are loaded into LanceDB's index cache once, in the background: a
   * search would otherwise fetch the posting lists of its words, request by request, from the store (a local disk's
   * page cache answers those reads at once). Bounded by INDEX_CACHE_MB like any index read.
   */
  private prewarm(name: string, table: Table, seen: SeenVersion): void {
    void seen.of(table).then(async (version) => {
      if (this.prewarmed.get(name) === version) return;
      this.prewarmed.set(name, version);
      try {
        const started = Date.now();
        await Promise.all((await table.listIndices()).map((index) => table.prewarmIndex(index.name)));
        // What the index cache holds once this version's indexes are in it: more than INDEX_CACHE_MB means each
        // search reads parts of them from the store again (a request per query word).
        this.options.logger?.info(
          { space: name, version, cachedMb: Math.round((this.cachedBytes() ?? 0) / 1048576), ms: Date.now() - started },
          'index prewarmed',
        );
      } catch {
        this.prewarmed.delete(name); // the store is down, or the version went: a later search tries again
      }
    }, () => undefined);
  }

  /** The space, created with its schema and indexes when it is new (any process may race to create it). */
  async ensureSpace(name: string): Promise<IndexSpace> {
    const existing = await this.space(name);
    if (existing) {
      await existing.ensureHeading();
      return existing;
    }
    const { lancedb, arrow } = await loadLance();
    const text = (name: string, nullable = false) => new arrow.Field(name, new arrow.Utf8(), nullable);
    const schema = new arrow.Schema([text('rid'), text('src'), text('pk'), text('hash'), text('thash'), text('text', true), text('head', true), text('fields', true)]);
    await this.lock(name).runExclusive(async () => {
      const table = await (await this.connection()).createEmptyTable(name, schema, { mode: 'create', existOk: true });
      const indexes = new Set((await table.listIndices()).map((index) => index.columns.join(',')));
      // rid: merges and lookups by row; src: every search and sync filters by table; text: BM25.
      if (!indexes.has('rid')) await table.createIndex('rid', { config: lancedb.Index.btree() });
      if (!indexes.has('src')) await table.createIndex('src', { config: lancedb.Index.bitmap() });
      if (!indexes.has('text')) await table.createIndex('text', { config: textIndex(lancedb) });
      if (!indexes.has('head')) await table.createIndex('head', { config: textIndex(lancedb) });
    });
    this.tables.delete(name);
    this.columnStates.delete(name);
    this.versionStates.delete(name);
    return (await this.space(name))!;
  }

  /** Every space of the index (a table per user and environment). */
  async spaceNames(): Promise<string[]> {
    return (await (await this.connection()).tableNames()).filter((name) => name.startsWith('space_'));
  }

  /** The space's rows and the bytes its current version takes; zero for a space not made yet. */
  async spaceSize(name: string): Promise<{ rows: number; bytes: number }> {
    const space = await this.space(name);
    return space ? space.size() : { rows: 0, bytes: 0 };
  }

  /** Removes the space's versions older than keepVersionsMs and compacts it (the cleanup schedule); what was removed. */
  async cleanUp(name: string): Promise<{ versions: number; bytes: number }> {
    const space = await this.space(name);
    return space ? space.optimize() : { versions: 0, bytes: 0 };
  }

  async dropSpace(name: string): Promise<void> {
    await this.lock(name).runExclusive(async () => {
      this.tables.delete(name);
      this.vocabularies.delete(name);
      this.rowStates.delete(name);
      this.columnStates.delete(name);
      this.versionStates.delete(name);
      this.writtenStates.delete(name);
      const connection = await this.connection();
      if ((await connection.tableNames()).includes(name)) await connection.dropTable(name);
    });
  }

  async close(): Promise<void> {
    this.tables.clear();
    this.vocabularies.clear();
    this.rowStates.clear();
    this.columnStates.clear();
    this.versionStates.clear();
    this.writtenStates.clear();
    const connecting = this.connecting;
    this.connecting = null;
    if (connecting) (await connecting).close();
  }

  /** Writes to one space are serialised in this process; across processes, index jobs are claimed one per space. */
  private lock(name: string): Mutex {
    let lock = this.locks.get(name);
    if (!lock) this.locks.set(name, (lock = new Mutex()));
    return lock;
  }
}

/** What a write did to the space's rows: these written and deleted, or none (a fold, a compaction). */
type RowsChange = { rows: readonly WrittenRow[]; deleted: readonly string[] } | 'rows kept';

/** One search space's table. */
export class IndexSpace {
  constructor(
    private readonly table: Table,
    private readonly writes: Mutex,
    /** Runs a read on a handle of the table of its own, held at a version (IndexStore.pinned). */
    private readonly pinned: <T>(version: number, read: (table: Table) => Promise<T>) => Promise<T>,
    private readonly words: VocabularyState = noVocabulary(),
    private readonly budget: VocabularyBudget = { maxTerms: VOCABULARY_MAX_TERMS, fit: () => undefined },
    private readonly keepVersionsMs = KEEP_OLD_VERSIONS_MS,
    /**
     * The space is on an object store, where each row a query brings back costs a request of its own (a ranged GET
     * per row and column), where on a local disk it is a read the page cache answers.
     */
    readonly onObjectStore = false,
    /** The space's rows in memory (row-cache.ts); null: always read from the index. */
    private readonly cachedRows: RowsState | null = null,
    /**
     * The table's columns as of a version (columnNames), kept by the store for the space: a space is opened for each
     * search, and decoding the schema again each time was a twentieth of a search's work.
     */
    private readonly columns: ColumnsState = { of: null },
    /** What this process wrote to the space since its rows in memory were read (written-rows.ts); null: not kept. */
    private readonly written: WrittenSince | null = null,
    /** The table's version as last read, reused a moment (seen-version.ts); a space of its own: read every time. */
    private readonly seen: SeenVersion = new SeenVersion(0),
  ) {}

  /** The space's rows in memory for the version a search reads now, or null (read from the index). */
  private async rowsNow(): Promise<VersionRows | null> {
    return this.cachedRows?.ready ? this.rowsOf(await this.seen.of(this.table)) : null;
  }

  /** The rows held in memory when they are this version's, else null. */
  private rowsOf(version: number): VersionRows | null {
    const ready = this.cachedRows?.ready;
    return ready?.version === version ? ready : null;
  }

  /** Resolves when the reading of the space's rows into memory under way (if any) is done. */
  async rowsRead(): Promise<void> {
    await this.cachedRows?.building;
  }

  /** A search's ranked rows are read from memory, not column by column from the index (row-cache.ts). */
  async rowsInMemory(): Promise<boolean> {
    return (await this.rowsNow()) !== null;
  }

  /** Rows, and bytes of the current version's data and indexes. */
  async size(): Promise<{ rows: number; bytes: number }> {
    const stats = await this.table.stats();
    return { rows: stats.numRows, bytes: stats.totalBytes };
  }

  /** Versions of the space's table still on disk (each write makes one; old ones go at cleanup). */
  async versions(): Promise<number> {
    return (await this.table.listVersions()).length;
  }

  /**
   * The space's words as of the version a search reads now, or null while none is ready (one is then being built in
   * the background, unless the space holds more words than the limit).
   */
  async vocabulary(options: { now?: boolean } = {}): Promise<SpaceVocabulary | null> {
    const held = await this.searchVocabulary(options);
    return held?.current ? held.vocabulary : null;
  }

  /**
   * The space's words for a search: of the version it reads now (`current`), or else of the last version they were
   * built for while the current one's are built in the background. A space written all the time (a stream's batch
   * every half second) would otherwise have none most of the time, and every search would look its words up in the
   * index. Null when none was built yet, or the space holds more words than the limit.
   */
  async searchVocabulary(options: { now?: boolean } = {}): Promise<SearchVocabulary | null> {
    if (this.budget.maxTerms <= 0) return null;
    const version = await this.seen.of(this.table);
    const state = this.words;
    state.usedAt = Date.now();
    const ready = state.ready;
    if (ready?.version === version) return { vocabulary: ready.vocabulary, current: true };
    // Few rows written since by this process (written-rows.ts): the words of then stand for the space's until they are
    // many, as its rows in memory do; what they lack is looked up (typos.ts).
    const few = () => ready !== null && this.written?.fewSince(ready.version, version, ready.vocabulary.textStatistics([]).rows) === true;
    if (!state.building && state.tooLarge !== version && (options.now === true || (Date.now() >= state.nextBuildAt && !few()))) {
      state.building = this.buildVocabulary(state, version).catch(() => undefined).finally(() => (state.building = null));
    }
    return ready ? { vocabulary: ready.vocabulary, current: false } : null;
  }

  /**
   * Builds the vocabulary of the space as it is now (a sync wrote its last rows: the searches after it should find
   * their words ready rather than start reading them). Resolves when it is built or cannot be (never rejects).
   */
  async prepareVocabulary(): Promise<void> {
    // A build a search started during the sync reads an older version: the second turn builds the current one.
    for (let turn = 0; turn < 2; turn++) {
      if (await this.vocabulary({ now: true }).catch(() => null)) return;
      await this.words.building;
    }
  }

  /** Resolves when the vocabulary being built (if any) is done. */
  async vocabularyBuilt(): Promise<void> {
    await this.words.building;
  }

  /** Builds the vocabulary of `version`, read from a handle held at it: exact whatever is written meanwhile. */
  private async buildVocabulary(state: VocabularyState, version: number): Promise<void> {
    const started = Date.now();
    try {
      const vocabulary = await this.pinned(version, async (table) => {
        const builder = new VocabularyBuilder(MAX_TOKEN_BYTES);
        let chars = 0;
        const headed = (await table.schema()).fields.some((f) => f.name === 'head');
        for await (const batch of table.query().select(headed ? ['src', 'text', 'head'] : ['src', 'text'])) {
          const srcs = [...(batch.getChild('src') ?? [])] as string[];
          const texts = [...(batch.getChild('text') ?? [])] as Array<string | null>;
          const heads = headed ? ([...(batch.getChild('head') ?? [])] as Array<string | null>) : [];
          for (let i = 0; i < srcs.length; i++) {
            const text = texts[i] ?? '';
            builder.add(srcs[i]!, text, heads[i]);
            chars += text.length;
            // Reading a large space takes a while: searches go on between slices of it.
            if (chars >= VOCABULARY_YIELD_CHARS) {
              chars = 0;
              await new Promise((resolve) => setImmediate(resolve));
            }
          }
          if (builder.terms > this.budget.maxTerms) return null;
        }
        return builder.finish();
      });
      if (!vocabulary) {
        state.tooLarge = version;
        state.ready = null; // an older version's words would not fit either, give or take a few
        return;
      }
      if (state.ready && state.ready.version > version) return;
      state.ready = { version, vocabulary };
      this.budget.fit(state);
    } finally {
      state.nextBuildAt = Date.now() + 4 * (Date.now() - started);
    }
  }

  /** Inserts new rows and replaces changed ones, by rid. */
  async upsert(rows: IndexRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.write(async () => {
      const data = await this.arrowRows(rows);
      await this.table.mergeInsert('rid').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
    }, { rows, deleted: [] });
  }

  /** Appends rows known to be new (a table's first sync): no lookup of rows to replace. */
  async append(rows: IndexRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.write(async () => this.table.add(await this.arrowRows(rows)), { rows, deleted: [] });
  }

  /**
   * Runs a write to the table, one at a time in this process; what it changed is told to the rows written since the
   * rows in memory were read (`change`; absent: a change not told row by row, written-rows.ts).
   */
  private async write(run: () => Promise<unknown>, change?: RowsChange): Promise<void> {
    await this.writes.runExclusive(async () => {
      try {
        await this.recordWrite(run, change);
      } finally {
        // A search after the write reads the version it made (one asked for meanwhile is not kept).
        this.seen.forget();
      }
    });
  }

  /** What write does, holding `writes`: the write, then what it changed told to the rows written since. */
  private async recordWrite(run: () => Promise<unknown>, change?: RowsChange): Promise<void> {
    const written = this.written;
    if (!written) {
      await run();
      return;
    }
    const before = await this.table.version();
    try {
      await run();
    } catch (error) {
      written.lost(null);
      throw error;
    }
    const after = await this.table.version();
    if (after === before) return;
    // Kept only while postings can rank beside them, and the write leaves them few: else they would be held for
    // no search, or only until the space is read again (worthRecording).
    const ranking = this.cachedRows?.ranking;
    if (!change || !ranking) written.lost(after);
    else if (change === 'rows kept') written.kept(before, after);
    else if (worthRecording(change.rows.length + change.deleted.length, ranking.rows)) written.wrote(before, after, change.rows, change.deleted);
    else written.lost(after);
  }

  /** Rows as Arrow of the table's schema now (a write holds `writes`, so no column is added meanwhile). */
  private async arrowRows(rows: IndexRow[]): Promise<ArrowTable> {
    return rowsTable(await loadLance(), await this.table.schema(), records(rows));
  }

  async deleteRows(rids: string[]): Promise<void> {
    if (rids.length === 0) return;
    await this.write(() => this.table.delete(`rid IN (${literalList(rids)})`), { rows: [], deleted: rids });
  }

  /** Drops every row of these indexed tables (a table left the index, its connection was deleted). */
  async deleteSources(srcs: string[]): Promise<void> {
    if (srcs.length === 0) return;
    await this.write(() => this.table.delete(`src IN (${literalList(srcs)})`));
  }

  /** The stored state of these rows, by rid (absent: not in the index). */
  async existing(rids: string[]): Promise<Map<string, StoredState>> {
    const found = new Map<string, StoredState>();
    if (rids.length === 0) return found;
    const vectors = await this.hasVectors();
    const rows = await this.table.query()
      .where(`rid IN (${literalList(rids)})`)
      .select(vectors ? ['rid', 'hash', 'thash', 'vmodel'] : ['rid', 'hash', 'thash'])
      .limit(rids.length)
      .toArray();
    for (const row of rows) found.set(row.rid, { hash: row.hash, thash: row.thash, vmodel: row.vmodel ?? null });
    return found;
  }

  /** Vectors of this model already made for these texts (by text hash), anywhere in the space. */
  async vectorsFor(thashes: string[], vmodel: string): Promise<Map<string, number[]>> {
    const found = new Map<string, number[]>();
    if (thashes.length === 0 || !(await this.hasVectors())) return found;
    const rows = await this.table.query()
      .where(`thash IN (${literalList(thashes)}) AND vector IS NOT NULL`)
      .select(['thash', 'vmodel', 'vector'])
      .limit(thashes.length * 4)
      .toArray();
    for (const row of rows) if (row.vmodel === vmodel) found.set(row.thash, Array.from(row.vector as ArrayLike<number>));
    return found;
  }

  async countRows(src?: string): Promise<number> {
    return this.table.countRows(src === undefined ? undefined : `src = ${literalList([src])}`);
  }

  /** Every row of one indexed table, as (rid, pk) batches: a bounded-memory pass for finding rows gone at the source. */
  async *scanSource(src: string): AsyncGenerator<Array<{ rid: string; pk: string }>> {
    const query = this.table.query().where(`src = ${literalList([src])}`).select(['rid', 'pk']);
    for await (const batch of query) {
      // Column by column, not a row proxy each (toArray): a poll's delete pass scans every row of its table, and the
      // proxies took 250 ms of the server's thread per 100,000 rows, the columns 110 (docs/benchmarks.md).
      const rids = [...(batch.getChild('rid') ?? [])] as Array<string | null>;
      const pks = [...(batch.getChild('pk') ?? [])] as Array<string | null>;
      yield rids.map((rid, i) => ({ rid: String(rid), pk: String(pks[i]) }));
    }
  }

  /**
   * Folds new and changed rows into the indexes (until then they are found by a slower flat scan), compacts small
   * files, drops versions older than keepVersionsMs, and builds the vector index once the space has enough vectors.
   * Returns how many old versions, and bytes, were removed.
   */
  async optimize(): Promise<{ versions: number; bytes: number }> {
    let removed = { versions: 0, bytes: 0 };
    // No row changes: the rows written since stay the same (a compaction gives rows new ids, not new content).
    await this.write(async () => (removed = await this.optimizeNow()), 'rows kept');
    return removed;
  }

  /** What optimize does, holding `writes`. */
  private async optimizeNow(): Promise<{ versions: number; bytes: number }> {
    const { prune } = await this.table.optimize({ cleanupOlderThan: new Date(Date.now() - this.keepVersionsMs) });
    const removed = { versions: prune.oldVersionsRemoved, bytes: prune.bytesRemoved };
    if (!(await this.hasVectors())) return removed;
    const indexed = (await this.table.listIndices()).some((index) => index.columns.includes('vector'));
    if (indexed) return removed;
    const vectors = await this.table.countRows('vector IS NOT NULL');
    if (vectors < VECTOR_INDEX_MIN_ROWS) return removed;
    const { lancedb } = await loadLance();
    await this.table.createIndex('vector', {
      config: lancedb.Index.ivfFlat({ distanceType: 'cosine', numPartitions: Math.max(1, Math.round(Math.sqrt(vectors))) }),
    });
    return removed;
  }

  /**
   * Adds the `vector` and `vmodel` columns for vectors of `dimensions`; a space whose vectors have another length
   * (the embedding model changed) loses them, and the next sync of each semantic table embeds its rows again.
   */
  async ensureVectorColumn(dimensions: number): Promise<void> {
    const { arrow } = await loadLance();
    await this.write(async () => {
      const field = (await this.table.schema()).fields.find((f) => f.name === 'vector');
      const current = field?.type instanceof arrow.FixedSizeList ? field.type.listSize : null;
      if (current === dimensions) return;
      if (field) {
        for (const index of await this.table.listIndices()) if (index.columns.includes('vector')) await this.table.dropIndex(index.name);
        await this.table.dropColumns(['vector', 'vmodel']);
      }
      await this.table.addColumns([
        new arrow.Field('vector', new arrow.FixedSizeList(dimensions, new arrow.Field('item', new arrow.Float32(), true)), true),
        new arrow.Field('vmodel', new arrow.Utf8(), true),
      ]);
    });
  }

  /**
   * Adds the heading column and its BM25 index to a space made before rows had headings; its rows get their
   * heading at their table's next sync (the row hash covers it, so every row is written again).
   */
  async ensureHeading(): Promise<void> {
    if (await this.hasHeading()) return;
    const { lancedb, arrow } = await loadLance();
    await this.write(async () => {
      if (!(await this.hasHeading())) await this.table.addColumns([new arrow.Field('head', new arrow.Utf8(), true)]);
      const indexed = (await this.table.listIndices()).some((index) => index.columns.join(',') === 'head');
      if (!indexed) await this.table.createIndex('head', { config: textIndex(lancedb) });
    });
  }

  /** Adds the columns the index does not have yet (nullable: rows of other tables have no value). */
  async ensureColumns(columns: Array<{ physical: string; kind: 'number' | 'date' | 'boolean' | 'text' }>): Promise<void> {
    if (columns.length === 0) return;
    const { arrow } = await loadLance();
    await this.write(async () => {
      const present = new Set((await this.table.schema()).fields.map((f) => f.name));
      const fields = columns.filter((c) => !present.has(c.physical)).map((c) => new arrow.Field(
        c.physical,
        c.kind === 'boolean' ? new arrow.Bool() : c.kind === 'text' ? new arrow.Utf8() : new arrow.Float64(),
        true,
      ));
      if (fields.length > 0) await this.table.addColumns(fields);
    });
  }

  /**
   * Rows ranked by BM25 over their text, best first. `scope.srcs` null searches every table of the space (no filter
   * for LanceDB to evaluate over every row first); `scope.where` is a compiled filter (filters.ts); `scope.columns`
   * are filter columns each hit carries back (for sorting and facets).
   */
  async searchText(query: TextQuery, scope: SearchScope, limit: number): Promise<IndexHit[]> {
    if (scope.srcs?.length === 0 || limit <= 0 || query.words.trim() === '') return [];
    const exclude = query.exclude?.filter((w) => w.trim() !== '') ?? [];
    const require = query.require?.filter((w) => w.trim() !== '') ?? [];
    // The table's version is read once (seen-version.ts): the rows held and the columns are that version's.
    const version = await this.seen.of(this.table);
    const headings = query.headings === true && !query.fuzziness && (await this.columnNamesOf(version)).has('head');
    const inMemory = this.rowsOf(version);
    // The rows held, of this version or an older one (hitsFromMemory).
    const held = this.cachedRows?.ready ?? null;
    const scorer = headings && query.headingScorer?.matters ? query.headingScorer : undefined;
    const asked = { text: query.withText, words: query.withWords, rows: query.withRows };
    // Any of the words over whole tables, exactly as typed, with the version's rows held: ranked from its postings
    // (postings.ts), the index's scores without asking it.
    const plain = exclude.length === 0 && require.length === 0 && !query.fuzziness && !scope.where && (scope.columns?.length ?? 0) === 0;
    if (inMemory?.postings && plain && (!headings || query.headingScorer)) {
      const ranked = inMemory.postings.rank([...queryStems(query.words)], limit, scope.srcs);
      const found = hitsAt(ranked.places, ranked.scores, inMemory, [], asked, scorer);
      return scorer ? found.sort((a, b) => b.score - a.score) : found;
    }
    // The same from an older version's postings, when every row written since was written by this process: those rows
    // ranked beside them from memory (written-rows.ts), the postings' rows they replaced or deleted passed over.
    const ranking = this.cachedRows?.ranking;
    if (ranking?.postings && ranking.ridPlaces && plain && (!headings || query.headingScorer) && this.written?.covers(ranking.version, version)) {
      return hitsWithWritten(ranking, this.written, [...queryStems(query.words)], limit, scope.srcs, asked, scorer);
    }
    const { lancedb } = await loadLance();
    const words = new lancedb.MatchQuery(query.words, 'text', {
      operator: lancedb.Operator.Or,
      ...(query.fuzziness ? { fuzziness: query.fuzziness, prefixLength: 0, maxExpansions: 50 } : {}),
    });
    type Clause = [import('@lancedb/lancedb').Occur, import('@lancedb/lancedb').FullTextQuery];
    // Required words gate the rows, excluded ones drop them; the words match and rank over the whole text.
    const fts = exclude.length === 0 && require.length === 0
      ? words
      : new lancedb.BooleanQuery([
        [require.length > 0 ? lancedb.Occur.Should : lancedb.Occur.Must, words],
        ...(require.length > 0 ? [[lancedb.Occur.Must, new lancedb.MatchQuery(require.join(' '), 'text', { operator: lancedb.Operator.And })] as Clause] : []),
        ...exclude.map((word): Clause => [lancedb.Occur.MustNot, new lancedb.MatchQuery(word, 'text', { operator: lancedb.Operator.Or })]),
      ]);
    const where = scopeFilter(scope);
    const run = (search: import('@lancedb/lancedb').FullTextQuery, columns: string[], rows = limit, withRowId = false) => {
      let query = this.table.query().fullTextSearch(search);
      if (where) query = query.where(where);
      query = query.select(columns).limit(rows);
      return (withRowId ? query.withRowId() : query).toArrow();
    };
    const withText = query.withText === true || query.withWords === true;
    const columns = ['rid', 'src', '_score', ...(scope.columns ?? []), ...(withText ? ['text'] : []), ...(query.withRows ? ['pk', 'fields'] : [])];
    // With rows in memory (this version's, or an older one's), the index is asked for row ids and scores alone.
    if (held && (!headings || query.headingScorer)) {
      const ranked = await run(fts, ['_score', ...(scope.columns ?? [])], limit, true);
      const take = (rowIds: bigint[], wanted: string[]) => this.table.takeRowIds(rowIds).select(wanted).withRowId().toArrow();
      const found = await hitsFromMemory(ranked, held, scope.columns, asked, scorer, take);
      if (found) return scorer ? found.sort((a, b) => b.score - a.score) : found;
    }
    // One query: each ranked row's heading comes back with it and is weighed here (heading.ts).
    if (headings && query.headingScorer) {
      const found = hits(await run(fts, scorer ? [...columns, 'head'] : columns), (raw) => raw, '_score', scope.columns, withText, scorer);
      return scorer ? found.sort((a, b) => b.score - a.score) : found;
    }
    // Without the statistics (being gathered), the heading's words are ranked by a second query beside the first
    // and added to the text's scores here: one boolean query with a "should" clause on the heading ranks the same
    // rows alike but took several times as long (docs/benchmarks.md). A heading outside the best `limit` headings
    // adds nothing, which only touches rows far down a page that deep.
    const [table, headTable] = await Promise.all([
      run(fts, columns),
      headings ? run(new lancedb.MatchQuery(query.words, 'head', { operator: lancedb.Operator.Or }), ['rid', '_score'], Math.max(limit, query.headingDepth ?? limit)) : null,
    ]);
    const found = hits(table, (raw) => raw, '_score', scope.columns, withText);
    if (!headTable || headTable.numRows === 0) return found;
    const headScores = new Map(hits(headTable, (raw) => raw, '_score', undefined, false).map((hit) => [hit.rid, hit.score]));
    for (const hit of found) hit.score += HEADING_BOOST * (headScores.get(hit.rid) ?? 0);
    return found.sort((a, b) => b.score - a.score);
  }

  /** Rows nearest to `vector` by cosine similarity (score = similarity, at least `minSimilarity`), in `scope`. */
  async searchVector(vector: Float32Array, scope: SearchScope, limit: number, minSimilarity: number): Promise<IndexHit[]> {
    if (scope.srcs?.length === 0 || limit <= 0 || !(await this.hasVectors())) return [];
    const where = scopeFilter(scope);
    const table = await this.table.vectorSearch(Array.from(vector))
      .column('vector')
      .distanceType('cosine')
      .where(where ? `(${where}) AND vector IS NOT NULL` : 'vector IS NOT NULL')
      .distanceRange(undefined, 1 - minSimilarity)
      .select(['rid', 'src', '_distance', ...(scope.columns ?? [])])
      .limit(limit)
      .toArrow();
    return hits(table, (distance) => 1 - distance, '_distance', scope.columns, false);
  }

  /** The text of these rows, by rid (the rows pseudo-relevance feedback reads, feedback.ts). */
  async texts(rids: string[]): Promise<Map<string, string>> {
    if (rids.length === 0) return new Map();
    const rows = await this.table.query().where(`rid IN (${literalList(rids)})`).select(['rid', 'text']).limit(rids.length).toArray();
    return new Map(rows.map((row: { rid: string; text: string | null }) => [String(row.rid), row.text ?? '']));
  }

  /** The stored rows with these rids (the page of a search), in no particular order. */
  async rows(rids: string[]): Promise<Array<Pick<IndexRow, 'rid' | 'src' | 'pk' | 'fields'>>> {
    if (rids.length === 0) return [];
    return this.table.query()
      .where(`rid IN (${literalList(rids)})`)
      .select(['rid', 'src', 'pk', 'fields'])
      .limit(rids.length)
      .toArray();
  }

  private async hasHeading(): Promise<boolean> {
    return (await this.columnNames()).has('head');
  }

  private async hasVectors(): Promise<boolean> {
    return (await this.columnNames()).has('vector');
  }

  /**
   * The table's column names, read once per version: every search asks whether the space has headings, and
   * `schema()` decodes the whole schema each time (about 0.3 ms a call, a tenth of a rare word's ranking query),
   * where `version()` answers from the handle. The version is read first: the names read after it are of that
   * version or a later one, never of an older one.
   */
  private async columnNames(): Promise<ReadonlySet<string>> {
    return this.columnNamesOf(await this.seen.of(this.table));
  }

  /** The column names of `version` or of a later one (read once per version, as columnNames). */
  private async columnNamesOf(version: number): Promise<ReadonlySet<string>> {
    let known = this.columns.of;
    if (known?.version !== version) {
      known = { version, names: new Set((await this.table.schema()).fields.map((f) => f.name)) };
      this.columns.of = known;
    }
    return known.names;
  }
}
