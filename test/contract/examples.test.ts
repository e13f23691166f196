/**
 * The examples of openapi.yaml are what the Prism mock answers (`npm run mock`), so they must say what the server
 * says. Every named example of every operation (request bodies, parameters, response bodies and headers)
 * validates against its schema; every error example has its code's status, a code its operation can answer, and
 * names only fields its operation has; rate-limit header examples carry the server's limit and tier; and the search
 * has a selectable example per search mode. Operations are read from openapi.yaml, so a new one is covered as is.
 */
import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { statusOfCode } from '../../src/http/error-status.js';
import { Contract, type Operation } from './support/contract.js';
import { SchemaValidator } from './support/schema-validator.js';

const contract = new Contract();
const validator = new SchemaValidator(contract);

type Ref = OpenAPIV3.ReferenceObject;
type Schema = OpenAPIV3.SchemaObject;

interface NamedExample {
  operation: Operation;
  /** Where it is: `request body`, `query limit`, `409 application/json`, `200 header X-RateLimit-Tier`. */
  place: string;
  name: string;
  value: unknown;
  schema: Schema | Ref | undefined;
}

/** Named examples of a media type or parameter (`examples`), and its single `example` as one named `example`. */
function examplesOf(holder: { example?: unknown; examples?: Record<string, OpenAPIV3.ExampleObject | Ref> }): [string, unknown][] {
  const named = Object.entries(holder.examples ?? {}).map(([name, example]) => [name, contract.resolve(example).value] as [string, unknown]);
  return holder.example !== undefined ? [...named, ['example', holder.example]] : named;
}

function requestExamples(operation: Operation): NamedExample[] {
  const found: NamedExample[] = [];
  for (const parameter of operation.parameters) {
    for (const [name, value] of examplesOf(parameter)) found.push({ operation, place: `${parameter.in} ${parameter.name}`, name, value, schema: parameter.schema });
  }
  const body = operation.spec.requestBody ? contract.resolve(operation.spec.requestBody) : undefined;
  for (const [mediaType, media] of Object.entries(body?.content ?? {})) {
    for (const [name, value] of examplesOf(media)) found.push({ operation, place: `request body ${mediaType}`, name, value, schema: media.schema });
  }
  return found;
}

function responseExamples(operation: Operation): (NamedExample & { status: string })[] {
  const found: (NamedExample & { status: string })[] = [];
  for (const [status, ref] of Object.entries(operation.spec.responses ?? {})) {
    const response = contract.resolve(ref);
    for (const [mediaType, media] of Object.entries(response.content ?? {})) {
      for (const [name, value] of examplesOf(media)) found.push({ operation, status, place: `${status} ${mediaType}`, name, value, schema: media.schema });
    }
    for (const [header, headerRef] of Object.entries(response.headers ?? {})) {
      const declared = contract.resolve(headerRef);
      for (const [name, value] of examplesOf(declared)) found.push({ operation, status, place: `${status} header ${header}`, name, value, schema: declared.schema });
    }
  }
  return found;
}

const requests = contract.operations.flatMap(requestExamples);
const responses = contract.operations.flatMap(responseExamples);
const errorBodies = responses.filter((e) => (e.status === 'default' || Number(e.status) >= 400) && e.place.endsWith('application/json'));
const validationErrors = errorBodies.filter((e) => (e.value as ErrorBody).error.code === 'VALIDATION_ERROR');

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

const ext = (operation: Operation, name: string) => (operation.spec as unknown as Record<string, unknown>)[name];

/**
 * The codes an operation answers by what it is (a body, parameters, its credentials, its permission, admin-only, a
 * rate limit, an id in the path): what the server's shared layers raise for it. Any other code must be named in the
 * operation's own description, where its behaviour is documented.
 */
