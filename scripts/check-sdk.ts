/**
 * The SDK path for partners: generates a TypeScript SDK from openapi.yaml with @hey-api/openapi-ts and
 * its bundled fetch client (no other package, no network), adds a consumer that walks a first session through the
 * SDK (register, log in, key, upload a SQLite file, connect it, schema, search, rate-limit status), and type-checks both with the
 * TypeScript compiler in strict mode, as a partner's project would. Exits 1 on any generator or type error.
 *   npm run sdk:check [-- --keep]      (--keep leaves the generated SDK in the temp folder it names)
 * test/contract/sdk-generation.test.ts runs the same check.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { parse } from 'yaml';

const contractFile = fileURLToPath(new URL('../openapi.yaml', import.meta.url));

/** What a partner writes against the generated SDK; it must compile, or the SDK is not usable as generated. */
const consumer = `
import { createClient, createConfig } from './sdk/client/index.js';
import {
  createApiKey, createDatabase, getDatabaseSchema, getRateLimitStatus, loginUser, registerUser, searchDatabases,
  uploadSqliteFile, type SearchResult,
} from './sdk/index.js';

export async function firstSession(baseUrl: string, sqliteFile: string, bytes: Blob): Promise<SearchResult[]> {
  const anonymous = createClient(createConfig({ baseUrl }));
  const credentials = { email: 'ada@example.com', password: 'correct-horse-42' };
  await registerUser({ client: anonymous, body: { ...credentials, name: 'Ada' } });
  const login = await loginUser({ client: anonymous, body: credentials, throwOnError: true });

  const account = createClient(createConfig({ baseUrl, auth: login.data.data.tokens.accessToken }));
  const key = await createApiKey({ client: account, body: { name: 'sdk', environment: 'test', permissions: ['search'] }, throwOnError: true });
  // The generated call sets bodySerializer: null, and the bundled fetch client then sends no body at all: give it one.
  await uploadSqliteFile({ client: account, path: { fileName: sqliteFile }, body: bytes, bodySerializer: (body: Blob) => body, throwOnError: true });
  const connected = await createDatabase({ client: account, body: { name: 'Notes', engine: 'sqlite', database: sqliteFile, environment: 'test' } });
  if (connected.error) throw new Error(connected.error.error.code + ': ' + connected.error.error.message);
  const databaseId: string = connected.data.data.database.id;
  const schema = await getDatabaseSchema({ client: account, path: { databaseId }, throwOnError: true });
  void schema.data.data;

  const withKey = createClient(createConfig({ baseUrl, auth: key.data.data.secretKey }));
  const found = await searchDatabases({ client: withKey, body: { query: 'granite', databases: [databaseId] } });
  if (found.error) throw new Error(found.error.error.code);
  const status = await getRateLimitStatus({ client: withKey, throwOnError: true });
  const remaining: number = status.data.data.rateLimit.current.remaining;
  void remaining;
  return found.data.data.results;
}
`;

export interface SdkCheck {
  /** The temp folder holding `sdk/` (generated) and `consumer.ts`. */
  dir: string;
  /** Generated files, relative to `dir`. */
  files: string[];
  /** Compiler errors, formatted; empty when the SDK and its consumer type-check. */
  diagnostics: string[];
}

const listFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

/** Generates the SDK into a fresh temp folder and type-checks it. Throws when the generator fails. */
export async function checkSdk(): Promise<SdkCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-sdk-'));
  await createClient({
    input: parse(readFileSync(contractFile, 'utf8')) as Record<string, unknown>,
    output: { path: join(dir, 'sdk') },
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    logs: { level: 'silent', file: false },
  });
  writeFileSync(join(dir, 'consumer.ts'), consumer);
  const files = listFiles(dir).filter((file) => file.endsWith('.ts'));

  // A partner's strict browser-or-Node project: ESM with NodeNext resolution, DOM types for fetch, no @types.
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    noUnusedLocals: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    skipLibCheck: false,
  });
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.formatDiagnostic(d, host).trim());
  return { dir, files: files.map((file) => relative(dir, file)), diagnostics };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const keep = process.argv.includes('--keep');
  const result = await checkSdk();
  if (result.diagnostics.length > 0) {
    console.error(`the generated SDK does not type-check (${result.diagnostics.length} errors; kept in ${result.dir}):\n${result.diagnostics.join('\n')}`);
    process.exit(1);
  }
  console.log(`SDK generated from openapi.yaml with @hey-api/openapi-ts (${result.files.length} files) type-checks in strict mode${keep ? `: ${result.dir}` : ''}`);
  if (!keep) rmSync(result.dir, { recursive: true, force: true });
}
