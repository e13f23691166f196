import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { parseAllowlist } from '../connectors/host-policy.js';
import { normalizeOrigin } from '../lib/origins.js';
import { loadOrCreateSecrets } from './secrets.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface Config {
  port: number;
  /** WORKERS: server processes sharing the port (1: this process serves alone). */
  workers: number;
  host: string;
  env: 'development' | 'test' | 'production';
  dataDir: string;
  databaseUrl: string;
  storeKind: StoreKind;
  redisUrl: string | null;
  /** REDIS_TIMEOUT_MS */
  redisTimeoutMs: number;
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
  /** Most connections held to one connected database server, and to all of them. */
  dbMaxConnectionsPerHost: number;
  dbMaxConnections: number;
  rateLimitEnabled: boolean;
  searchTimeoutMs: number;
  /** Lifetime of cached search pages; 0 turns the result cache off. */
  searchCacheTtlMs: number;
  usageFlushMs: number;
  /** How long a key and its databases, as the store last verified them, keep searching through a store outage. */
  storeOutageGraceMs: number;
  /** A stop that takes longer than this ends the process anyway. */
  shutdownTimeoutMs: number;
  analyticsRetentionDays: number;
  validateResponses: boolean;
  /** Web origins whose pages may call the API from a browser (CORS): `*` for any, else exact origins. */
  corsOrigins: '*' | string[];
  /** Semantic search: which embedding provider, and the remote service's settings. */
  embeddings: { provider: 'local' | 'remote'; url: string | null; model: string | null; apiKey: string | null };
  /** Quarry's own search index: where it lives, how fresh readers stay, and whether this process syncs. */
  index: {
    uri: string; readConsistencyMs: number; vocabularyTerms: number; cacheMb: number; metadataCacheMb: number; rowCacheMb: number; sync: boolean; maxJobs: number; maxAttempts: number;
    /** INDEX_SYNC_STALE_MS: a sync job whose process has not reported for this long is taken over by another. */
    staleMs: number;
    /** INDEX_KEEP_VERSIONS_MS: how long an older version of a space is kept, and how often old ones are removed. */
    keepVersionsMs: number;
    /** LanceDB's storage options for an object store INDEX_URI (endpoint, region, credentials): holds secrets, never logged. */
    storageOptions: Record<string, string>;
  };
}

/** Thrown with every problem found, so one start tells the operator everything to fix. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** What the README's configuration table says of a setting (test/unit/config/readme-settings.test.ts keeps them equal). */
export type SettingDoc = {
  default: string;
  meaning: string;
  /** Never echoed in an error message. */
  secret?: boolean;
};

// Each error message follows the variable's name: "PORT must be a whole number from 0 to 65535, got "x"."
const wholeNumber = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.string().regex(/^\d+$/, { error }).transform(Number).refine((n) => n >= min && n <= max, { error });
};
const flag = () =>
  z.string().toLowerCase().pipe(z.enum(['true', '1', 'yes', 'false', '0', 'no'], { error: 'must be true or false' }))
    .transform((value) => ['true', '1', 'yes'].includes(value));
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });
const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const atLeast32 = () => z.string().min(32, { error: 'must be at least 32 characters' });
const list = <T extends z.ZodType<string, string>>(item: T) =>
  z.string().transform((text) => text.split(',').map((entry) => entry.trim()).filter(Boolean)).pipe(z.array(item));
const doc = (setting: SettingDoc) => setting;
/** An entry of DB_HOST_ALLOWLIST, by the host policy's own parser. */
const allowEntry = () =>
  z.string().superRefine((entry, context) => {
    try {
      parseAllowlist([entry]);
    } catch (error) {
      context.addIssue({ code: 'custom', message: `has an entry that is not a host, address, network or host:port: "${entry}" (${(error as Error).message})` });
    }
  });

/** CORS_ORIGINS: `*`, `none`, or a list of origins, each normalised (scheme, host and port). */
const originList = () =>
  z.string().transform((text, context): '*' | string[] => {
    if (text === '*') return '*';
    if (text.toLowerCase() === 'none') return [];
    const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean);
    const bad = entries.filter((entry) => normalizeOrigin(entry) === null);
    if (bad.length > 0) {
      context.addIssue({
        code: 'custom',
        message: `must be *, none, or comma-separated origins such as https://shop.example.com (scheme, host and port only), got ${bad.map((b) => `"${b}"`).join(', ')}`,
      });
      return z.NEVER;
    }
    return [...new Set(entries.map((entry) => normalizeOrigin(entry)!))];
  });