function codesOf(operation: Operation): Set<string> {
  // Every operation may find Quarry's store down (the one error translator answers STORE_UNAVAILABLE for any), and
  // every URL is checked to decode before routing (MALFORMED_URL).
  const codes = new Set(['INTERNAL_ERROR', 'NOT_IMPLEMENTED', 'METHOD_NOT_ALLOWED', 'STORE_UNAVAILABLE', 'MALFORMED_URL']);
  const add = (...more: string[]) => more.forEach((code) => codes.add(code));
  if (operation.spec.requestBody || operation.parameters.length > 0) add('VALIDATION_ERROR');
  if (operation.spec.requestBody) add('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (operation.schemes.includes('bearerJwt')) add('AUTH_REQUIRED', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'SESSION_ENDED', 'ACCOUNT_DISABLED');
  if (operation.schemes.includes('apiKey')) {
    add('AUTH_REQUIRED', 'INVALID_API_KEY', 'MALFORMED_API_KEY', 'KEY_REVOKED', 'KEY_EXPIRED', 'ACCOUNT_DISABLED', 'SECRET_KEY_IN_BROWSER',
      'INSUFFICIENT_PERMISSIONS', 'RATE_LIMIT_EXCEEDED', 'CONCURRENCY_LIMIT_EXCEEDED');
  }
  if (ext(operation, 'x-quarry-publishable') === true) add('ORIGIN_NOT_ALLOWED');
  if (ext(operation, 'x-quarry-admin') === true) add('ADMIN_REQUIRED');
  if (typeof ext(operation, 'x-quarry-rate-limit') === 'object') add('RATE_LIMIT_EXCEEDED');
  if (operation.parameters.some((p) => p.in === 'path')) add('NOT_FOUND');
  for (const [, code] of (operation.spec.description ?? '').matchAll(/`([A-Z][A-Z_]+)`/g)) add(code);
  return codes;
}

/** Whether a JSON pointer (`/tables/0`) names a field of a request body schema. */
function hasField(schema: Schema | Ref | undefined, segments: string[]): boolean {
  if (!schema) return false;
  const resolved = contract.resolve(schema) as Schema;
  if (segments.length === 0) return true;
  const branches = [...(resolved.allOf ?? []), ...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])];
  if (branches.some((branch) => hasField(branch, segments))) return true;
  const [first, ...rest] = segments;
  if (resolved.type === 'array' && /^\d+$/.test(first)) return hasField((resolved as OpenAPIV3.ArraySchemaObject).items, rest);
  const property = resolved.properties?.[first];
  return property !== undefined && hasField(property, rest);
}

/** Problems of one VALIDATION_ERROR example: each failing field must exist where it says, and the message name the first. */
function fieldProblems(e: NamedExample): string[] {
  const { message, details } = (e.value as ErrorBody).error;
  const errors = (details.errors ?? []) as { location: string; path: string; message: string }[];
  if (errors.length === 0) return ['details.errors is empty'];
  const body = e.operation.spec.requestBody ? contract.resolve(e.operation.spec.requestBody).content['application/json']?.schema : undefined;
  const problems = errors.flatMap(({ location, path }) => {
    const segments = path.split('/').slice(1);
    const exists = location === 'body'
      ? hasField(body, segments)
      : (location === 'query' || location === 'path') && e.operation.parameters.some((p) => p.in === location && p.name === segments[0]);
    return exists ? [] : [`names ${location}${path}, which ${e.operation.operationId} does not have`];
  });
  const first = errors[0]!;
  if (!message.startsWith(`The request is invalid: ${first.location}${first.path === '/' ? '' : first.path} `)) {
    problems.push(`message "${message}" does not name ${first.location}${first.path}`);
  }
  return problems;
}

const label = (e: NamedExample) => `${e.operation.operationId} ${e.place} "${e.name}"`;

