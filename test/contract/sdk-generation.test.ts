/**
 * A partner's SDK: @hey-api/openapi-ts generates one from openapi.yaml, the TypeScript compiler checks it
 * and a consumer of it in strict mode (scripts/check-sdk.ts, also `npm run sdk:check`), and the consumer then walks
 * a first session through the generated SDK against the in-process server.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkSdk, type SdkCheck } from '../../scripts/check-sdk.js';
import { seedSqlite } from '../support/search-corpus.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let sdk: SdkCheck;
let t: TestServer;

beforeAll(async () => {
  sdk = await checkSdk();
  t = await startTestServer();
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  if (sdk) rmSync(sdk.dir, { recursive: true, force: true });
  await t?.stop();
}, 30_000);

describe('an SDK generated with @hey-api/openapi-ts', () => {
  it('when generated from openapi.yaml, then the SDK with its bundled fetch client and a consumer type-check in strict mode', () => {
    expect(sdk.files).toEqual(expect.arrayContaining(['sdk/index.ts', 'sdk/sdk.gen.ts', 'sdk/types.gen.ts', 'sdk/client/index.ts', 'consumer.ts']));
    expect(sdk.diagnostics, `generated SDK kept in ${sdk.dir}`).toEqual([]);
  });

  it('when the consumer runs against the server, then the generated SDK registers, connects SQLite and finds the rows', async () => {
    const file = await seedSqlite(join(sdk.dir, 'files'), 'stone.db', 'products', [
      { id: 1, title: 'Granite countertop sealer', body: 'Protects quarried stone.' },
      { id: 2, title: 'Garden hose', body: 'Fifty feet of hose.' },
    ]);
    const { firstSession } = (await import(join(sdk.dir, 'consumer.ts'))) as { firstSession: (baseUrl: string, file: string, bytes: Blob) => Promise<{ fields: Record<string, unknown> }[]> };
    const results = await firstSession(t.server.url, 'stone.db', new Blob([readFileSync(file)]));
    expect(results.map((result) => result.fields.title)).toEqual(['Granite countertop sealer']);
  });
});
