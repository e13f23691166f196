/**
 * The contract-driven fuzzer of hostile input, shared by test/api/fuzz-*.test.ts: for every operation of
 * openapi.yaml (the parsed YAML, so new operations are covered), spec-shaped requests built from the contract's own
 * JSON schemas, malformed ones (wrong types, missing and extra fields, huge and odd strings, deep nesting, bad ids and
 * query values, wrong content types, invalid JSON, wrong credentials), and the example request with one string at a
 * time replaced by NUL, an emoji or 10 kB. Whatever arrives, the answer is never a 5xx the contract does not document
 * (501, and 502/503/504 only where the operation documents them), always an envelope, always the contract.
 * The seed is fixed: a failure replays; fast-check prints the counterexample.
 */
import fc from 'fast-check';
import type { OpenAPIV3 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contract, type Operation } from '../contract/support/contract.js';
import type { ApiResponse } from './api-client.js';
import { randomIp } from './factories.js';
import { HOSTILE_ENV, createTenant, expectEnvelope, type Tenant } from './hostile.js';
import { SchemaArbitraries, anyJson, nastyString } from './schema-arbitrary.js';
import { startTestServer, type TestServer } from './test-server.js';
import { makeAdmin } from './operator.js';

const SEED = 20261122;
const VALID_RUNS = Number(process.env.FUZZ_VALID_RUNS ?? 30);
const MALFORMED_RUNS = Number(process.env.FUZZ_MALFORMED_RUNS ?? 30);

const contract = new Contract();
const arbitraries = new SchemaArbitraries((value) => contract.resolve(value));
/** The server under fuzzing (one per test file) and the number of requests sent to it. */
let t: TestServer;
let sent = 0;

interface FuzzRequest {
  path: Record<string, string>;
  query: [string, string][];
  /** undefined: no body; otherwise sent as is. */
  raw?: string;
  contentType?: string;
  /** Which credential to send. */
  auth: 'own' | 'none' | 'garbage' | 'swapped';
}

/** Lone surrogates become U+FFFD (encodeURIComponent throws on them). */
const wellFormed = (value: string) => value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
const safeEncode = (value: string) => encodeURIComponent(wellFormed(value));
const safeStringify = (value: unknown) => JSON.stringify(value) ?? 'null';

function queryPairs(name: string, value: unknown): [string, string][] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map((v) => [name, typeof v === 'object' ? safeStringify(v) : String(v)]);
  return [[name, typeof value === 'object' ? safeStringify(value) : String(value)]];
}

const GARBAGE_TOKENS = ['x', 'quarry_sk_test_' + 'A'.repeat(52), 'eyJhbGciOiJub25lIn0.e30.', 'a.b.c', 'quarry_sk_live_!!'];

function credential(operation: Operation, tenant: Tenant, auth: FuzzRequest['auth']): string | undefined {
  const usesKey = operation.schemes.includes('apiKey');
  const usesJwt = operation.schemes.includes('bearerJwt');
  if (auth === 'none') return undefined;
  if (auth === 'garbage') return GARBAGE_TOKENS[sent % GARBAGE_TOKENS.length]; // deterministic: the run replays
  if (auth === 'swapped') return usesKey ? tenant.user.token : tenant.key.secret;
  if (usesJwt) return tenant.user.token;
  if (usesKey) return tenant.key.secret;
  return undefined;
}

function jsonSchemaOf(operation: Operation): { schema?: OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject; required: boolean } {
  if (!operation.spec.requestBody) return { required: false };
  const body = contract.resolve(operation.spec.requestBody);
  return { schema: body.content['application/json']?.schema, required: body.required ?? false };
}

/** Spec-shaped requests: every part from the contract's schemas; path ids are sometimes the tenant's real ones. */
function validRequest(operation: Operation, realIds: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  const path: Record<string, fc.Arbitrary<string>> = {};
  const query: Record<string, fc.Arbitrary<unknown>> = {};
  const requiredQuery: string[] = [];
  for (const parameter of operation.parameters) {
    const schema = parameter.schema ?? { type: 'string' };
    if (parameter.in === 'path') {
      const generated = arbitraries.valid(schema).map(String);
      path[parameter.name] = realIds[parameter.name] ? fc.oneof(fc.constant(realIds[parameter.name]), generated) : generated;
    } else if (parameter.in === 'query') {
      query[parameter.name] = arbitraries.valid(schema);
      if (parameter.required) requiredQuery.push(parameter.name);
    }
  }
  const { schema, required } = jsonSchemaOf(operation);
  const body: fc.Arbitrary<unknown> = schema ? (required ? arbitraries.valid(schema) : fc.option(arbitraries.valid(schema), { nil: undefined })) : fc.constant(undefined);
  return fc.record({ path: fc.record(path), query: fc.record(query, { requiredKeys: requiredQuery }), body }).map(({ path: p, query: q, body: b }) => ({
    path: p,
    query: Object.entries(q).flatMap(([name, value]) => queryPairs(name, value)),
    raw: b === undefined ? undefined : safeStringify(b),
    auth: 'own' as const,
  }));
}

