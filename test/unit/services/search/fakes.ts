/**
 * In-memory stand-ins for what a search reads: connections, their tables, the index's state, and two engines that
 * rank rows held in memory (a row matches when it holds a query word; its score is how many it holds). No database,
 * no LanceDB: the search core's own rules are what these tests exercise.
 */
import type { TableSchema } from '../../../../src/connectors/index.js';
import type { ApiKeyRecord } from '../../../../src/repositories/api-key-repository.js';
import type { DatabaseConnectionRecord } from '../../../../src/repositories/database-connection-repository.js';
import type { IndexTableRecord } from '../../../../src/repositories/index-table-repository.js';
import type { UserRecord } from '../../../../src/repositories/user-repository.js';
import type { QueryNode } from '../../../../src/search-core/boolean-query.js';
import type { DatabaseAnswer, Engine, EngineHit, RankAsk, Ranking, ResultRow } from '../../../../src/search-core/engine.js';
import { planIndex, type IndexPlan, type IndexSearch } from '../../../../src/search-index/index-engine.js';
import type { KeyCaller } from '../../../../src/services/callers.js';
import { planLive, type LivePlan, type LiveSearch } from '../../../../src/services/search/live-search.js';
import type { IndexState } from '../../../../src/services/search/search-catalog.js';

export const record = (id: string, over: Partial<DatabaseConnectionRecord> = {}): DatabaseConnectionRecord => ({
  id, userId: 'usr_1', name: `name of ${id}`, engine: 'postgres', environment: 'live', indexEnabled: true, tables: null,
  updatedAt: new Date(1_000), ...over,
}) as DatabaseConnectionRecord;

export const table = (name: string, over: Partial<TableSchema> = {}): TableSchema => ({
  name, schema: null, primaryKey: ['id'], rowEstimate: 10,
  columns: [{ name: 'id', type: 'integer', searchable: false }, { name: 'body', type: 'text', searchable: true }, { name: 'price', type: 'integer', searchable: false }],
  textColumns: ['body'], fullTextIndexes: [], ...over,
});

export const indexed = (connectionId: string, tableName: string, over: Partial<IndexTableRecord> = {}): IndexTableRecord => ({
  id: `src_${connectionId}_${tableName}`, connectionId, tableName, syncedAt: new Date(5_000), syncStartedAt: new Date(4_000), changesAsOf: null,
  keyColumns: ['id'], textColumns: ['body'], semantic: false, vectorModel: null,
  filterableColumns: ['price'], sortableColumns: ['price'], syncedColumns: { filterable: ['price'], sortable: ['price'] }, ...over,
}) as IndexTableRecord;

export const caller = (over: { plan?: string; kind?: string } = {}): KeyCaller => ({
  kind: 'key',
  user: { id: 'usr_1', plan: over.plan ?? 'pro' } as UserRecord,
  key: { id: 'key_1', environment: 'live', kind: over.kind ?? 'secret' } as ApiKeyRecord,
});

/** A catalog over fixed tables and index entries; `failing` connections cannot be read. */
export function fakeCatalog(tables: Record<string, TableSchema[]>, index: IndexTableRecord[] = [], failing: string[] = []) {
  return {
    tables: async (r: DatabaseConnectionRecord) => {
      if (failing.includes(r.id)) throw new Error('unreachable');
      return tables[r.id] ?? [];
    },
    indexState: async (ids: string[]): Promise<IndexState> => ({ tables: index.filter((t) => ids.includes(t.connectionId)), liveJobs: [] }),
  };
}

export interface Row {
  id: number;
  body: string;
}

/** Whether the text meets the query's condition (its parsed tree: words, phrases, and/or/not). */
function meets(node: QueryNode, words: string[], text: string): boolean {
  switch (node.kind) {
    case 'term': return words.includes(node.word.toLowerCase());
    case 'phrase': return text.includes(node.words.join(' ').toLowerCase());
    case 'and': return node.children.every((c) => meets(c, words, text));
    case 'or': return node.children.some((c) => meets(c, words, text));
    case 'not': return !meets(node.child, words, text);
  }
}

/** The positive words and phrases of a tree. */
function leaves(node: QueryNode): QueryNode[] {
  if (node.kind === 'term' || node.kind === 'phrase') return [node];
  return node.kind === 'not' ? [] : node.kind === 'and' || node.kind === 'or' ? node.children.flatMap(leaves) : [];
}

/** 0 when the text does not meet the query; else how many of its words and phrases it holds. */
function wordsHeld(body: string, ask: RankAsk): number {
  const root = ask.words.root;
  if (!root) return 0;
  const text = body.toLowerCase();
  const words = text.split(/\W+/);
  if (!meets(root, words, text)) return 0;
  return Math.max(1, leaves(root).filter((leaf) => meets(leaf, words, text)).length);
}

