import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

const dataDir = () => mkdtempSync(join(tmpdir(), 'quarry-config-'));

describe('loadConfig', () => {
  it('when nothing is set, then safe defaults: port 3000 on 127.0.0.1, SQLite in DATA_DIR, memory limits', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', storeKind: 'sqlite', redisUrl: null, trustProxy: false, rateLimitEnabled: true });
    expect(config.databaseUrl).toBe(`sqlite:${join(dir, 'quarry.sqlite')}`);
    expect(config.credentialsKey).toHaveLength(32);
  });

  it('when secrets are generated, then they are kept (mode 0600) and the same on the next start', () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
    expect(second.jwt.secret).toBe(first.jwt.secret);
    expect(second.apiKeyPepper).toBe(first.apiKeyPepper);
    expect(second.credentialsKey.equals(first.credentialsKey)).toBe(true);
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8'))).toHaveProperty('jwtSecret');
  });

  it('when DATABASE_URL is postgres, then the store is PostgreSQL', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), DATABASE_URL: 'postgres://u@h:5432/db' }).storeKind).toBe('postgres');
  });

  it.each([
    ['PORT', 'eighty', /PORT must be a whole number/],
    ['PORT', '70000', /PORT must be a whole number from 0 to 65535/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must start with sqlite: or postgres/],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL must start with redis:\/\//],
    ['JWT_SECRET', 'short', /JWT_SECRET must be at least 32 characters/],
    ['CREDENTIALS_KEY', 'dG9vLXNob3J0', /CREDENTIALS_KEY must be the base64 encoding of exactly 32 bytes/],
    ['TRUST_PROXY', 'maybe', /TRUST_PROXY must be true or false/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
    ['NODE_ENV', 'staging', /NODE_ENV must be one of/],
    ['BODY_LIMIT', '10', /BODY_LIMIT must be a whole number from 1024/],
    ['CORS_ORIGINS', 'shop.example.com', /CORS_ORIGINS must be \*, none, or comma-separated origins .* got "shop.example.com"/],
    ['CORS_ORIGINS', 'https://shop.example.com/search', /CORS_ORIGINS must be .* got "https:\/\/shop.example.com\/search"/],
    ['CORS_ORIGINS', 'https://a.example.com, ftp://b.example.com', /CORS_ORIGINS must be .* got "ftp:\/\/b.example.com"/],
    ['BODY_LIMIT', '2e3', /BODY_LIMIT must be a whole number/],
    ['HOST', 'not a host', /HOST must be an IP address or a host name/],
    ['UPGRADE_URL', 'ftp://example.com', /UPGRADE_URL must be an http\(s\) URL/],
    ['DB_HOST_ALLOWLIST', 'db.internal,10.0.0.0/40', /DB_HOST_ALLOWLIST has an entry that is not a host.*"10\.0\.0\.0\/40"/],
    ['DB_ALLOW_PRIVATE_HOSTS', 'sometimes', /DB_ALLOW_PRIVATE_HOSTS must be true or false/],
  ])('when %s is %j, then the start stops with a clear message', (name, value, message) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), [name]: value })).toThrow(message);
  });

  it('when several values are bad, then one error lists them all', () => {
    try {
      loadConfig({ DATA_DIR: dataDir(), PORT: 'x', REDIS_URL: 'nope' });
      expect.fail('should throw');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });

  it('when DB_HOST_ALLOWLIST has a bad network and a bad host, then the start stops naming each', () => {
    const error = (() => {
      try {
        loadConfig({ DATA_DIR: dataDir(), DB_HOST_ALLOWLIST: '10.0.0.0/40,bad host' });
      } catch (thrown) {
        return thrown as ConfigError;
      }
      return expect.fail('should throw');
    })();
    expect(error.problems).toEqual([
      expect.stringMatching(/^DB_HOST_ALLOWLIST has an entry .*"10\.0\.0\.0\/40"/),
      expect.stringMatching(/^DB_HOST_ALLOWLIST has an entry .*"bad host"/),
    ]);
  });

  it('when a secret is bad, then the message names it without repeating its value', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), JWT_SECRET: 'hunter2-too-short' })).toThrow(/^(?![\s\S]*hunter2)[\s\S]*JWT_SECRET must be at least 32 characters/);
  });

  it('when a value is blank, then the default is used', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), PORT: '  ', LOG_LEVEL: '' })).toMatchObject({ port: 3000, logLevel: 'info' });
  });

  it('when the allow-list is given, then it is kept as a list', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), DB_HOST_ALLOWLIST: ' db.internal , 10.0.0.0/8 ,' })).toMatchObject({
      dbHostAllowlist: ['db.internal', '10.0.0.0/8'],
    });
  });

  it('when the retired ADMIN_EMAILS is still set, then the start stops and says how roles are granted now, with any other problem', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), ADMIN_EMAILS: 'ops@example.com', PORT: 'x' }))
      .toThrow(/PORT must be a whole number[\s\S]*ADMIN_EMAILS is no longer supported.*npm run user -- role <email> admin/);
  });

  it('when the index settings are not set, then the index lives under DATA_DIR, this process syncs, two jobs at once', () => {
    const dir = dataDir();
    expect(loadConfig({ DATA_DIR: dir }).index).toEqual({
      uri: join(dir, 'index'), readConsistencyMs: 1000, vocabularyTerms: 2_000_000, cacheMb: 256, metadataCacheMb: 64, rowCacheMb: 512, sync: true, maxJobs: 2, maxAttempts: 3,
      staleMs: 10_000, keepVersionsMs: 300_000, storageOptions: {},
    });
    expect(loadConfig({ DATA_DIR: dir, INDEX_CACHE_MB: '1024', INDEX_METADATA_CACHE_MB: '16' }).index).toMatchObject({ cacheMb: 1024, metadataCacheMb: 16 });
    expect(() => loadConfig({ DATA_DIR: dir, INDEX_CACHE_MB: '8' })).toThrow(/INDEX_CACHE_MB must be a whole number from 16/);
    expect(loadConfig({ DATA_DIR: dir, INDEX_ROW_CACHE_MB: '0' }).index).toMatchObject({ rowCacheMb: 0 });
    expect(() => loadConfig({ DATA_DIR: dir, LANCE_CPU_THREADS: '2' })).toThrow(/LANCE_CPU_THREADS must be a whole number from 3 to 256/);
    expect(() => loadConfig({ DATA_DIR: dir, LANCE_IO_THREADS: 'many' })).toThrow(/LANCE_IO_THREADS must be a whole number from 1 to 1024/);
    expect(() => loadConfig({ DATA_DIR: dir, LANCE_CPU_THREADS: '4', LANCE_IO_THREADS: '4' })).not.toThrow();
    expect(() => loadConfig({ DATA_DIR: dir, INDEX_ROW_CACHE_MB: '1.5' })).toThrow(/INDEX_ROW_CACHE_MB must be a whole number from 0 to 65536/);
    expect(loadConfig({ DATA_DIR: dir, INDEX_URI: 's3://bucket/quarry', INDEX_SYNC: 'false' }).index).toMatchObject({ uri: 's3://bucket/quarry', sync: false });
    expect(() => loadConfig({ DATA_DIR: dir, INDEX_URI: 'http://example.com/index' })).toThrow(/INDEX_URI must be a folder or an s3:\/\//);
    expect(() => loadConfig({ DATA_DIR: dir, INDEX_SYNC_JOBS: '0' })).toThrow(/INDEX_SYNC_JOBS must be a whole number from 1 to 16/);
    expect(loadConfig({ DATA_DIR: dir, INDEX_VOCABULARY_TERMS: '0' }).index.vocabularyTerms).toBe(0);
    expect(() => loadConfig({ DATA_DIR: dir, INDEX_VOCABULARY_TERMS: '-1' })).toThrow(/INDEX_VOCABULARY_TERMS must be a whole number/);
  });

  it('when the object store settings are given for an s3:// index, then they become LanceDB storage options', () => {
    const config = loadConfig({
      DATA_DIR: dataDir(), INDEX_URI: 's3://bucket/quarry', INDEX_S3_ENDPOINT: 'http://127.0.0.1:9000', INDEX_S3_REGION: 'us-east-1',
      INDEX_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', INDEX_S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI', INDEX_S3_SESSION_TOKEN: 'token-1', INDEX_ALLOW_HTTP: 'true',
    });
    expect(config.index.storageOptions).toEqual({
      aws_endpoint: 'http://127.0.0.1:9000', aws_region: 'us-east-1', aws_access_key_id: 'AKIDEXAMPLE',
      aws_secret_access_key: 'wJalrXUtnFEMI', aws_session_token: 'token-1', allow_http: 'true',
    });
    expect(loadConfig({ DATA_DIR: dataDir(), INDEX_URI: 'gs://bucket/q', INDEX_GCS_SERVICE_ACCOUNT: '/etc/quarry/gcs.json' }).index.storageOptions)
      .toEqual({ google_service_account: '/etc/quarry/gcs.json' });
    expect(loadConfig({ DATA_DIR: dataDir(), INDEX_URI: 'az://container/q', INDEX_AZURE_ACCOUNT_NAME: 'quarrydata', INDEX_AZURE_ACCOUNT_KEY: 'a2V5' }).index.storageOptions)
      .toEqual({ azure_storage_account_name: 'quarrydata', azure_storage_account_key: 'a2V5' });
  });

  it.each([
    [{ INDEX_S3_REGION: 'us-east-1' }, /INDEX_S3_REGION apply only to a s3:\/\/ INDEX_URI/],
    [{ INDEX_URI: 's3://b/q', INDEX_AZURE_ACCOUNT_NAME: 'quarrydata' }, /INDEX_AZURE_ACCOUNT_NAME apply only to a az:\/\/ INDEX_URI/],
    [{ INDEX_URI: 's3://b/q', INDEX_S3_ACCESS_KEY_ID: 'AKID' }, /INDEX_S3_ACCESS_KEY_ID and INDEX_S3_SECRET_ACCESS_KEY go together/],
    [{ INDEX_URI: 's3://b/q', INDEX_S3_ENDPOINT: 'https://s3.example.com' }, /INDEX_S3_ENDPOINT needs INDEX_S3_REGION/],
    [{ INDEX_URI: 's3://b/q', INDEX_S3_ENDPOINT: 'http://127.0.0.1:9000', INDEX_S3_REGION: 'us-east-1' }, /INDEX_S3_ENDPOINT is http:\/\/: set INDEX_ALLOW_HTTP=true/],
    [{ INDEX_URI: 's3://b/q', INDEX_S3_ENDPOINT: 'ftp://x', INDEX_S3_REGION: 'us-east-1' }, /INDEX_S3_ENDPOINT must be an http\(s\) URL/],
    [{ INDEX_URI: 'az://c/q', INDEX_AZURE_ACCOUNT_KEY: 'a2V5' }, /INDEX_AZURE_ACCOUNT_KEY needs INDEX_AZURE_ACCOUNT_NAME/],
  ])('when the object store settings are %j, then the start stops with a clear message', (settings, message) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), ...settings })).toThrow(message);
  });

  it('when an object store secret is given with a mistake, then no message repeats it', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), INDEX_URI: 's3://b/q', INDEX_S3_SECRET_ACCESS_KEY: 'hunter2-secret', INDEX_S3_SESSION_TOKEN: 'hunter3-token' }))
      .toThrow(/^(?![\s\S]*hunter)[\s\S]*INDEX_S3_ACCESS_KEY_ID and INDEX_S3_SECRET_ACCESS_KEY go together/);
  });

  it('when INDEX_KEEP_VERSIONS_MS is shorter than a reader may read a version, then the start stops saying how long it must be', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), INDEX_KEEP_VERSIONS_MS: '5000' }))
      .toThrow(/INDEX_KEEP_VERSIONS_MS must be at least INDEX_READ_CONSISTENCY_MS plus SEARCH_TIMEOUT_MS \(6000\)/);
    expect(loadConfig({ DATA_DIR: dataDir(), INDEX_KEEP_VERSIONS_MS: '6000' }).index.keepVersionsMs).toBe(6000);
  });

  it('when WORKERS is not set, then one process serves; above 1, the start stops unless Redis and a PostgreSQL store are set', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).workers).toBe(1);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WORKERS: '2' }))
      .toThrow(/WORKERS above 1 needs REDIS_URL[\s\S]*WORKERS above 1 needs a postgres:\/\/ DATABASE_URL/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'sqlite:/tmp/q.sqlite' }))
      .toThrow(/WORKERS above 1 needs a postgres:\/\/ DATABASE_URL: the embedded SQLite store serves one process/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WORKERS: '0' })).toThrow(/WORKERS must be a whole number from 1 to 64\./);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WORKERS: 'auto' })).toThrow(/WORKERS must be a whole number from 1 to 64, got "auto"/);
    const config = loadConfig({ DATA_DIR: dataDir(), WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/quarry' });
    expect(config.workers).toBe(2);
  });

  it('when NODE_ENV is production, then private database hosts are refused unless allowed', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), NODE_ENV: 'production' }).dbAllowPrivateHosts).toBe(false);
    expect(loadConfig({ DATA_DIR: dataDir() }).dbAllowPrivateHosts).toBe(true);
    expect(loadConfig({ DATA_DIR: dataDir(), NODE_ENV: 'production', DB_ALLOW_PRIVATE_HOSTS: 'true' }).dbAllowPrivateHosts).toBe(true);
  });

  it('when CORS_ORIGINS is not set, then pages of any origin may call a development server and none a production one', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).corsOrigins).toBe('*');
    expect(loadConfig({ DATA_DIR: dataDir(), NODE_ENV: 'production' }).corsOrigins).toEqual([]);
    expect(loadConfig({ DATA_DIR: dataDir(), NODE_ENV: 'production', CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ DATA_DIR: dataDir(), CORS_ORIGINS: 'none' }).corsOrigins).toEqual([]);
  });

  it('when CORS_ORIGINS lists origins, then each is kept as browsers send it (lower case, no default port, no slash)', () => {
    const config = loadConfig({ DATA_DIR: dataDir(), CORS_ORIGINS: 'https://Shop.Example.com:443/, http://localhost:8080,http://localhost:8080' });
    expect(config.corsOrigins).toEqual(['https://shop.example.com', 'http://localhost:8080']);
  });
});
