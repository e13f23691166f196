import { OpenAPIBackend, type Context } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { ContractPipeline, type PipelineRequest } from '../../../src/api/pipeline.js';
import type { HandlerEnv } from '../../../src/api/types.js';

const definition = {
  openapi: '3.0.3',
  info: { title: 'pipeline', version: '1' },
  security: [{ key: [] }],
  components: { securitySchemes: { key: { type: 'http', scheme: 'bearer' }, token: { type: 'http', scheme: 'bearer' } } },
  paths: {
    '/open': { get: { operationId: 'open', security: [], responses: { 200: { description: 'ok' } } } },
    '/items': {
      get: {
        operationId: 'listItems',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10 } },
          { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
        ],
        responses: { 200: { description: 'ok' } },
      },
      post: {
        operationId: 'createItem',
        security: [{ key: [] }, { token: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' } } } } } },
        responses: { 201: { description: 'ok' } },
      },
    },
    '/items/{itemId}': {
      get: { operationId: 'getItem', parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]+$' } }], responses: { 200: { description: 'ok' } } },
    },
    '/items/special': { get: { operationId: 'getSpecial', responses: { 200: { description: 'ok' } } } },
    '/unbuilt': { get: { operationId: 'unbuilt', security: [], responses: { 200: { description: 'ok' } } } },
  },
};

/** Every handler answers with what it was given, so the two lifecycles can be compared outcome for outcome. */
const echo = (name: string) => async (c: Context) => ({
  handler: name,
  operationId: c.operation?.operationId ?? null,
  query: c.request?.query ?? null,
  params: c.request?.params ?? null,
  body: (c.request as { requestBody?: unknown } | undefined)?.requestBody ?? null,
  authorized: c.security?.authorized ?? null,
  errors: (c.validation?.errors as Array<{ instancePath: string; keyword: string }> | null | undefined)?.map((e) => `${e.instancePath} ${e.keyword}`) ?? null,
});

async function backend(securityHandlers: Record<string, (c: Context) => unknown>, extra: Record<string, unknown> = {}, contract = definition): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({ definition: structuredClone(contract) as never, strict: false, validate: true, coerceTypes: true, ajvOpts: { allErrors: true, strict: false } });
  api.register({
    open: echo('open'), listItems: echo('listItems'), createItem: echo('createItem'), getItem: echo('getItem'), getSpecial: echo('getSpecial'),
    notFound: echo('notFound'), methodNotAllowed: echo('methodNotAllowed'), unauthorizedHandler: echo('unauthorizedHandler'),
    validationFail: echo('validationFail'), notImplemented: echo('notImplemented'),
    ...extra,
  } as never);
  for (const [name, handler] of Object.entries(securityHandlers)) api.registerSecurityHandler(name, handler);
  await api.init();
  return api;
}

const env = {} as HandlerEnv;
const bearer = (c: Context) => String(c.request.headers.authorization ?? '');
const securityHandlers = {
  key: (c: Context) => (bearer(c) === 'Bearer key' ? { who: 'key' } : bearer(c) === 'Bearer bad-key' ? Promise.reject(new Error('revoked')) : null),
  token: (c: Context) => (bearer(c) === 'Bearer token' ? { who: 'token' } : { error: 'no token' }),
};

