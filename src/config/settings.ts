/**
 * Every setting Quarry reads, with its default and meaning. This table is the single source for the
 * configuration parser and for the README's configuration table (a unit test keeps them in step).
 */
export interface SettingSpec {
  name: string;
  default: string;
  meaning: string;
}

export const settings: SettingSpec[] = [
  { name: 'PORT', default: '3000', meaning: 'TCP port the server listens on (0-65535; 0 picks a free port).' },
  { name: 'HOST', default: '127.0.0.1', meaning: 'Interface to listen on; `0.0.0.0` to accept connections from other machines.' },
  { name: 'NODE_ENV', default: 'development', meaning: '`development`, `test` or `production`. Production refuses private database hosts unless allowed.' },
  { name: 'DATA_DIR', default: './data', meaning: 'Folder for the embedded SQLite store and the generated secrets file (`secrets.json`, mode 0600).' },
  { name: 'DATABASE_URL', default: 'sqlite:<DATA_DIR>/quarry.sqlite', meaning: "Quarry's own store: `sqlite:<file>` or `postgres://user:pass@host:port/db`." },
  { name: 'REDIS_URL', default: '(unset: in memory)', meaning: 'Redis for rate-limit and cache state shared by several server processes, e.g. `redis://127.0.0.1:6379`.' },
  { name: 'JWT_SECRET', default: '(generated, kept in secrets.json)', meaning: 'HS256 signing secret for JWTs, at least 32 characters. Set it when running several processes.' },
  { name: 'JWT_ISSUER', default: 'quarry', meaning: 'JWT `iss`, checked on every token.' },
  { name: 'JWT_AUDIENCE', default: 'quarry-api', meaning: 'JWT `aud`, checked on every token.' },
  { name: 'JWT_ACCESS_TTL', default: '3600', meaning: 'Access token lifetime in seconds (60-86400).' },
  { name: 'JWT_REFRESH_TTL', default: '604800', meaning: 'Refresh token lifetime in seconds (300-31536000).' },
  { name: 'JWT_SESSION_MAX_AGE', default: '2592000', meaning: 'No refresh extends a session beyond this many seconds after its login.' },
  { name: 'API_KEY_PEPPER', default: '(generated, kept in secrets.json)', meaning: 'Server secret mixed into API key hashes (HMAC-SHA-256), at least 32 characters.' },
  { name: 'CREDENTIALS_KEY', default: '(generated, kept in secrets.json)', meaning: 'Base64 of 32 bytes: AES-256-GCM key for stored database passwords. A wrong key stops the start.' },
  { name: 'BODY_LIMIT', default: '1048576', meaning: 'Largest accepted request body in bytes (1024-104857600).' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'pino level: fatal, error, warn, info, debug, trace or silent.' },
  { name: 'TRUST_PROXY', default: 'false', meaning: 'Trust `X-Forwarded-For` for the client IP (only behind your own proxy).' },
  { name: 'CORS_ORIGINS', default: '* (none in production)', meaning: 'Origins whose web pages may call the API from a browser: `*`, `none`, or a comma-separated list such as `https://shop.example.com,http://localhost:8080`. Others get no CORS headers. A publishable key narrows this to its own `allowedOrigins`; secret keys are refused from any page.' },
  { name: 'UPGRADE_URL', default: 'https://quarry.example.com/pricing', meaning: 'Link given in 429 and tier errors.' },
  { name: 'SQLITE_DATA_DIR', default: '<DATA_DIR>/sqlite', meaning: 'Holds one folder per account (`<userId>/`) with its uploaded SQLite files; an account connects only files in its own.' },
  { name: 'DB_HOST_ALLOWLIST', default: '(empty)', meaning: 'Comma-separated hosts, CIDRs or host:port always allowed for database connections.' },
  { name: 'DB_ALLOW_PRIVATE_HOSTS', default: 'true (false in production)', meaning: 'Allow database hosts on private and loopback addresses. Link-local and metadata addresses are always refused.' },
  { name: 'DB_MAX_CONNECTIONS_PER_HOST', default: '20', meaning: 'Most connections Quarry holds to one connected database server (host and port), over all its connections; idle pools are closed to make room, least recently used first (1-1000).' },
  { name: 'DB_MAX_CONNECTIONS', default: '200', meaning: 'Most connections Quarry holds to all connected databases together (1-10000).' },
  { name: 'RATE_LIMIT_ENABLED', default: 'true', meaning: 'Turn rate limiting off (benchmarks only).' },
  { name: 'SEARCH_TIMEOUT_MS', default: '5000', meaning: 'Per-database time budget of one search (100-60000).' },
  { name: 'SEARCH_CACHE_TTL_MS', default: '30000', meaning: 'How long a search page is cached per user, in memory or in Redis with `REDIS_URL` (0-3600000; 0 turns the cache off). A changed connection drops its pages at once.' },
  { name: 'USAGE_FLUSH_MS', default: '1000', meaning: 'How often batched usage and search records are written (50-60000).' },
  { name: 'SHUTDOWN_TIMEOUT_MS', default: '15000', meaning: 'Longest a stop (SIGTERM, SIGINT) may take: in-flight requests finish, records are written and pools close (a database that does not answer is cut off after 2 s); past it the process exits with code 1 (1000-600000).' },
  { name: 'ANALYTICS_RETENTION_DAYS', default: '395', meaning: 'Days search records (with their roll-ups) and per-minute key usage are kept (1-3650); older days are deleted at start and every 6 hours.' },
  { name: 'EMBEDDINGS_PROVIDER', default: 'local', meaning: 'Semantic search embeddings: `local` (Universal Sentence Encoder lite, shipped in the npm packages, 512 dimensions, no network) or `remote` (an OpenAI-compatible service). A change re-embeds at the next index run.' },
  { name: 'EMBEDDINGS_URL', default: '(unset)', meaning: 'Base URL of the remote embeddings service; Quarry calls `POST <EMBEDDINGS_URL>/embeddings` (required when `remote`).' },
  { name: 'EMBEDDINGS_MODEL', default: '(unset)', meaning: 'Model name sent to the remote service, e.g. `text-embedding-3-small` (required when `remote`).' },
  { name: 'EMBEDDINGS_API_KEY', default: '(unset)', meaning: 'Bearer key for the remote embeddings service; never logged or returned.' },
  { name: 'INDEX_URI', default: '<DATA_DIR>/index', meaning: "Where Quarry's search index lives: a folder, or an object store URI (`s3://`, `gs://`, `az://`) that several server processes share." },
  { name: 'INDEX_READ_CONSISTENCY_MS', default: '1000', meaning: 'How long a process may read an older version of the index after another process wrote it, in ms (0-3600000; 0 checks on every read).' },
  { name: 'INDEX_SYNC', default: 'true', meaning: 'This process runs index sync jobs and the sync schedule; `false` leaves them to the processes that do (it still searches the index).' },
  { name: 'INDEX_SYNC_JOBS', default: '2', meaning: 'Index sync jobs one process runs at once, each in another search space (1-16).' },
  { name: 'RESPONSE_BATCHING', default: 'true', meaning: 'Write the responses finished in one event-loop turn together, so a busy server wakes its peer (proxy, client) once per turn; `false` writes each at once.' },
  { name: 'VALIDATE_RESPONSES', default: 'false', meaning: 'Check every response against openapi.yaml and record violations (tests turn it on).' },
];
