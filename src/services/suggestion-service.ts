/**
 * getSearchSuggestions (GET /api/v1/search/suggestions): completions of what the caller typed from their own past
 * queries (source `history`) and from other users' (source `popular`, only queries searched by at least
 * POPULAR_MIN_USERS distinct users and that found something), and "did you mean" spellings from the vocabulary of
 * the caller's connections in the key's environment (sampled per connection, kept VOCABULARY_TTL_MS).
 */
import type { components } from '../../generated/openapi.js';
import type { DatabaseConnectionRecord, DatabaseConnectionRepository } from '../repositories/database-connection-repository.js';
import type { SearchSuggestionRepository } from '../repositories/search-suggestion-repository.js';
import { TtlCache } from '../search/ttl-cache.js';
import { didYouMean, mergeVocabularies, sampleVocabulary, type Vocabulary } from '../search/vocabulary.js';
import type { KeyCaller } from './callers.js';
import { firstDatabases } from './search-fan-out.js';
import type { SearchService } from './search-service.js';

type Suggestions = components['schemas']['SuggestionsResponse']['data'];

export const POPULAR_MIN_USERS = 3;
export const SUGGESTION_DAYS = 90;
export const VOCABULARY_TTL_MS = 10 * 60_000;
const DEFAULT_LIMIT = 5;

export interface SuggestionDeps {
  connections: Pick<DatabaseConnectionRepository, 'listOwned'>;
  search: Pick<SearchService, 'schemaOf'>;
  queries: SearchSuggestionRepository;
  /** Budget of sampling one connection's vocabulary (SEARCH_TIMEOUT_MS). */
  timeoutMs: number;
  onError(error: unknown): void;
  now?: () => number;
}

export class SuggestionService {
  private readonly vocabularies = new TtlCache<Vocabulary>(VOCABULARY_TTL_MS, 500);
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
    const [own, popular, vocabulary] = await Promise.all([
      typed ? this.deps.queries.ownQueries(caller.user.id, typed, since, limit + 1) : [],
      typed ? this.deps.queries.popularQueries(typed, since, POPULAR_MIN_USERS, limit + 1) : [],
      this.vocabularyOf(caller),
    ]);
    const seen = new Set([typed.toLowerCase()]);
    const suggestions: Suggestions['suggestions'] = [];
    for (const [source, rows] of [['history', own], ['popular', popular]] as const) {
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

  private async vocabularyOf(caller: KeyCaller): Promise<Vocabulary> {
    const records = firstDatabases(caller.user, await this.deps.connections.listOwned(caller.user.id, caller.key.environment));
    const vocabularies = await Promise.all(records.map((record) => this.sample(record).catch(() => new Map<string, number>())));
    return mergeVocabularies(vocabularies);
  }

  private sample(record: DatabaseConnectionRecord): Promise<Vocabulary> {
    return this.vocabularies.get(record.id, `${record.updatedAt.getTime()}`, async () => {
      const { executor, schema } = await this.deps.search.schemaOf(record, this.now() + this.deps.timeoutMs);
      return sampleVocabulary(executor, schema, this.deps.timeoutMs);
    });
  }
}