const badId = fc.oneof(nastyString.filter((s) => s.length > 0 && s.length < 3000), fc.constantFrom('0', '-1', '00000000-0000-0000-0000-000000000000', 'null', '..', '%2e%2e', 'a'.repeat(300)), fc.uuid());
const badQueryValue = fc.oneof(nastyString.filter((s) => s.length < 3000), fc.constantFrom('-1', '1e999', '1.5', 'true', '[]', '{}', '2026-13-45', '9'.repeat(40)));

/** A spec-shaped request with one part broken. */
function malformedRequest(operation: Operation, realIds: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  const { schema } = jsonSchemaOf(operation);
  const pathNames = operation.parameters.filter((p) => p.in === 'path').map((p) => p.name);
  const queryNames = operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const mutations: fc.Arbitrary<(r: FuzzRequest) => FuzzRequest>[] = [
    fc.constantFrom<FuzzRequest['auth']>('none', 'garbage', 'swapped').map((auth) => (r) => ({ ...r, auth })),
    fc.tuple(badQueryValue, fc.constantFrom(...queryNames, 'unknownParam')).map(([value, name]) => (r) => ({ ...r, query: [...r.query.filter(([n]) => n !== name), [name, value]] })),
    fc.constantFrom('{', '{"a":', 'nul', '[1,]', "{'a':1}", '\u0000', '"\ud800"', '1', '"text"', '{"a":1}{"b":2}', '\uFEFF{}').map((raw) => (r) => ({ ...r, raw })),
    fc.integer({ min: 100, max: 20_000 }).map((n) => (r) => ({ ...r, raw: '['.repeat(n) + ']'.repeat(n) })),
    fc.integer({ min: 100, max: 20_000 }).map((n) => (r) => ({ ...r, raw: '{"a":'.repeat(n) + '1' + '}'.repeat(n) })),
    fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/jsonx')
      .map((contentType) => (r) => ({ ...r, contentType, raw: r.raw ?? '{"a":1}' })),
    anyJson.map((value) => (r) => ({ ...r, raw: safeStringify(value) })),
  ];
  if (pathNames.length > 0) {
    mutations.push(fc.tuple(fc.constantFrom(...pathNames), badId).map(([name, id]) => (r) => ({ ...r, path: { ...r.path, [name]: id } })));
  }
  if (schema) mutations.push(arbitraries.invalid(schema).map((value) => (r) => ({ ...r, raw: safeStringify(value) })));
  return fc.tuple(validRequest(operation, realIds), fc.oneof(...mutations)).map(([request, mutate]) => mutate(request));
}

async function send(operation: Operation, tenant: Tenant, request: FuzzRequest): Promise<ApiResponse> {
  let url = operation.path;
  for (const [name, value] of Object.entries(request.path)) url = url.replace(`{${name}}`, safeEncode(value));
  if (request.query.length > 0) url += '?' + request.query.map(([k, v]) => `${safeEncode(k)}=${safeEncode(v)}`).join('&');
  const headers: Record<string, string> = { 'X-Forwarded-For': randomIp() };
  // fetch cannot send a body with GET or HEAD.
  if (operation.method === 'GET' || operation.method === 'HEAD') request = { ...request, raw: undefined };
  if (request.raw !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
  const token = credential(operation, tenant, request.auth);
  sent += 1;
  return t.client.request(operation.method, url, undefined, { token, headers, raw: request.raw });
}

function check(operation: Operation, request: FuzzRequest, res: ApiResponse): void {
  const context = `${operation.operationId} ${res.status} ${JSON.stringify(res.body)?.slice(0, 400)} for ${JSON.stringify(request).slice(0, 400)}`;
  const documentedDependencyFailure = [502, 503, 504].includes(res.status) && contract.response(operation, res.status)?.key === String(res.status);
  if (res.status >= 500 && res.status !== 501 && !documentedDependencyFailure) expect.fail(`5xx: ${context}`);
  expectEnvelope(res, context, operation.spec.tags?.includes('Docs'));
  try {
    t.assertContract();
  } catch (error) {
    expect.fail(`${(error as Error).message}\nfor ${context}`);
  }
}

const HOSTILE_LEAVES = ['\u0000', 'a\u0000b', '😀\u202E', 'é'.repeat(5000)];

/** Paths to the string leaves of a JSON value. */
function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, [...path, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

function replaceAt(value: unknown, path: (string | number)[], replacement: string): unknown {
  if (path.length === 0) return replacement;
  const copy = JSON.parse(JSON.stringify(value)) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]] = replacement;
  return copy;
}

