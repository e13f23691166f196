/**
 * Quarry's mock for frontend teams (`npm run mock`, as the README shows it): every operation answers its example
 * request with one of Quarry's own documented examples (not a body made up from the schema), each named example of
 * openapi.yaml is served under the name and status the reference lists, what is served is valid against Quarry's
 * schemas, and secured operations ask for a credential. That the examples themselves are valid and say what the
 * server says is test/contract/examples.test.ts's part; Prism's own handling of `Prefer` is not what is tested here,
 * only that Quarry's examples are reachable with it as documented. Operations are read from openapi.yaml, so a new
 * operation is covered without touching this file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../support/api-client.js';
import { Contract, type Operation } from './support/contract.js';
import { startPrism, type PrismProcess } from './support/prism.js';
import { SchemaValidator } from './support/schema-validator.js';

const contract = new Contract();
const validator = new SchemaValidator(contract);
const operations = contract.operations;
const secured = operations.filter((operation) => operation.secured);

/** Every named example of every documented status, with the Prefer header that selects it. */
interface ExampleCase {
  operation: Operation;
  status: number;
  key: string;
  mediaType: string;
  name: string;
  value: unknown;
}
const exampleCases: ExampleCase[] = operations.flatMap((operation) =>
  Object.keys(operation.spec.responses ?? {}).flatMap((key) => {
    const response = contract.resolve(operation.spec.responses[key]);
    // `default` has no code of its own: Prism serves it for any undeclared code, so ask for 500.
    const status = key === 'default' ? 500 : Number(key);
    return Object.keys(response.content ?? {}).flatMap((mediaType) =>
      contract.namedExamples(response, mediaType).map(([name, value]) => ({ operation, status, key, mediaType, name, value })),
    );
  }),
);
/** 2xx responses with several named examples (e.g. testDatabaseConnection ok/failed): each must be selectable. */
const successChoices = exampleCases.filter(
  (c) => c.status >= 200 && c.status < 300 && exampleCases.filter((o) => o.operation === c.operation && o.key === c.key && o.mediaType === c.mediaType).length > 1,
);
const errorExamples = exampleCases.filter((c) => c.status >= 300);

let prism: PrismProcess;
let client: ApiClient;

beforeAll(async () => {
  prism = await startPrism(['mock', 'openapi.yaml']);
  client = new ApiClient(prism.url);
  console.info(`prism mock: checking ${operations.length} operations, ${successChoices.length} selectable 2xx examples, ${errorExamples.length} error examples`);
}, 120_000);
afterAll(async () => {
  await prism?.stop();
}, 30_000);

/** Sends the contract's own example request; a credential whenever the operation needs one. */
function send(operation: Operation, options: { credential?: boolean; prefer?: string; accept?: string } = {}): Promise<ApiResponse> {
  const { url, body, contentType } = contract.exampleRequest(operation);
  const headers: Record<string, string> = {};
  if (options.prefer) headers.prefer = options.prefer;
  if (options.accept) headers.accept = options.accept;
  const token = (options.credential ?? operation.secured) ? 'mock-credential' : undefined;
  // A body that is not JSON (uploadSqliteFile's bytes) goes out as it is, with its own media type.
  if (contentType) return client.request(operation.method, url, undefined, { token, headers: { ...headers, 'content-type': contentType }, raw: String(body) });
  return client.request(operation.method, url, body, { token, headers });
}

/** Everything about one mock answer that does not match the contract, in words. */
function problemsOf(operation: Operation, response: ApiResponse): string[] {
  return [
    ...validator.bodyProblems(operation, response.status, response.headers.get('content-type'), response.body),
    ...validator.headerProblems(operation, response.status, response.headers),
  ];
}

const describeFailure = (c: ExampleCase, response: ApiResponse, problems: string[]) =>
  `${c.operation.operationId} ${c.key} example "${c.name}" (${c.mediaType}) -> ${response.status}: ${problems.join('; ') || JSON.stringify(response.body).slice(0, 300)}`;

