import { beforeAll, describe, expect, it } from 'vitest';
import { OpenAPIBackend, OpenAPIRouter, type Operation, type Request } from 'openapi-backend';
import { backendOptions } from '../../../src/api/backend.js';
import { RouteTable, useRouteTable } from '../../../src/api/route-table.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Values a path parameter takes in the requests below: an id, a file name with a dot, odd but legal characters. */
const VALUES = ['db_1a2b3c', 'bench.db', 'report.json', '42', 'A-b_c~', '%20x', 'b', 'publishable'];

type Definition = OpenAPIBackend['definition'];
let contract: Definition;

beforeAll(async () => {
  // The library's own initialisation (dereferenced contract), as Quarry's backend is made.
  const api = new OpenAPIBackend(backendOptions(false));
  await api.init();
  contract = api.definition;
});

/**
 * Templates that overlap, which openapi.yaml has too few of to show the order of a match: two templates taking the
 * same request, the more literal one first whatever the order written (as written when equally literal); a literal
 * path beside a template.
 */
const operation = (operationId: string) => ({ operationId, responses: { 200: { description: 'ok' } } });
const overlapping = {
  openapi: '3.0.3',
  info: { title: 'overlapping templates', version: '1' },
  paths: {
    '/a/{x}/{y}': { get: operation('getAXY'), put: operation('putAXY') },
    '/a/{x}/b': { get: operation('getAXB') },
    '/a/b/{y}': { get: operation('getABY'), delete: operation('deleteABY') },
    '/files/{name}': { get: operation('getFile') },
    '/files/{name}.json': { get: operation('getFileJson') },
    '/k/{id}': { get: operation('getK'), delete: operation('deleteK') },
    '/k/publishable': { get: operation('getPublishable') },
    // A brace in the literal text: `/t/{a}` asked literally is that path, though `/t/{b}}` matches it more literally.
    '/t/{a}': { get: operation('getTA') },
    '/t/{b}}': { get: operation('getTB') },
  },
} as unknown as Definition;

/** Concrete paths for a template: every parameter given each sample value. */
function concretePaths(template: string): string[] {
  return VALUES.map((value) => template.replace(/\{[^}]+\}/g, value));
}

/** What a router answers for a request, in comparable terms: the operation and its path parameters, or the error. */
function outcome(router: OpenAPIRouter<Definition>, req: Request) {
  const loose = router.matchOperation(req);
  let strict: string;
  try {
    strict = router.matchOperation(req, true).operationId ?? 'no operationId';
  } catch (error) {
    strict = (error as Error).message;
  }
  const describe = (operation: Operation | undefined) =>
    operation && { operationId: operation.operationId, path: operation.path, method: operation.method, params: router.parseRequest(req, operation).params };
  return { loose: describe(loose), strict };
}

/** Requests that name an operation of the contract, in the shapes a client may send them. */
function matchingRequests(definition: Definition, root: string, trailingSlashesIgnored: boolean): Request[] {
  const requests: Request[] = [];
  for (const [template, item] of Object.entries(definition.paths ?? {})) {
    for (const method of METHODS.filter((m) => item && m in item)) {
      for (const path of concretePaths(`${root}${template}`)) {
        requests.push({ method, path, headers: {} });
        requests.push({ method: method.toUpperCase(), path: `${path}?limit=1&q=a/b`, headers: {} });
        requests.push({ method, path: `${path}/`, headers: {} });
        if (trailingSlashesIgnored) requests.push({ method, path: `${path}//`, headers: {} });
      }
      requests.push({ method, path: `${root}${template}`, headers: {} });
    }
  }
  return requests;
}

/** Requests that name no operation: a method the path lacks, unknown paths, prefixes, extra segments, other cases. */
function missingRequests(definition: Definition, root: string): Request[] {
  const requests: Request[] = [];
  for (const [template, item] of Object.entries(definition.paths ?? {})) {
    const path = concretePaths(`${root}${template}`)[0]!;
    for (const method of METHODS.filter((m) => !(item && m in item))) requests.push({ method, path, headers: {} });
    requests.push({ method: 'get', path: path.slice(0, path.lastIndexOf('/')) || '/', headers: {} });
    requests.push({ method: 'get', path: path.slice(0, -1), headers: {} });
    requests.push({ method: 'get', path: `${path}/extra`, headers: {} });
    requests.push({ method: 'get', path: `${path}x`, headers: {} });
    requests.push({ method: 'get', path: path.toUpperCase(), headers: {} });
    requests.push({ method: 'get', path: path.replace(/\/[^/]+$/, '//'), headers: {} });
    // Outside the API root, a path of the contract is not one of its operations.
    if (root) requests.push({ method: 'get', path: concretePaths(template)[0]!, headers: {} });
  }
  for (const path of ['/', '', '/nope', `${root}/api`, `${root}/api/v2/search`, `${root}/api/v1/keys//usage`, '/apiv1/search', `${root}//health`]) {
    for (const method of METHODS) requests.push({ method, path, headers: {} });
  }
  return requests;
}