/** INDEX_URI: a folder, or an object store URI LanceDB opens. */
const indexUri = () =>
  z.string().refine((uri) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri) || /^(s3|s3\+ddb|gs|az|file):\/\//i.test(uri), {
    error: 'must be a folder or an s3://, gs://, az:// or file:// URI',
  });

/**
 * Every environment variable Quarry reads, with its rule, default and README entry: the one place that says what a
 * setting is. Unset and blank values take the default; every value is checked at start, all problems at once.
 */
export const environmentSchema = z.object({
  PORT: wholeNumber(0, 65535).default(3000)
    .meta(doc({ default: '3000', meaning: 'TCP port the server listens on (0-65535; 0 picks a free port).' })),
  HOST: z.string().refine((host) => isIP(host) !== 0 || /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host), { error: 'must be an IP address or a host name' }).default('127.0.0.1')
    .meta(doc({ default: '127.0.0.1', meaning: 'Interface to listen on; `0.0.0.0` to accept connections from other machines.' })),
  WORKERS: wholeNumber(1, 64).default(1)
    .meta(doc({ default: '1', meaning: 'Server processes on this machine, sharing PORT (Node\'s cluster): one per core uses every core for searches, each with its own memory of the index (`INDEX_ROW_CACHE_MB` and LanceDB\'s caches apiece). Above 1 it needs `REDIS_URL` and a PostgreSQL `DATABASE_URL`, which the processes share as several machines would (1-64).' })),
  NODE_ENV: oneOf(['development', 'test', 'production']).default('development')
    .meta(doc({ default: 'development', meaning: '`development`, `test` or `production`. Production refuses private database hosts unless allowed.' })),
  DATA_DIR: z.string().default('./data')
    .meta(doc({ default: './data', meaning: 'Folder for the embedded SQLite store and the generated secrets file (`secrets.json`, mode 0600).' })),
  DATABASE_URL: z.string().regex(/^(sqlite:.+|postgres(ql)?:\/\/\S+)$/, { error: 'must start with sqlite: or postgres://' }).optional()
    .meta(doc({ default: 'sqlite:<DATA_DIR>/quarry.sqlite', meaning: "Quarry's own store: `sqlite:<file>` or `postgres://user:pass@host:port/db`.", secret: true })),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must start with redis:// or rediss://' }).optional()
    .meta(doc({ default: '(unset: in memory)', meaning: 'Redis for rate-limit and cache state shared by several server processes, e.g. `redis://127.0.0.1:6379`.', secret: true })),
  JWT_SECRET: atLeast32().optional()
    .meta(doc({ default: '(generated, kept in secrets.json)', meaning: 'HS256 signing secret for JWTs, at least 32 characters. Set it when running several processes.', secret: true })),
  JWT_ISSUER: z.string().default('quarry')
    .meta(doc({ default: 'quarry', meaning: 'JWT `iss`, checked on every token.' })),
  JWT_AUDIENCE: z.string().default('quarry-api')
    .meta(doc({ default: 'quarry-api', meaning: 'JWT `aud`, checked on every token.' })),
  JWT_ACCESS_TTL: wholeNumber(60, 86_400).default(3600)
    .meta(doc({ default: '3600', meaning: 'Access token lifetime in seconds (60-86400).' })),
  JWT_REFRESH_TTL: wholeNumber(300, 31_536_000).default(604_800)
    .meta(doc({ default: '604800', meaning: 'Refresh token lifetime in seconds (300-31536000).' })),
  JWT_SESSION_MAX_AGE: wholeNumber(300, 31_536_000).default(2_592_000)
    .meta(doc({ default: '2592000', meaning: 'No refresh extends a session beyond this many seconds after its login (300-31536000).' })),
  API_KEY_PEPPER: atLeast32().optional()
    .meta(doc({ default: '(generated, kept in secrets.json)', meaning: 'Server secret mixed into API key hashes (HMAC-SHA-256), at least 32 characters.', secret: true })),
  CREDENTIALS_KEY: z.string().refine((key) => /^[A-Za-z0-9+/]+={0,2}$/.test(key) && Buffer.from(key, 'base64').length === 32, {
    error: 'must be the base64 encoding of exactly 32 bytes (e.g. `openssl rand -base64 32`)',
  }).optional()
    .meta(doc({ default: '(generated, kept in secrets.json)', meaning: 'Base64 of 32 bytes: AES-256-GCM key for stored database passwords. A wrong key stops the start.', secret: true })),
  BODY_LIMIT: wholeNumber(1024, 104_857_600).default(1_048_576)
    .meta(doc({ default: '1048576', meaning: 'Largest accepted request body in bytes (1024-104857600).' })),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')
    .meta(doc({ default: 'info', meaning: 'pino level: fatal, error, warn, info, debug, trace or silent.' })),
  TRUST_PROXY: flag().default(false)
    .meta(doc({ default: 'false', meaning: 'Trust `X-Forwarded-For` for the client IP (only behind your own proxy).' })),
  CORS_ORIGINS: originList().optional()
    .meta(doc({ default: '* (none in production)', meaning: 'Origins whose web pages may call the API from a browser: `*`, `none`, or a comma-separated list such as `https://shop.example.com,http://localhost:8080`. Others get no CORS headers. A publishable key narrows this to its own `allowedOrigins`; secret keys are refused from any page but Quarry\'s own.' })),
  UPGRADE_URL: httpUrl().default('https://quarry.example.com/pricing')
    .meta(doc({ default: 'https://quarry.example.com/pricing', meaning: 'Link given in 429 and tier errors.' })),
  SQLITE_DATA_DIR: z.string().optional()
    .meta(doc({ default: '<DATA_DIR>/sqlite', meaning: "This process's copies of the uploaded SQLite files, one folder per account (`<userId>/`); an account connects only files in its own. The files themselves are kept in Quarry's store, which every process shares: processes need not share this folder. A file found here at start that the store does not hold (uploaded before it kept them, or put there by hand) is written to it." })),
  DB_HOST_ALLOWLIST: list(allowEntry()).default([])
    .meta(doc({ default: '(empty)', meaning: 'Comma-separated hosts, CIDRs or host:port always allowed for database connections.' })),
  DB_ALLOW_PRIVATE_HOSTS: flag().optional()
    .meta(doc({ default: 'true (false in production)', meaning: 'Allow database hosts on private and loopback addresses. Link-local, metadata and special-purpose addresses are always refused.' })),
  DB_MAX_CONNECTIONS_PER_HOST: wholeNumber(1, 1000).default(20)
    .meta(doc({ default: '20', meaning: 'Most connections Quarry holds to one connected database server (host and port), over all its connections; idle pools are closed to make room, least recently used first (1-1000).' })),
  DB_MAX_CONNECTIONS: wholeNumber(1, 10_000).default(200)
    .meta(doc({ default: '200', meaning: 'Most connections Quarry holds to all connected databases together (1-10000).' })),
  RATE_LIMIT_ENABLED: flag().default(true)
    .meta(doc({ default: 'true', meaning: 'Turn rate limiting off (benchmarks only).' })),
  REDIS_TIMEOUT_MS: wholeNumber(10, 10_000).default(250)
    .meta(doc({ default: '250', meaning: 'Longest a request waits on Redis (rate limits, search cache) before it answers without it: rate limits fall back to this process and the cache misses (10-10000). Raise it where Redis is far away or the machine is overloaded.' })),
  SEARCH_TIMEOUT_MS: wholeNumber(100, 60_000).default(5000)
    .meta(doc({ default: '5000', meaning: 'Per-database time budget of one search (100-60000).' })),
  SEARCH_CACHE_TTL_MS: wholeNumber(0, 3_600_000).default(30_000)
    .meta(doc({ default: '30000', meaning: 'How long a search page is cached per user, in memory or in Redis with `REDIS_URL` (0-3600000; 0 turns the cache off). A changed connection drops its pages at once.' })),
  USAGE_FLUSH_MS: wholeNumber(50, 60_000).default(1000)
    .meta(doc({ default: '1000', meaning: 'How often batched usage and search records are written (50-60000).' })),
  STORE_OUTAGE_GRACE_MS: wholeNumber(0, 600_000).default(60_000)
    .meta(doc({ default: '60000', meaning: 'While Quarry\'s own store is down, an API key the store verified this recently keeps searching its databases as they were then (0-600000; 0 turns it off). Run several processes without `REDIS_URL`? A key revoked in that time before an outage may keep searching until it ends: set 0.' })),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(1000, 600_000).default(15_000)
    .meta(doc({ default: '15000', meaning: 'Longest a stop (SIGTERM, SIGINT) may take: in-flight requests finish, records are written and pools close (a database that does not answer is cut off after 2 s); past it the process exits with code 1 (1000-600000).' })),
  ANALYTICS_RETENTION_DAYS: wholeNumber(1, 3650).default(395)
    .meta(doc({ default: '395', meaning: 'Days search records (with their roll-ups) and per-minute key usage are kept (1-3650); older days are deleted at start and every 6 hours.' })),
  EMBEDDINGS_PROVIDER: oneOf(['local', 'remote']).default('local')
    .meta(doc({ default: 'local', meaning: 'Semantic search embeddings: `local` (Universal Sentence Encoder lite, shipped in the npm packages, 512 dimensions, no network) or `remote` (an OpenAI-compatible service). A change re-embeds at the next index run.' })),
  EMBEDDINGS_URL: httpUrl().optional()
    .meta(doc({ default: '(unset)', meaning: 'Base URL of the remote embeddings service; Quarry calls `POST <EMBEDDINGS_URL>/embeddings` (required when `remote`).' })),
  EMBEDDINGS_MODEL: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'Model name sent to the remote service, e.g. `text-embedding-3-small` (required when `remote`).' })),
  EMBEDDINGS_API_KEY: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'Bearer key for the remote embeddings service; never logged or returned.', secret: true })),
  INDEX_URI: indexUri().optional()
    .meta(doc({ default: '<DATA_DIR>/index', meaning: "Where Quarry's search index lives: a folder, or an object store URI (`s3://`, `gs://`, `az://`) that several server processes share; its settings are the `INDEX_S3_*`, `INDEX_GCS_*`, `INDEX_AZURE_*` and `INDEX_ALLOW_HTTP` below, and a store that cannot be reached with them stops the start." })),
  INDEX_S3_ENDPOINT: httpUrl().optional()
    .meta(doc({ default: '(unset: AWS)', meaning: 'For an `s3://` `INDEX_URI` on an S3-compatible store: its URL, e.g. `https://storage.example.com` (needs `INDEX_S3_REGION`; an `http://` one needs `INDEX_ALLOW_HTTP=true`).' })),
  INDEX_S3_REGION: z.string().regex(/^[a-z0-9-]{1,64}$/i, { error: 'must be a region name such as us-east-1' }).optional()
    .meta(doc({ default: '(unset: found from the bucket)', meaning: 'Region of the `s3://` bucket, e.g. `eu-west-1`; most S3-compatible stores need one (`us-east-1` where any will do).' })),
  INDEX_S3_ACCESS_KEY_ID: z.string().optional()
    .meta(doc({ default: '(unset: the AWS credential chain)', meaning: 'Access key id for the `s3://` bucket (with `INDEX_S3_SECRET_ACCESS_KEY`); unset, LanceDB looks for credentials as AWS tools do (AWS_* variables, instance role).' })),
  INDEX_S3_SECRET_ACCESS_KEY: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'Secret access key that goes with `INDEX_S3_ACCESS_KEY_ID`; never logged.', secret: true })),
  INDEX_S3_SESSION_TOKEN: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'Session token of temporary credentials, with `INDEX_S3_ACCESS_KEY_ID` and `INDEX_S3_SECRET_ACCESS_KEY`; never logged.', secret: true })),
  INDEX_GCS_SERVICE_ACCOUNT: z.string().optional()
    .meta(doc({ default: '(unset: application default credentials)', meaning: 'For a `gs://` `INDEX_URI`: path of a service account key file.' })),
  INDEX_GCS_SERVICE_ACCOUNT_KEY: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'For a `gs://` `INDEX_URI`: the service account key itself (its JSON), instead of a file; never logged.', secret: true })),
  INDEX_AZURE_ACCOUNT_NAME: z.string().regex(/^[a-z0-9]{3,24}$/, { error: 'must be a storage account name (3-24 lower-case letters and digits)' }).optional()
    .meta(doc({ default: '(unset)', meaning: 'For an `az://` `INDEX_URI`: the storage account that holds the container.' })),
  INDEX_AZURE_ACCOUNT_KEY: z.string().optional()
    .meta(doc({ default: '(unset)', meaning: 'For an `az://` `INDEX_URI`: the storage account key (with `INDEX_AZURE_ACCOUNT_NAME`); never logged.', secret: true })),
  INDEX_ALLOW_HTTP: flag().default(false)
    .meta(doc({ default: 'false', meaning: 'Let the index reach its object store over plain `http://` (a store on your own network or this machine); off, only TLS.' })),
  INDEX_READ_CONSISTENCY_MS: wholeNumber(0, 3_600_000).default(1000)
    .meta(doc({ default: '1000', meaning: 'How long a process may read an older version of the index after another process wrote it, in ms (0-3600000; 0 checks on every read). Searches also reuse what they read of Quarry\'s store (connections, the index\'s catalog) for this long, at most 5 s, unless a change is announced on the invalidation bus (Redis between processes).' })),
  INDEX_VOCABULARY_TERMS: wholeNumber(0, 100_000_000).default(2_000_000)
    .meta(doc({ default: '2000000', meaning: "Distinct words and stems that the search spaces' vocabularies hold in memory together for typo tolerance (about 32 bytes each); the least recently searched spaces give theirs up first, and a space with more is checked by index lookups. 0 turns them off (0-100000000)." })),
  INDEX_CACHE_MB: wholeNumber(16, 65_536).default(256)
    .meta(doc({ default: '256', meaning: "Memory LanceDB may keep of the index's own indexes (text postings, the row-id and table indexes, vectors' partitions) in one process, in MB (16-65536). Beyond it the least recently used parts are read from disk or object storage again. Most of a server's memory beyond Node's own at a million rows." })),
  INDEX_METADATA_CACHE_MB: wholeNumber(8, 16_384).default(64)
    .meta(doc({ default: '64', meaning: "Memory LanceDB may keep of the index's metadata (manifests, file footers) in one process, in MB (8-16384)." })),
  INDEX_ROW_CACHE_MB: wholeNumber(0, 65_536).default(512)
    .meta(doc({ default: '512', meaning: "Memory one process may keep of the search spaces' rows (the columns a search reads of its ranked rows and its page), in MB, so that a search asks LanceDB for its ranking alone (row ids and scores) instead of reading each column it brings back: a request per row on an object store, and on a local folder about a millisecond per column even from the page cache. Each space's current version is read once in the background (about 230 MB at 100,000 articles; a version written since is read from the index until its rows are read), then each row's words are counted for relevance feedback (about 60 MB more at 100,000 articles; without them it reads the rows' text on every search), then their text is indexed by word for ranking (postings: about 75 MB more at 100,000 articles; a natural search over whole tables then ranks in memory instead of asking LanceDB); the least recently searched spaces give theirs up first, and a space larger than this is never read into memory. While a written space's next version is read, the last one with postings keeps ranking (two versions held for a while), beside the rows this process wrote since (at most 50,000 rows or 32 M characters per space, outside this budget). 0 turns it off (0-65536)." })),
  LANCE_CPU_THREADS: wholeNumber(3, 256).default(3)
    .meta(doc({ default: '3', meaning: "LanceDB's compute threads in one process (3-256). At least 3: with fewer, on a 2-core machine, building a text index of 20,000 rows or more and folding written rows into it hang for good. On 2 cores 3 and 4 searched alike (docs/benchmarks.md)." })),
  LANCE_IO_THREADS: wholeNumber(1, 1024).optional()
    .meta(doc({ default: "(unset: LanceDB's, 8 for a folder and 64 for an object store)", meaning: "Reads LanceDB runs at once per file store, for the index's searches and scans (1-1024)." })),
  INDEX_SYNC: flag().default(true)
    .meta(doc({ default: 'true', meaning: 'This process runs index sync jobs and the sync schedule; `false` leaves them to the processes that do (it still searches the index).' })),
  INDEX_SYNC_JOBS: wholeNumber(1, 16).default(2)
    .meta(doc({ default: '2', meaning: 'Index sync jobs one process runs at once, each in another search space (1-16).' })),
  INDEX_SYNC_ATTEMPTS: wholeNumber(1, 100).default(3)
    .meta(doc({ default: '3', meaning: "Times a sync job is started before it ends failed when it never finishes (its server stopped while it ran, for example out of memory); a graceful stop does not count (1-100)." })),
  INDEX_KEEP_VERSIONS_MS: wholeNumber(1000, 604_800_000).default(300_000)
    .meta(doc({ default: '300000', meaning: 'How long an older version of the index is kept after a newer one is written, in ms; older ones are removed (and the index compacted) this often by each syncing process, and this long after a sync ends. At least `INDEX_READ_CONSISTENCY_MS` plus `SEARCH_TIMEOUT_MS`: a process may read a version that long (1000-604800000).' })),
  INDEX_SYNC_STALE_MS: wholeNumber(3000, 600_000).default(10_000)
    .meta(doc({ default: '10000', meaning: "A sync job whose process has not reported for this long (it died, or its machine is gone) is taken over by another syncing process and resumed where it stopped; it reports five times as often, and the others look four times as often, so a takeover comes within 1.25 times this. Raise it only if your machines' clocks may differ by more than a second or two (3000-600000)." })),
  VALIDATE_RESPONSES: flag().default(false)
    .meta(doc({ default: 'false', meaning: 'Check every response against openapi.yaml and record violations (tests turn it on).' })),
});