describe(`the examples of openapi.yaml (${contract.operations.length} operations)`, () => {
  it(`when each of the ${requests.length} request and parameter examples is checked, then it is valid against its schema`, () => {
    console.info(`examples: ${requests.length} request and parameter examples, ${responses.length} response examples (${errorBodies.length} error bodies, ${validationErrors.length} of them VALIDATION_ERROR)`);
    const problems = requests.flatMap((e) => (e.schema ? validator.validate(e.schema, e.value).map((p) => `${label(e)}: ${p}`) : [`${label(e)}: no schema`]));
    expect(problems).toEqual([]);
    expect(requests.length).toBeGreaterThan(contract.operations.length / 2);
  });

  it(`when each of the ${responses.length} response body and header examples is checked, then it is valid against its schema`, () => {
    const problems = responses.flatMap((e) => (e.schema ? validator.validate(e.schema, e.value).map((p) => `${label(e)}: ${p}`) : []));
    expect(problems).toEqual([]);
  });

  it(`when each of the ${errorBodies.length} error examples is read, then its code is one its operation answers, with that code's status`, () => {
    const problems = errorBodies.flatMap((e) => {
      const { code } = (e.value as ErrorBody).error;
      const status = statusOfCode[code as keyof typeof statusOfCode];
      const declared = Object.keys(e.operation.spec.responses ?? {});
      const wrongStatus = e.status === 'default' ? declared.includes(String(status)) : status !== Number(e.status) && !(e.status === '422' && status === 502);
      return [
        ...(wrongStatus ? [`${label(e)}: ${code} is answered with ${status}`] : []),
        ...(codesOf(e.operation).has(code) ? [] : [`${label(e)}: ${e.operation.operationId} never answers ${code} (not implied by what it is, not in its description)`]),
      ];
    });
    expect(problems).toEqual([]);
  });

  it(`when each of the ${validationErrors.length} VALIDATION_ERROR examples is read, then every field it names is a field of its operation`, () => {
    expect(validationErrors.flatMap((e) => fieldProblems(e).map((p) => `${label(e)}: ${p}`))).toEqual([]);
  });

  it('when an operation is limited per client IP or per user, then its rate-limit header and 429 examples carry its own limit and the tier the server reports', () => {
    const problems: string[] = [];
    for (const operation of contract.operations) {
      const declared = ext(operation, 'x-quarry-rate-limit') as { scope: 'ip' | 'user'; limit: number } | 'exempt' | undefined;
      if (typeof declared !== 'object') continue;
      const examples = responses.filter((e) => e.operation === operation);
      const header = (name: string) => examples.filter((e) => e.place.endsWith(`header ${name}`));
      for (const e of header('X-RateLimit-Limit')) if (e.value !== declared.limit) problems.push(`${label(e)}: ${String(e.value)}, not ${declared.limit}`);
      if (declared.scope === 'ip') {
        for (const e of header('X-RateLimit-Tier')) if (e.value !== 'anonymous') problems.push(`${label(e)}: ${String(e.value)}, not anonymous`);
      }
      for (const e of examples.filter((x) => x.status === '429' && x.place.endsWith('application/json'))) {
        const { details } = (e.value as ErrorBody).error;
        if (details.limit !== declared.limit) problems.push(`${label(e)}: details.limit ${String(details.limit)}, not ${declared.limit}`);
        if (declared.scope === 'ip' && details.tier !== 'anonymous') problems.push(`${label(e)}: details.tier ${String(details.tier)}, not anonymous`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('when an error example tells the user what to call, then it names a method and path the contract has and does not deprecate, never an operationId', () => {
    const ids = contract.operations.map((o) => o.operationId);
    const strings = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : typeof value === 'object' && value !== null ? Object.values(value).flatMap(strings) : [];
    const problems = errorBodies.flatMap((e) =>
      strings((e.value as ErrorBody).error).flatMap((text) => [
        ...[...text.matchAll(/\b(GET|PUT|POST|PATCH|DELETE) (\/[^\s,;)]+)/g)].flatMap(([, method, path]) => {
          const called = contract.operations.find((o) => o.method === method && new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path!.replace(/\.$/, '')));
          if (!called) return [`${label(e)}: names ${method} ${path}, which the contract does not have`];
          return called.spec.deprecated ? [`${label(e)}: names ${method} ${path} (${called.operationId}), which is deprecated`] : [];
        }),
        ...ids.filter((id) => new RegExp(`\\b${id}\\b`).test(text)).map((id) => `${label(e)}: names the operationId ${id} where a user needs its method and path`),
      ]),
    );
    expect(problems).toEqual([]);
  });

  it('when the search is mocked, then each search mode has its own selectable example, ranked, with scores of that mode and highlighted snippets', () => {
    const results = responses.filter((e) => e.operation.operationId === 'searchDatabases' && e.place === '200 application/json');
    // One example per mode, and a natural answer whose query was relaxed.
    expect(results.map((e) => e.name).sort()).toEqual(['boolean', 'hybrid', 'natural', 'relaxed', 'semantic']);
    for (const e of results) {
      const data = (e.value as { data: { searchMode: string; offset: number; relaxed: unknown[]; results: { rank: number; score: number; snippet: string }[] } }).data;
      const mode = e.name === 'relaxed' ? 'natural' : e.name;
      expect(data.searchMode, e.name).toBe(mode);
      expect(data.relaxed.length > 0, e.name).toBe(e.name === 'relaxed');
      expect(data.results.map((r) => r.rank), e.name).toEqual(data.results.map((_, i) => data.offset + i + 1));
      const scores = data.results.map((r) => r.score);
      expect(scores, e.name).toEqual([...scores].sort((a, b) => b - a));
      // Natural from the index: BM25 scores. Boolean, answered live by one table: 1 / (60 + its rank there).
      // Semantic: the cosine similarity, kept from 0.2. Hybrid: the fused score, 0 to 1.
      for (const score of scores) {
        if (mode === 'semantic') expect(score, e.name).toSatisfy((x: number) => x >= 0.2 && x <= 1);
        else if (mode === 'hybrid') expect(score, e.name).toSatisfy((x: number) => x > 0 && x <= 1);
        else if (mode === 'natural') expect(score, e.name).toBeGreaterThan(0);
        else expect(Math.abs(1 / score - 60 - Math.round(1 / score - 60)), `${e.name} ${score} is 1 / (60 + rank)`).toBeLessThan(1e-3);
      }
      if (e.name !== 'semantic') expect(data.results.every((r) => r.snippet.includes('<mark>')), e.name).toBe(true);
    }
  });
});
