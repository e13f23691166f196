import { isAbsolute, resolve } from 'node:path';
import { normalizeOrigin } from '../lib/origins.js';
import { loadOrCreateSecrets } from './secrets.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface Config {
  port: number;
  host: string;
  env: 'development' | 'test' | 'production';
  dataDir: string;
  databaseUrl: string;
  storeKind: StoreKind;
  redisUrl: string | null;
  jwt: { secret: string; issuer: string; audience: string; accessTtl: number; refreshTtl: number; sessionMaxAge: number };
  apiKeyPepper: string;
  credentialsKey: Buffer;
  bodyLimit: number;
  logLevel: string;
  trustProxy: boolean;
  upgradeUrl: string;
  sqliteDataDir: string;
  dbHostAllowlist: string[];
  dbAllowPrivateHosts: boolean;
  /** Most connections held to one connected database server, and to all of them (issue 23 item 4). */
  dbMaxConnectionsPerHost: number;
  dbMaxConnections: number;
  rateLimitEnabled: boolean;
  searchTimeoutMs: number;
  /** Lifetime of cached search pages; 0 turns the result cache off. */
  searchCacheTtlMs: number;
  usageFlushMs: number;
  /** A stop that takes longer than this ends the process anyway (issue 23 item 7). */
  shutdownTimeoutMs: number;
  analyticsRetentionDays: number;
  /** Write the responses of one event-loop turn together (src/http/response-batching.ts). */
  responseBatching: boolean;
  validateResponses: boolean;
  /** Web origins whose pages may call the API from a browser (CORS): `*` for any, else exact origins. */
  corsOrigins: '*' | string[];
  /** Semantic search (issue 7): which embedding provider, and the remote service's settings. */
  embeddings: { provider: 'local' | 'remote'; url: string | null; model: string | null; apiKey: string | null };
  /** Quarry's own search index (issue 27): where it lives, how fresh readers stay, and whether this process syncs. */
  index: { uri: string; readConsistencyMs: number; sync: boolean; maxJobs: number };
}