const byScore = <T extends { score: number; id: number }>(a: T, b: T) => b.score - a.score || a.id - b.id;

/** The index: one list over every source, scored, matches counted per connection; planned as the real one plans. */
export class FakeIndexEngine implements Engine<IndexSearch, IndexPlan, { src: string; row: Row }> {
  readonly name = 'index';
  readonly plan = planIndex;
  readonly asked: RankAsk[] = [];
  failWith: Error | null = null;

  /** Rows by source id. */
  constructor(private readonly rows: Record<string, Row[]>) {}

  async rank(plan: IndexPlan, ask: RankAsk): Promise<Ranking<{ src: string; row: Row }>> {
    if (this.failWith && plan.sources.length > 0) throw this.failWith;
    this.asked.push(ask);
    const matches = plan.sources.flatMap((source) => (this.rows[source.src] ?? [])
      .map((row) => ({ source, row, id: row.id, score: wordsHeld(row.body, ask) * (plan.refinements.weights.get(source.connectionId) ?? 1) })))
      .filter((m) => m.score > 0).sort(byScore);
    const hits = matches.slice(0, ask.window.top).map((m, i): EngineHit<{ src: string; row: Row }> => ({
      id: `i:${m.source.src}:${m.row.id}`, rank: i + 1, score: m.score, databaseId: m.source.connectionId, engine: this.name, ref: { src: m.source.src, row: m.row },
    }));
    const databases = new Map(plan.databases.map((id): [string, DatabaseAnswer] => [id, {
      status: 'ok', error: null, tookMs: null, matches: matches.filter((m) => m.source.connectionId === id).length, approximate: false, byRankOnly: false,
    }]));
    return {
      lists: hits.length > 0 ? [hits] : [], scored: true, total: matches.length, totalIsEstimate: false, databases,
      tables: plan.sources.map((s) => ({ databaseId: s.connectionId, table: s.tableName, scanned: false })), corrections: [], facets: {}, facetsAreEstimate: false,
    };
  }

  async details(plan: IndexPlan, refs: Array<{ src: string; row: Row }>): Promise<Array<ResultRow | null>> {
    return refs.map(({ src, row }) => {
      const source = plan.sources.find((s) => s.src === src)!;
      return { table: source.tableName, primaryKey: { id: row.id }, fields: { ...row }, snippet: row.body, matchedColumns: ['body'] };
    });
  }
}

/**
 * The live databases: each table a list of its own, unscored across tables; `down` databases answer with an error.
 * Planned as the real one plans.
 */
export class FakeLiveEngine implements Engine<LiveSearch, LivePlan, { table: string; row: Row }> {
  readonly name = 'live';
  readonly plan = planLive;
  readonly asked: Array<{ plan: LivePlan; ask: RankAsk }> = [];

  /** Rows by database id and table name. */
  constructor(private readonly rows: Record<string, Record<string, Row[]>>, private readonly down: string[] = []) {}

  async rank(plan: LivePlan, ask: RankAsk): Promise<Ranking<{ table: string; row: Row }>> {
    this.asked.push({ plan, ask });
    const ranking: Ranking<{ table: string; row: Row }> = {
      lists: [], scored: false, total: 0, totalIsEstimate: false, databases: new Map(), tables: [], corrections: [], facets: {}, facetsAreEstimate: false,
    };
    for (const { record, skip } of plan.databases) {
      if (this.down.includes(record.id)) {
        ranking.databases.set(record.id, { status: 'error', error: { code: 'DATABASE_UNREACHABLE', message: 'gone' }, tookMs: 7, matches: 0, approximate: false, byRankOnly: true });
        continue;
      }
      let matches = 0;
      for (const [name, rows] of Object.entries(this.rows[record.id] ?? {})) {
        if (skip.has(name) || (plan.filters.tables?.length && !plan.filters.tables.includes(name))) continue;
        const found = rows.map((row) => ({ row, id: row.id, score: wordsHeld(row.body, ask) })).filter((m) => m.score > 0).sort(byScore);
        ranking.lists.push(found.slice(0, ask.window.top).map((m, i) => ({
          id: `${record.id}:${name}:${m.row.id}`, rank: i + 1, score: m.score, databaseId: record.id, engine: this.name, ref: { table: name, row: m.row },
        })));
        ranking.tables.push({ databaseId: record.id, table: name, scanned: false });
        matches += found.length;
      }
      ranking.total += matches;
      ranking.databases.set(record.id, { status: 'ok', error: null, tookMs: 3, matches, approximate: false, byRankOnly: true });
    }
    return ranking;
  }

  async details(_plan: LivePlan, refs: Array<{ table: string; row: Row }>): Promise<Array<ResultRow | null>> {
    return refs.map(({ table: name, row }) => ({ table: name, primaryKey: { id: row.id }, fields: { ...row }, snippet: row.body, matchedColumns: ['body'] }));
  }
}
