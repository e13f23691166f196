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
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', storeKind: 'sqlite', redisUrl: null, trustProxy: false, rateLimitEnabled: true, responseBatching: true });
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
    ['RESPONSE_BATCHING', 'sometimes', /RESPONSE_BATCHING must be true or false/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
    ['NODE_ENV', 'staging', /NODE_ENV must be one of/],
    ['BODY_LIMIT', '10', /BODY_LIMIT must be a whole number from 1024/],
    ['CORS_ORIGINS', 'shop.example.com', /CORS_ORIGINS must be \*, none, or comma-separated origins .* got "shop.example.com"/],
    ['CORS_ORIGINS', 'https://shop.example.com/search', /CORS_ORIGINS must be .* got "https:\/\/shop.example.com\/search"/],
    ['CORS_ORIGINS', 'https://a.example.com, ftp://b.example.com', /CORS_ORIGINS must be .* got "ftp:\/\/b.example.com"/],
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