/** Thrown with every problem found, so one start tells the operator everything to fix. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and validates the environment; a bad value stops the start with a clear message. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}".`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${raw}".`);
    return fallback;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T)) {
      problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}".`);
      return fallback;
    }
    return raw as T;
  };
  const list = (name: string): string[] =>
    (read(name) ?? '').split(',').map((item) => item.trim()).filter(Boolean);
  const origins = (name: string, fallback: '*' | string[]): '*' | string[] => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (raw === '*') return '*';
    if (raw.toLowerCase() === 'none') return [];
    const entries = list(name);
    const bad = entries.filter((entry) => normalizeOrigin(entry) === null);
    if (bad.length > 0) {
      problems.push(`${name} must be *, none, or comma-separated origins such as https://shop.example.com (scheme, host and port only), got ${bad.map((b) => `"${b}"`).join(', ')}.`);
      return [];
    }
    return [...new Set(entries.map((entry) => normalizeOrigin(entry)!))];
  };

  const nodeEnv = oneOf('NODE_ENV', 'development', ['development', 'test', 'production'] as const);
  const dataDir = resolve(read('DATA_DIR') ?? './data');
  const databaseUrl = read('DATABASE_URL') ?? `sqlite:${resolve(dataDir, 'quarry.sqlite')}`;
  let storeKind: StoreKind = 'sqlite';
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) storeKind = 'postgres';
  else if (!databaseUrl.startsWith('sqlite:')) {
    problems.push(`DATABASE_URL must start with sqlite: or postgres://, got "${databaseUrl.replace(/\/\/[^@]*@/, '//***@')}".`);
  }
  const redisUrl = read('REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://.');
  const upgradeUrl = read('UPGRADE_URL') ?? 'https://quarry.example.com/pricing';
  if (!/^https?:\/\/\S+$/.test(upgradeUrl)) problems.push(`UPGRADE_URL must be an http(s) URL, got "${upgradeUrl}".`);
  const sqliteDir = read('SQLITE_DATA_DIR');
  const embeddings = {
    provider: oneOf('EMBEDDINGS_PROVIDER', 'local', ['local', 'remote'] as const),
    url: read('EMBEDDINGS_URL') ?? null,
    model: read('EMBEDDINGS_MODEL') ?? null,
    apiKey: read('EMBEDDINGS_API_KEY') ?? null,
  };
  if (embeddings.url !== null && !/^https?:\/\/\S+$/.test(embeddings.url)) problems.push(`EMBEDDINGS_URL must be an http(s) URL, got "${embeddings.url}".`);
  if (embeddings.provider === 'remote' && (embeddings.url === null || embeddings.model === null)) {
    problems.push('EMBEDDINGS_PROVIDER=remote needs EMBEDDINGS_URL and EMBEDDINGS_MODEL.');
  }

  const indexUri = read('INDEX_URI') ?? resolve(dataDir, 'index');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(indexUri) && !/^(s3|s3\+ddb|gs|az|file):\/\//i.test(indexUri)) {
    problems.push(`INDEX_URI must be a folder or an s3://, gs://, az:// or file:// URI, got "${indexUri}".`);
  }
  const corsOrigins = origins('CORS_ORIGINS', nodeEnv === 'production' ? [] : '*');

  const config = {
    port: int('PORT', 3000, 0, 65535),
    host: read('HOST') ?? '127.0.0.1',
    env: nodeEnv,
    dataDir,
    databaseUrl,
    storeKind,
    redisUrl,
    jwt: {
      secret: '',
      issuer: read('JWT_ISSUER') ?? 'quarry',
      audience: read('JWT_AUDIENCE') ?? 'quarry-api',
      accessTtl: int('JWT_ACCESS_TTL', 3600, 60, 86_400),
      refreshTtl: int('JWT_REFRESH_TTL', 604_800, 300, 31_536_000),
      sessionMaxAge: int('JWT_SESSION_MAX_AGE', 2_592_000, 300, 31_536_000),
    },
    apiKeyPepper: '',
    credentialsKey: Buffer.alloc(0),
    bodyLimit: int('BODY_LIMIT', 1_048_576, 1024, 104_857_600),
    logLevel: oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    trustProxy: bool('TRUST_PROXY', false),
    upgradeUrl,
    sqliteDataDir: sqliteDir ? (isAbsolute(sqliteDir) ? sqliteDir : resolve(sqliteDir)) : resolve(dataDir, 'sqlite'),
    dbHostAllowlist: list('DB_HOST_ALLOWLIST'),
    dbAllowPrivateHosts: bool('DB_ALLOW_PRIVATE_HOSTS', nodeEnv !== 'production'),
    dbMaxConnectionsPerHost: int('DB_MAX_CONNECTIONS_PER_HOST', 20, 1, 1000),
    dbMaxConnections: int('DB_MAX_CONNECTIONS', 200, 1, 10_000),
    rateLimitEnabled: bool('RATE_LIMIT_ENABLED', true),
    searchTimeoutMs: int('SEARCH_TIMEOUT_MS', 5000, 100, 60_000),
    searchCacheTtlMs: int('SEARCH_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    usageFlushMs: int('USAGE_FLUSH_MS', 1000, 50, 60_000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 15_000, 1000, 600_000),
    analyticsRetentionDays: int('ANALYTICS_RETENTION_DAYS', 395, 1, 3650),
    responseBatching: bool('RESPONSE_BATCHING', true),
    validateResponses: bool('VALIDATE_RESPONSES', false),
    corsOrigins,
    embeddings,
    index: {
      uri: /^[a-z][a-z0-9+.-]*:\/\//i.test(indexUri) || isAbsolute(indexUri) ? indexUri : resolve(indexUri),
      readConsistencyMs: int('INDEX_READ_CONSISTENCY_MS', 1000, 0, 3_600_000),
      sync: bool('INDEX_SYNC', true),
      maxJobs: int('INDEX_SYNC_JOBS', 2, 1, 16),
    },
  };

  // An address in the environment made whoever registered it an admin (issue 23): roles are the operator's alone now.
  // A retired setting, not a documented one: it is only looked for, so a deployment still setting it stops here.
  if (env.ADMIN_EMAILS?.trim()) {
    problems.push('ADMIN_EMAILS is no longer supported: it made whoever registered a listed address an admin. Unset it, check that each admin account is really yours, and run `npm run user -- role <email> admin` for each.');
  }
  const jwtSecret = read('JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) problems.push('JWT_SECRET must be at least 32 characters.');
  const pepper = read('API_KEY_PEPPER');
  if (pepper !== undefined && pepper.length < 32) problems.push('API_KEY_PEPPER must be at least 32 characters.');
  const credentialsKey = read('CREDENTIALS_KEY');
  if (credentialsKey !== undefined && Buffer.from(credentialsKey, 'base64').length !== 32) {
    problems.push('CREDENTIALS_KEY must be the base64 encoding of exactly 32 bytes (e.g. `openssl rand -base64 32`).');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  // Only generate (and persist) what the operator did not set, so the embedded default survives restarts.
  const needsGenerated = !jwtSecret || !pepper || !credentialsKey;
  const generated = needsGenerated ? loadOrCreateSecrets(dataDir) : null;
  config.jwt.secret = jwtSecret ?? generated!.jwtSecret;
  config.apiKeyPepper = pepper ?? generated!.apiKeyPepper;
  config.credentialsKey = Buffer.from(credentialsKey ?? generated!.credentialsKey, 'base64');
  return config;
}