type SettingName = keyof typeof environmentSchema.shape;

/** The README entry of a setting, from the schema's metadata. */
export function settingDoc(name: SettingName): SettingDoc {
  return environmentSchema.shape[name].meta() as unknown as SettingDoc;
}

/** Rules that join several variables; checked even when other variables are bad, so one start reports everything. */
const checkedSchema = environmentSchema.superRefine((env, context) => {
  if (env.EMBEDDINGS_PROVIDER === 'remote' && (!env.EMBEDDINGS_URL || !env.EMBEDDINGS_MODEL)) {
    context.addIssue({ code: 'custom', message: 'EMBEDDINGS_PROVIDER=remote needs EMBEDDINGS_URL and EMBEDDINGS_MODEL' });
  }
  for (const problem of objectStoreProblems(env)) context.addIssue({ code: 'custom', message: problem });
  if (typeof env.WORKERS === 'number' && env.WORKERS > 1) {
    // The workers are separate processes: in-memory rate limits, caches and invalidations would each be one worker's.
    if (!env.REDIS_URL) context.addIssue({ code: 'custom', message: 'WORKERS above 1 needs REDIS_URL: the processes share rate limits, cached results and invalidations through Redis' });
    if (typeof env.DATABASE_URL !== 'string' || !/^postgres(ql)?:/.test(env.DATABASE_URL)) {
      context.addIssue({ code: 'custom', message: 'WORKERS above 1 needs a postgres:// DATABASE_URL: the embedded SQLite store serves one process' });
    }
  }
  const keep = env.INDEX_KEEP_VERSIONS_MS;
  const needed = Number(env.INDEX_READ_CONSISTENCY_MS) + Number(env.SEARCH_TIMEOUT_MS);
  if (typeof keep === 'number' && Number.isFinite(needed) && keep < needed) {
    context.addIssue({ code: 'custom', message: `INDEX_KEEP_VERSIONS_MS must be at least INDEX_READ_CONSISTENCY_MS plus SEARCH_TIMEOUT_MS (${needed}): another process may still read a version that long` });
  }
}, { when: () => true });

