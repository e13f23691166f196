/**
 * getSearchSuggestions (GET /api/v1/search/suggestions): completions of what the caller typed from their own past
 * queries (source `history`) and of the word being typed from the vocabulary of their own connected data (source
 * `vocabulary`), and "did you mean" spellings from that vocabulary (the caller's connections in the key's
 * environment, sampled per connection, kept VOCABULARY_TTL_MS).
 *
 * Nothing comes from another account: suggestions shared across accounts let anyone who controls a few accounts
 * confirm a guess of what a victim searched for. A publishable key is public, so nothing anyone typed is suggested
 * through it either (one visitor must not see what another searched for); its completions and spelling fixes come
 * only from the databases and tables it may search.
 */
import type { components } from '../../../generated/openapi.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { SearchSuggestionRepository } from '../../repositories/search-suggestion-repository.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import { named } from '../../sql-search/targets.js';
import { completions, didYouMean, mergeVocabularies, sampleVocabularies, type SampledVocabulary, type Vocabulary } from '../../sql-search/vocabulary.js';
import type { KeyCaller } from '../callers.js';
import { searchScope } from '../../rules/key-scope.js';
import { firstDatabases } from './search-fan-out.js';
import type { SearchCatalog } from './search-catalog.js';

type Suggestions = components['schemas']['SuggestionsResponse']['data'];

export const SUGGESTION_DAYS = 90;
export const VOCABULARY_TTL_MS = 10 * 60_000;
const DEFAULT_LIMIT = 5;

export interface SuggestionDeps {
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  /** Each connection's executor and full-text indexes (the words are sampled through them). */
  catalog: Pick<SearchCatalog, 'liveSchema'>;
  queries: SearchSuggestionRepository;
  /** Budget of sampling one connection's vocabulary (SEARCH_TIMEOUT_MS). */
  timeoutMs: number;
  onError(error: unknown): void;
  now?: () => number;
}

export class SuggestionService {
  private readonly vocabularies = new TtlCache<SampledVocabulary>(VOCABULARY_TTL_MS, 500);
  private readonly now: () => number;

  constructor(private readonly deps: SuggestionDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** getSearchSuggestions */
  async suggest(caller: KeyCaller, input: { q: string; limit?: number }): Promise<Suggestions> {
    const limit = input.limit ?? DEFAULT_LIMIT;
    // Searches are recorded without NUL (search-service), and a NUL breaks the store's query.
    const typed = input.q.replace(/\u0000/g, '').trim();
    const since = new Date(this.now() - SUGGESTION_DAYS * 86_400_000);
    const pastQueries = typed !== '' && caller.key.kind !== 'publishable';
    const [own, vocabulary] = await Promise.all([
      pastQueries ? this.deps.queries.ownQueries(caller.user.id, typed, since, limit + 1) : [],
      this.vocabularyOf(caller),
    ]);
    const words = completions(typed, vocabulary, limit + 1).map(({ text, count }) => ({ query: text, count }));
    const seen = new Set([typed.toLowerCase()]);
    const suggestions: Suggestions['suggestions'] = [];
    for (const [source, rows] of [['history', own], ['vocabulary', words]] as const) {
      for (const row of rows) {
        const key = row.query.trim().toLowerCase();
        if (seen.has(key) || suggestions.length >= limit) continue;
        seen.add(key);
        suggestions.push({ text: row.query, source, count: row.count });
      }
    }
    return { query: input.q, suggestions, didYouMean: didYouMean(typed, vocabulary, Math.min(3, limit)) };
  }

  /** A connection changed or went: sample it again next time. */
  forget(databaseId: string): void {
    this.vocabularies.forget(databaseId);
  }

  /** The words of the connections (and tables) the key may search. */
  private async vocabularyOf(caller: KeyCaller): Promise<Vocabulary> {
    const scope = searchScope(caller.key, {});
    const own = scope.keyDefault ? new Set(scope.databases) : null;
    const records = firstDatabases(caller.user, (await this.deps.connections.listOwned(caller.user.id, caller.key.environment)).filter((record) => !own || own.has(record.id)));
    const tables = scope.tables ?? null;
    const vocabularies = await Promise.all(records.map(async (record) => {
      const sampled = await this.sample(record).catch((): SampledVocabulary => ({ all: new Map(), tables: [] }));
      return tables ? mergeVocabularies(sampled.tables.filter((t) => named(t.table, tables)).map((t) => t.vocabulary)) : sampled.all;
    }));
    return mergeVocabularies(vocabularies);
  }

  private sample(record: DatabaseConnectionRecord): Promise<SampledVocabulary> {
    return this.vocabularies.get(record.id, `${record.updatedAt.getTime()}`, async () => {
      const { executor, schema } = await this.deps.catalog.liveSchema(record, this.now() + this.deps.timeoutMs);
      return sampleVocabularies(executor, schema, this.deps.timeoutMs);
    });
  }
}