const requests: Array<[string, PipelineRequest]> = [
  ['public route', { method: 'GET', path: '/open', query: '', headers: {} }],
  ['query coerced to its types', { method: 'GET', path: '/items', query: 'limit=3&tag=a', headers: { authorization: 'Bearer key' } }],
  ['repeated array parameter', { method: 'GET', path: '/items', query: 'tag=a&tag=b', headers: { authorization: 'Bearer key' } }],
  ['query out of bounds', { method: 'GET', path: '/items', query: 'limit=99', headers: { authorization: 'Bearer key' } }],
  ['unknown query parameter', { method: 'GET', path: '/items', query: 'colour=red', headers: { authorization: 'Bearer key' } }],
  ['no credential', { method: 'GET', path: '/items', query: '', headers: {} }],
  ['a security handler that throws', { method: 'GET', path: '/items', query: '', headers: { authorization: 'Bearer bad-key' } }],
  ['the second of two requirements', { method: 'POST', path: '/items', query: '', headers: { authorization: 'Bearer token' }, body: { name: 'x' } }],
  ['a body that breaks the schema', { method: 'POST', path: '/items', query: '', headers: { authorization: 'Bearer key' }, body: { name: 1, extra: true } }],
  ['a missing required body', { method: 'POST', path: '/items', query: '', headers: { authorization: 'Bearer key', 'content-type': 'application/json' } }],
  ['a path parameter', { method: 'GET', path: '/items/abc', query: '', headers: { authorization: 'Bearer key' } }],
  ['a path parameter breaking its pattern', { method: 'GET', path: '/items/ABC', query: '', headers: { authorization: 'Bearer key' } }],
  ['a literal path beside a template', { method: 'GET', path: '/items/special', query: '', headers: { authorization: 'Bearer key' } }],
  ['a trailing slash', { method: 'GET', path: '/items/', query: '', headers: { authorization: 'Bearer key' } }],
  ['an unknown path', { method: 'GET', path: '/nowhere', query: '', headers: {} }],
  ['a method the path does not have', { method: 'DELETE', path: '/items', query: '', headers: {} }],
  ['an operation without a handler', { method: 'GET', path: '/unbuilt', query: '', headers: {} }],
];

describe('ContractPipeline', () => {
  it.each(requests)('when given %s, then it ends as openapi-backend handleRequest does', async (_name, request) => {
    const api = await backend(securityHandlers);
    const pipeline = new ContractPipeline(api);
    const expected = await api.handleRequest({ ...request, headers: request.headers as Record<string, string> }, env);
    // Twice: the second answer comes through the remembered route and must not differ.
    expect(await pipeline.handle(structuredClone(request), env)).toEqual(expected);
    expect(await pipeline.handle(structuredClone(request), env)).toEqual(expected);
  });

  it('when a query uses bracket syntax the contract never declares, then it fails validation as an unknown parameter', async () => {
    const pipeline = new ContractPipeline(await backend(securityHandlers));
    const result = await pipeline.handle({ method: 'GET', path: '/items', query: 'limit[x]=1&tag[]=a', headers: { authorization: 'Bearer key' } }, env);
    expect(result).toMatchObject({ handler: 'validationFail', errors: ['/query additionalProperties', '/query additionalProperties'] });
  });

  it('when a query parameter is named __proto__, then it is an unknown parameter, and no prototype changes', async () => {
    const pipeline = new ContractPipeline(await backend(securityHandlers));
    const result = await pipeline.handle({ method: 'GET', path: '/items', query: '__proto__=x&limit=2', headers: { authorization: 'Bearer key' } }, env);
    expect(result).toMatchObject({ handler: 'validationFail', errors: ['/query additionalProperties'] });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('when a handler coerces path parameters, then the remembered route keeps the originals', async () => {
    const api = await backend(securityHandlers, { getItem: async (c: Context) => ((c.request.params as Record<string, string>).itemId = 'changed') });
    const pipeline = new ContractPipeline(api);
    await pipeline.handle({ method: 'GET', path: '/items/abc', query: '', headers: { authorization: 'Bearer key' } }, env);
    const seen: unknown[] = [];
    api.register('getItem', async (c: Context) => seen.push(c.request.params));
    await new ContractPipeline(api).handle({ method: 'GET', path: '/items/abc', query: '', headers: { authorization: 'Bearer key' } }, env);
    expect(seen).toEqual([{ itemId: 'abc' }]);
  });

  it('when the contract has a parameter location it does not handle, then it refuses to start', async () => {
    const contract = structuredClone(definition);
    (contract.paths['/items'].get.parameters as unknown[]).push({ name: 'X-Trace', in: 'header', schema: { type: 'string' } });
    const api = await backend(securityHandlers, {}, contract);
    expect(() => new ContractPipeline(api)).toThrow(/X-Trace.*in header/);
  });

  it('when a lifecycle handler is missing, then it refuses to start', async () => {
    const api = await backend(securityHandlers);
    delete api.handlers.validationFail;
    expect(() => new ContractPipeline(api)).toThrow(/validationFail/);
  });
});