describe(`prism mock of openapi.yaml (${operations.length} operations)`, () => {
  it.each(operations.map((operation) => [operation.operationId, operation] as const))(
    'when %s gets a valid request, then the mock answers its lowest 2xx with one of its documented examples, body and headers valid against the contract',
    async (_operationId, operation) => {
      const expected = contract.successStatus(operation);
      const response = await send(operation);
      expect(response.headers.get('sl-violations'), 'Prism reports the example request or its own answer as breaking the contract').toBeNull();
      expect(response.status).toBe(expected);
      expect(problemsOf(operation, response)).toEqual([]);
      const documented = exampleCases.filter((c) => c.operation === operation && c.status === expected).map((c) => c.value);
      if (documented.length > 0) expect(documented).toContainEqual(response.body);
    },
  );

  it.each(successChoices.map((c) => [c.operation.operationId, c.name, c] as const))(
    'when %s is asked for its documented example "%s" as the README shows, then the mock serves exactly that example',
    async (_operationId, _name, c) => {
      const lowest = contract.successStatus(c.operation) === c.status;
      // The lowest 2xx is the default answer: `example=` alone must select within it.
      const prefer = lowest ? `example=${c.name}` : `code=${c.status}, example=${c.name}`;
      const response = await send(c.operation, { prefer, accept: c.mediaType });
      expect(response.status).toBe(c.status);
      expect(response.body).toEqual(c.value);
      expect(problemsOf(c.operation, response)).toEqual([]);
    },
  );

  it(`when each of the ${errorExamples.length} documented error examples is asked for with Prefer, then the mock answers it with its status and a valid body`, async () => {
    const failures: string[] = [];
    for (const c of errorExamples) {
      const response = await send(c.operation, { prefer: `code=${c.status}, example=${c.name}`, accept: c.mediaType });
      const problems = problemsOf(c.operation, response);
      if (response.status !== c.status || JSON.stringify(response.body) !== JSON.stringify(c.value) || problems.length > 0) {
        failures.push(describeFailure(c, response, problems));
      }
    }
    expect(failures).toEqual([]);
  });

  it('when an operation limited per client IP is mocked, then its rate-limit headers say what the server says: tier anonymous and its own limit', async () => {
    const perIp = operations.filter((operation) => (operation.spec as unknown as Record<string, { scope?: string }>)['x-quarry-rate-limit']?.scope === 'ip');
    expect(perIp.map((operation) => operation.operationId).sort()).toEqual(['loginUser', 'refreshSession', 'registerUser']);
    for (const operation of perIp) {
      const { limit } = (operation.spec as unknown as Record<string, { limit: number }>)['x-quarry-rate-limit'];
      for (const prefer of [undefined, 'code=429']) {
        const response = await send(operation, { prefer });
        expect([operation.operationId, prefer, response.headers.get('x-ratelimit-tier'), response.headers.get('x-ratelimit-limit')])
          .toEqual([operation.operationId, prefer, 'anonymous', String(limit)]);
      }
    }
  });

  it(`when any of the ${secured.length} secured operations is called without a credential, then the mock answers 401 in the error envelope`, async () => {
    const failures: string[] = [];
    for (const operation of secured) {
      const response = await send(operation, { credential: false });
      const problems = problemsOf(operation, response);
      if (response.status !== 401 || problems.length > 0) failures.push(`${operation.operationId} -> ${response.status}: ${problems.join('; ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('when the contract is read, then every operation has an operationId and a 2xx response the mock can serve', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.filter((operation) => !operation.spec.operationId).map((o) => `${o.method} ${o.path}`)).toEqual([]);
    expect(operations.filter((operation) => !Object.keys(operation.spec.responses ?? {}).some((code) => /^2\d\d$/.test(code))).map((o) => o.operationId)).toEqual([]);
  });
});
