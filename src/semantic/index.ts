/**
 * Semantic search (issue 7): the public surface of this folder and its wiring. Services and handlers import from
 * here, never from the files behind it.
 */
import type { TableSchema, SqlExecutor } from '../connectors/index.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../lib/logger.js';
import type { TierName } from '../rate-limit/index.js';
import type { DatabaseConnectionRecord } from '../repositories/database-connection-repository.js';
import { semanticIndexJobRepository } from '../repositories/semantic-index-job-repository.js';
import { semanticVectorRepository } from '../repositories/semantic-vector-repository.js';
import type { KeyCaller } from '../services/callers.js';
import { SemanticJobRunner } from './job-runner.js';
import { LocalEmbeddingProvider } from './local-provider.js';
import type { EmbeddingProvider } from './provider.js';
import { RemoteEmbeddingProvider } from './remote-provider.js';
import { SemanticIndexService } from './semantic-index-service.js';
import { semanticSearch, type SemanticSearchFn } from './semantic-search.js';
import { VectorCache } from './vector-cache.js';

export { EmbeddingError, type EmbeddingProvider, type EmbedPriority } from './provider.js';
export { LOCAL_PROVIDER_ID, LocalEmbeddingProvider } from './local-provider.js';
export { RemoteEmbeddingProvider, type RemoteProviderOptions } from './remote-provider.js';
export { SEMANTIC_ROWS_PER_TABLE } from './tier-limits.js';
export {
  semanticIndexRequired,
  semanticSearch,
  type NotIndexedReason,
  type NotIndexedTable,
  type SemanticHit,
  type SemanticSearchDeps,
  type SemanticSearchFn,
  type SemanticSearchInput,
  type SemanticSearchResult,
} from './semantic-search.js';

/** The configured provider: the local model unless EMBEDDINGS_PROVIDER=remote. */
export function createEmbeddingProvider(settings: Config['embeddings']): EmbeddingProvider {
  if (settings.provider === 'remote') {
    return new RemoteEmbeddingProvider({ baseUrl: settings.url!, model: settings.model!, apiKey: settings.apiKey });
  }
  return new LocalEmbeddingProvider();
}

export interface SemanticDeps {
  config: Pick<Config, 'embeddings' | 'searchTimeoutMs'>;
  logger: Logger;
  databases: {
    owned(userId: string, databaseId: string): Promise<DatabaseConnectionRecord>;
    executorFor(record: DatabaseConnectionRecord): Promise<SqlExecutor>;
    tablesOf(record: DatabaseConnectionRecord): Promise<TableSchema[]>;
  };
  findConnection(id: string): Promise<DatabaseConnectionRecord | null>;
  /** The owner's plan (PlanService.planOf): it decides how many rows of a table are embedded. */
  planOf(userId: string): Promise<TierName>;
  limits: { admitAiRequest(caller: KeyCaller): Promise<void> };
  /** Tests and benchmarks may supply their own. */
  provider?: EmbeddingProvider;
  now?: () => number;
}

/** Everything semantic, wired once per server by the composition root. */
export function createSemantic(deps: SemanticDeps) {
  const provider = deps.provider ?? createEmbeddingProvider(deps.config.embeddings);
  const cache = new VectorCache(semanticVectorRepository);
  const runner = new SemanticJobRunner({
    jobs: semanticIndexJobRepository,
    vectors: semanticVectorRepository,
    provider,
    findConnection: deps.findConnection,
    executorFor: (record) => deps.databases.executorFor(record),
    tablesOf: (record) => deps.databases.tablesOf(record),
    logger: deps.logger,
    onEnded: (connectionId, tableName) => cache.invalidate(connectionId, tableName),
    queryTimeoutMs: Math.max(deps.config.searchTimeoutMs, 30_000),
    now: deps.now,
  });
  const index = new SemanticIndexService({
    owned: (userId, databaseId) => deps.databases.owned(userId, databaseId),
    tablesOf: (record) => deps.databases.tablesOf(record),
    planOf: deps.planOf,
    jobs: semanticIndexJobRepository,
    runner,
    providerId: provider.id,
    now: deps.now,
  });
  const search: SemanticSearchFn = (input) =>
    semanticSearch({ jobs: semanticIndexJobRepository, cache, provider, limits: deps.limits, tablesOf: (record) => deps.databases.tablesOf(record) }, input);
  return {
    provider,
    cache,
    runner,
    index,
    /** The engine for searchMode semantic and hybrid (see semantic-search.ts). */
    search,
    /** Resumes jobs left by a stopped or crashed process and starts the background runner. */
    start: () => runner.start(),
    /** A connection changed or went: its cached vectors are dropped (a deleted one's rows cascade in the store). */
    onConnectionChanged: (databaseId: string) => cache.invalidate(databaseId),
    /** Graceful stop: running jobs are queued again for the next start, then the model's worker stops. */
    async stop(): Promise<void> {
      await runner.stop();
      await provider.close();
    },
  };
}

export type Semantic = ReturnType<typeof createSemantic>;
