/** The connection layer's public surface. Services import from here, never from the engine files. */
export type {
  ConnectionSettings,
  Engine,
  PooledExecutor,
  PoolOptions,
  PoolStats,
  QueryOptions,
  SqlExecutor,
  TableSchema,
} from './types.js';
export { DEFAULT_POOL_OPTIONS } from './types.js';
export {
  ConnectorError,
  CONNECTOR_ERROR_CODES,
  isConnectorError,
  isPolicyError,
  isValueTooLarge,
  toConnectorError,
  type ConnectorErrorCode,
  type ConnectorErrorDetails,
} from './errors.js';
export {
  classifyAddress,
  parseAllowlist,
  resolveAllowedHost,
  type AddressClass,
  type HostPolicy,
  type LookupAll,
  type ResolvedHost,
} from './host-policy.js';
export { resolveSqlitePath, userSqliteDir } from './sqlite-path.js';
export { sqliteFileProblem } from './sqlite-file.js';
export { boundedValue, MAX_RESULT_FIELD_CHARS, MAX_SEARCHED_TEXT_CHARS, MAX_SNIPPET_CHARS, MAX_SQLITE_VALUE_BYTES, VALUE_TOO_LARGE, valueBytes } from './bounded-values.js';
export { assertReadOnlySql } from './read-only-guard.js';
export { createExecutor, DEFAULT_PORTS, DIALECTS, type ExecutorOptions } from './executor.js';
export { describeServerVersion, testConnection, testExecutor, type ConnectionTestResult } from './connection-test.js';
export {
  AllowList,
  DEFAULT_DISCOVERY_TIMEOUT_MS,
  discoverSchema,
  type DiscoveredSchema,
  type DiscoveryOptions,
  type FullTextIndexInfo,
  type FullTextKind,
} from './schema-discovery.js';
export { PoolManager, type PoolManagerOptions } from './pool-manager.js';
