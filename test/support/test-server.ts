import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { ApiClient } from './api-client.js';
import { freshPostgresDatabase } from './stores.js';

export interface TestServer {
  server: RunningServer;
  /** The server's DATA_DIR (its SQLite store, secrets and SQLITE_DATA_DIR = <dataDir>/sqlite). */
  dataDir: string;
  client: ApiClient;
  /** Writes batched usage records now (they are otherwise written every USAGE_FLUSH_MS). */
  flush(): Promise<void>;
  /** Throws when any response so far did not match openapi.yaml. */
  assertContract(): void;
  stop(): Promise<void>;
}

/**
 * Starts Quarry in-process on a random port with its own store: a temp SQLite file, or a fresh PostgreSQL
 * database when the test project says QUARRY_TEST_STORE=postgres. Every response is checked against openapi.yaml.
 */
export async function startTestServer(env: Record<string, string> = {}, options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-test-'));
  const postgres = process.env.QUARRY_TEST_STORE === 'postgres' ? await freshPostgresDatabase() : null;
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    VALIDATE_RESPONSES: 'true',
    USAGE_FLUSH_MS: '60000',
    TRUST_PROXY: 'true',
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
    ...env,
  });
  const server = await startServer(config, createLogger('silent'), options);
  const violations = server.app.contractViolations;
  return {
    server,
    dataDir,
    client: new ApiClient(server.url),
    flush: () => server.services.usage.flush(),
    assertContract() {
      if (violations.length > 0) {
        const report = JSON.stringify(violations.splice(0), null, 2);
        throw new Error(`responses that break openapi.yaml:\n${report}`);
      }
    },
    async stop() {
      await server.stop();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