/** The object store settings that belong to each kind of INDEX_URI. */
const STORE_SETTINGS = {
  s3: ['INDEX_S3_ENDPOINT', 'INDEX_S3_REGION', 'INDEX_S3_ACCESS_KEY_ID', 'INDEX_S3_SECRET_ACCESS_KEY', 'INDEX_S3_SESSION_TOKEN'],
  gs: ['INDEX_GCS_SERVICE_ACCOUNT', 'INDEX_GCS_SERVICE_ACCOUNT_KEY'],
  az: ['INDEX_AZURE_ACCOUNT_NAME', 'INDEX_AZURE_ACCOUNT_KEY'],
} as const;

/** The scheme of an object store INDEX_URI (s3+ddb is S3), or null for a folder. */
function storeScheme(uri: string | undefined): keyof typeof STORE_SETTINGS | null {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri ?? '')?.[1]?.toLowerCase();
  if (scheme === 's3' || scheme === 's3+ddb') return 's3';
  return scheme === 'gs' || scheme === 'az' ? scheme : null;
}

/** Object store settings that do not fit INDEX_URI or each other: a setting no store would read is a mistake. */
function objectStoreProblems(env: Partial<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const scheme = storeScheme(env.INDEX_URI as string | undefined);
  for (const [kind, names] of Object.entries(STORE_SETTINGS)) {
    const set = names.filter((name) => env[name] !== undefined);
    if (kind !== scheme && set.length > 0) problems.push(`${set.join(', ')} apply only to a ${kind}:// INDEX_URI`);
  }
  if (scheme === 's3') {
    if ((env.INDEX_S3_ACCESS_KEY_ID === undefined) !== (env.INDEX_S3_SECRET_ACCESS_KEY === undefined)) {
      problems.push('INDEX_S3_ACCESS_KEY_ID and INDEX_S3_SECRET_ACCESS_KEY go together: set both or neither');
    }
    if (env.INDEX_S3_SESSION_TOKEN !== undefined && env.INDEX_S3_ACCESS_KEY_ID === undefined) {
      problems.push('INDEX_S3_SESSION_TOKEN needs INDEX_S3_ACCESS_KEY_ID and INDEX_S3_SECRET_ACCESS_KEY');
    }
    if (env.INDEX_S3_ENDPOINT !== undefined && env.INDEX_S3_REGION === undefined) {
      problems.push('INDEX_S3_ENDPOINT needs INDEX_S3_REGION (an S3-compatible store cannot be asked for its region; us-east-1 where any will do)');
    }
  }
  if (scheme === 'az' && env.INDEX_AZURE_ACCOUNT_KEY !== undefined && env.INDEX_AZURE_ACCOUNT_NAME === undefined) {
    problems.push('INDEX_AZURE_ACCOUNT_KEY needs INDEX_AZURE_ACCOUNT_NAME');
  }
  if (scheme === 'gs' && env.INDEX_GCS_SERVICE_ACCOUNT !== undefined && env.INDEX_GCS_SERVICE_ACCOUNT_KEY !== undefined) {
    problems.push('INDEX_GCS_SERVICE_ACCOUNT and INDEX_GCS_SERVICE_ACCOUNT_KEY are two ways to give one key: set one');
  }
  if (typeof env.INDEX_S3_ENDPOINT === 'string' && env.INDEX_S3_ENDPOINT.toLowerCase().startsWith('http:') && env.INDEX_ALLOW_HTTP !== true) {
    problems.push('INDEX_S3_ENDPOINT is http://: set INDEX_ALLOW_HTTP=true to send the index (and its credentials) without TLS, or use https://');
  }
  return problems;
}