/**
 * The contract's example request with one string (a body leaf, a query or path parameter) replaced by NUL, an
 * emoji with a right-to-left override, or 5,000 two-byte characters: every such variant of every operation.
 */
function leafSweep(operation: Operation, realIds: Record<string, string>): FuzzRequest[] {
  const example = contract.exampleRequest(operation);
  const query = [...new URLSearchParams(example.url.split('?')[1] ?? '')] as [string, string][];
  const path: Record<string, string> = {};
  for (const p of operation.parameters.filter((p) => p.in === 'path')) path[p.name] = realIds[p.name] ?? 'unknown';
  const base: FuzzRequest = { path, query, raw: example.body === undefined ? undefined : JSON.stringify(example.body), auth: 'own' };
  const variants: FuzzRequest[] = [];
  for (const hostile of HOSTILE_LEAVES) {
    for (const name of Object.keys(path)) variants.push({ ...base, path: { ...path, [name]: hostile } });
    for (const [name] of query) variants.push({ ...base, query: query.map(([k, v]) => [k, k === name ? hostile : v]) });
    for (const p of operation.parameters.filter((p) => p.in === 'query' && !query.some(([k]) => k === p.name))) variants.push({ ...base, query: [...query, [p.name, hostile]] });
    for (const leaf of stringLeaves(example.body)) variants.push({ ...base, raw: JSON.stringify(replaceAt(example.body, leaf, hostile)) });
  }
  return variants;
}

export type FuzzKind = 'spec-shaped' | 'malformed' | 'leaf-sweep';

/** Defines the fuzz suite of one test file: its own server, a fresh tenant per operation, the given kinds of request. */
export function fuzzContract(kinds: FuzzKind[]): void {
  let admin: Tenant;
  beforeAll(async () => {
    t = await startTestServer(HOSTILE_ENV);
    sent = 0;
    admin = await createTenant(t, 'fuzz-admin', { email: 'fuzz-admin@example.com' });
    await makeAdmin(t, admin.user);
  }, 60_000);

  afterAll(async () => {
    console.info(`fuzz (${kinds.join(', ')}): ${sent} requests on the ${process.env.QUARRY_TEST_STORE ?? 'sqlite'} store`);
    await t?.stop();
  });

  describe(`fuzzing every operation of openapi.yaml: ${kinds.join(', ')}`, () => {
    it('covers every operation of the contract', () => {
      expect(contract.operations.length).toBeGreaterThan(40);
    });

    describe.each(contract.operations.map((operation) => [operation.operationId, operation] as const))('%s', (_, operation) => {
      let tenant: Tenant;
      let realIds: Record<string, string>;

      beforeAll(async () => {
        // A fresh tenant per operation: logout, change-password, revoke and delete spoil their tenant for the next one.
        tenant = operation.spec['x-quarry-admin' as keyof OpenAPIV3.OperationObject] ? admin : await createTenant(t, `fuzz-${operation.operationId}`);
        realIds = { keyId: tenant.key.id, databaseId: tenant.databaseId };
      });

      if (kinds.includes('spec-shaped')) {
        it(`when ${VALID_RUNS} spec-shaped requests arrive, then no undocumented 5xx, envelopes and the contract hold`, async () => {
          await fc.assert(
            fc.asyncProperty(validRequest(operation, realIds), async (request) => check(operation, request, await send(operation, tenant, request))),
            { numRuns: VALID_RUNS, seed: SEED, endOnFailure: true },
          );
        }, 60_000);
      }

      if (kinds.includes('malformed')) {
        it(`when ${MALFORMED_RUNS} malformed requests arrive, then no undocumented 5xx, envelopes and the contract hold`, async () => {
          await fc.assert(
            fc.asyncProperty(malformedRequest(operation, realIds), async (request) => check(operation, request, await send(operation, tenant, request))),
            { numRuns: MALFORMED_RUNS, seed: SEED, endOnFailure: true },
          );
        }, 60_000);
      }

      if (kinds.includes('leaf-sweep')) {
        it('when any one string of the example request is NUL, an emoji or 10 kB, then no undocumented 5xx and the contract holds', async () => {
          for (const request of leafSweep(operation, realIds)) check(operation, request, await send(operation, tenant, request));
        }, 60_000);
      }
    });

    it('when the fuzzing is over, then the server still answers', async () => {
      const res = await t.client.get('/health');
      expect(res.status).toBe(200);
    });
  });
}