function expectSameRouting(library: OpenAPIRouter<Definition>, table: RouteTable, requests: Request[]) {
  for (const req of requests) expect(outcome(table, req), `${req.method} ${req.path}`).toEqual(outcome(library, req));
}

describe.each([
  { name: "openapi.yaml with Quarry's options (root /, trailing slashes ignored)", overlaps: false, apiRoot: '/', ignoreTrailingSlashes: true, many: 50 },
  { name: 'openapi.yaml under an API root of /api, trailing slashes significant', overlaps: false, apiRoot: '/api', ignoreTrailingSlashes: false, many: 50 },
  { name: 'overlapping templates', overlaps: true, apiRoot: '/', ignoreTrailingSlashes: true, many: 5 },
])('RouteTable on $name', ({ overlaps, apiRoot, ignoreTrailingSlashes, many }) => {
  const root = apiRoot === '/' ? '' : apiRoot;
  let definition: Definition;
  let library: OpenAPIRouter<Definition>;
  let table: RouteTable;
  beforeAll(() => {
    definition = overlaps ? overlapping : contract;
    library = new OpenAPIRouter({ definition, apiRoot, ignoreTrailingSlashes });
    table = new RouteTable({ definition, apiRoot, ignoreTrailingSlashes });
  });

  it('when a request names an operation of the contract, then it routes to the operation and parameters the library would', () => {
    const requests = matchingRequests(definition, root, ignoreTrailingSlashes);
    expectSameRouting(library, table, requests);
    // Every operation was reached, so none of them is left out of the comparison.
    const reached = new Set(requests.map((req) => table.matchOperation(req)?.operationId));
    expect([...reached].filter(Boolean).sort()).toEqual(library.getOperations().map((operation) => operation.operationId).sort());
  });

  it('when a request names no operation, then it is the same 404 or 405 as the library says', () => {
    const requests = missingRequests(definition, root);
    expectSameRouting(library, table, requests);
    const strict = requests.map((req) => outcome(table, req).strict);
    expect(strict.filter((answer) => answer.startsWith('404')).length).toBeGreaterThan(many);
    expect(strict.filter((answer) => answer.startsWith('405')).length).toBeGreaterThan(many);
  });

  it('when a request is parsed twice against its operation, then the second parse is the first, equal to the library\'s; another request object is parsed anew', () => {
    const requests = matchingRequests(definition, root, ignoreTrailingSlashes).map((req) => ({ ...req, query: 'limit=5&tags=a', headers: { 'X-Trace': 't', cookie: 'a=1' } }));
    let parsed = 0;
    for (const req of requests) {
      const operation = table.matchOperation(req);
      if (!operation) continue;
      parsed += 1;
      const first = table.parseRequest(req, operation);
      expect(table.parseRequest(req, operation)).toBe(first);
      expect(first).toEqual(library.parseRequest(req, operation));
      const copy = { ...req };
      expect(table.parseRequest(copy, operation)).not.toBe(first);
      expect(table.parseRequest(copy, operation)).toEqual(first);
      expect(table.parseRequest(req)).toEqual(library.parseRequest(req));
    }
    expect(parsed).toBeGreaterThan(many);
  });

  it('when the operations are listed or looked up by operationId, then they are the library\'s', () => {
    expect(table.getOperations()).toEqual(library.getOperations());
    for (const operation of library.getOperations()) expect(table.getOperation(operation.operationId!)).toEqual(operation);
    expect(table.getOperation('listUnicorns')).toBeUndefined();
  });
});

describe('useRouteTable', () => {
  it('when a backend is initialised, then it and its validator route through one RouteTable on its definition', async () => {
    const api = new OpenAPIBackend(backendOptions(false));
    await api.init();
    const router = useRouteTable(api);
    expect(api.router).toBe(router);
    expect(api.validator.router).toBe(router);
    expect(router.definition).toBe(api.definition);
    expect(api.matchOperation({ method: 'GET', path: '/api/v1/auth/profile', headers: {} })?.operationId).toBe('getProfile');
  });
});