/** LanceDB's storage option keys (its documented, lower-case names) for the settings given. */
function storageOptionsOf(settings: z.infer<typeof environmentSchema>): Record<string, string> {
  const options: Record<string, string | undefined> = {
    aws_endpoint: settings.INDEX_S3_ENDPOINT,
    aws_region: settings.INDEX_S3_REGION,
    aws_access_key_id: settings.INDEX_S3_ACCESS_KEY_ID,
    aws_secret_access_key: settings.INDEX_S3_SECRET_ACCESS_KEY,
    aws_session_token: settings.INDEX_S3_SESSION_TOKEN,
    google_service_account: settings.INDEX_GCS_SERVICE_ACCOUNT,
    google_service_account_key: settings.INDEX_GCS_SERVICE_ACCOUNT_KEY,
    azure_storage_account_name: settings.INDEX_AZURE_ACCOUNT_NAME,
    azure_storage_account_key: settings.INDEX_AZURE_ACCOUNT_KEY,
    allow_http: settings.INDEX_ALLOW_HTTP ? 'true' : undefined,
  };
  return Object.fromEntries(Object.entries(options).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

type Env = Record<string, string | undefined>;

/** One line per problem, the variable's name first (a rule joining several names them itself); secrets are never repeated. */
function describeProblems(error: z.ZodError, values: Env): string[] {
  return error.issues.map((issue) => {
    if (issue.path.length === 0) return `${issue.message}.`;
    const name = String(issue.path[0]) as SettingName;
    const raw = values[name];
    const got = raw !== undefined && !settingDoc(name).secret && issue.code !== 'custom' ? `, got "${raw}"` : '';
    return `${name} ${issue.message}${got}.`;
  });
}

/** Reads and validates the environment; a bad value stops the start with a clear message. */
export function loadConfig(env: Env = process.env): Config {
  // Unset and blank are the same: the default.
  const values: Env = {};
  for (const name of Object.keys(environmentSchema.shape)) {
    const value = env[name]?.trim();
    if (value) values[name] = value;
  }
  const parsed = checkedSchema.safeParse(values);
  const problems = parsed.success ? [] : describeProblems(parsed.error, values);
  // An address in the environment made whoever registered it an admin: roles are the operator's alone now.
  // A retired setting, not a documented one: it is only looked for, so a deployment still setting it stops here.
  if (env.ADMIN_EMAILS?.trim()) {
    problems.push('ADMIN_EMAILS is no longer supported: it made whoever registered a listed address an admin. Unset it, check that each admin account is really yours, and run `npm run user -- role <email> admin` for each.');
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const settings = parsed.data;

  const dataDir = resolve(settings.DATA_DIR);
  const databaseUrl = settings.DATABASE_URL ?? `sqlite:${resolve(dataDir, 'quarry.sqlite')}`;
  const sqliteDir = settings.SQLITE_DATA_DIR;
  // Only generate (and persist) what the operator did not set, so the embedded default survives restarts.
  const needsGenerated = !settings.JWT_SECRET || !settings.API_KEY_PEPPER || !settings.CREDENTIALS_KEY;
  const generated = needsGenerated ? loadOrCreateSecrets(dataDir) : null;
  return {
    port: settings.PORT,
    workers: settings.WORKERS,
    host: settings.HOST,
    env: settings.NODE_ENV,
    dataDir,
    databaseUrl,
    storeKind: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
    redisUrl: settings.REDIS_URL ?? null,
    redisTimeoutMs: settings.REDIS_TIMEOUT_MS,
    jwt: {
      secret: settings.JWT_SECRET ?? generated!.jwtSecret,
      issuer: settings.JWT_ISSUER,
      audience: settings.JWT_AUDIENCE,
      accessTtl: settings.JWT_ACCESS_TTL,
      refreshTtl: settings.JWT_REFRESH_TTL,
      sessionMaxAge: settings.JWT_SESSION_MAX_AGE,
    },
    apiKeyPepper: settings.API_KEY_PEPPER ?? generated!.apiKeyPepper,
    credentialsKey: Buffer.from(settings.CREDENTIALS_KEY ?? generated!.credentialsKey, 'base64'),
    bodyLimit: settings.BODY_LIMIT,
    logLevel: settings.LOG_LEVEL,
    trustProxy: settings.TRUST_PROXY,
    upgradeUrl: settings.UPGRADE_URL,
    sqliteDataDir: sqliteDir ? (isAbsolute(sqliteDir) ? sqliteDir : resolve(sqliteDir)) : resolve(dataDir, 'sqlite'),
    dbHostAllowlist: settings.DB_HOST_ALLOWLIST,
    dbAllowPrivateHosts: settings.DB_ALLOW_PRIVATE_HOSTS ?? settings.NODE_ENV !== 'production',
    dbMaxConnectionsPerHost: settings.DB_MAX_CONNECTIONS_PER_HOST,
    dbMaxConnections: settings.DB_MAX_CONNECTIONS,
    rateLimitEnabled: settings.RATE_LIMIT_ENABLED,
    searchTimeoutMs: settings.SEARCH_TIMEOUT_MS,
    searchCacheTtlMs: settings.SEARCH_CACHE_TTL_MS,
    usageFlushMs: settings.USAGE_FLUSH_MS,
    storeOutageGraceMs: settings.STORE_OUTAGE_GRACE_MS,
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    analyticsRetentionDays: settings.ANALYTICS_RETENTION_DAYS,
    validateResponses: settings.VALIDATE_RESPONSES,
    corsOrigins: settings.CORS_ORIGINS ?? (settings.NODE_ENV === 'production' ? [] : '*'),
    embeddings: {
      provider: settings.EMBEDDINGS_PROVIDER,
      url: settings.EMBEDDINGS_URL ?? null,
      model: settings.EMBEDDINGS_MODEL ?? null,
      apiKey: settings.EMBEDDINGS_API_KEY ?? null,
    },
    index: {
      uri: indexUriOf(settings.INDEX_URI ?? resolve(dataDir, 'index')),
      readConsistencyMs: settings.INDEX_READ_CONSISTENCY_MS,
      vocabularyTerms: settings.INDEX_VOCABULARY_TERMS,
      cacheMb: settings.INDEX_CACHE_MB,
      metadataCacheMb: settings.INDEX_METADATA_CACHE_MB,
      rowCacheMb: settings.INDEX_ROW_CACHE_MB,
      sync: settings.INDEX_SYNC,
      maxJobs: settings.INDEX_SYNC_JOBS,
      maxAttempts: settings.INDEX_SYNC_ATTEMPTS,
      staleMs: settings.INDEX_SYNC_STALE_MS,
      keepVersionsMs: settings.INDEX_KEEP_VERSIONS_MS,
      storageOptions: storageOptionsOf(settings),
    },
  };
}

/** An object store URI as it is; a folder made absolute. */
function indexUriOf(uri: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(uri) || isAbsolute(uri) ? uri : resolve(uri);
}
