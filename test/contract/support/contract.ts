import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { parse } from 'yaml';

/** The repository root and its contract, found from this file (the contract tests read openapi.yaml themselves). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const contractFile = fileURLToPath(new URL('../../../openapi.yaml', import.meta.url));

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Ref = OpenAPIV3.ReferenceObject;
const isRef = (value: unknown): value is Ref => typeof value === 'object' && value !== null && '$ref' in value;

/** One operation of openapi.yaml, with its path-level parameters merged in and its effective security. */
export interface Operation {
  operationId: string;
  /** Upper case, as sent on the wire. */
  method: string;
  /** The path template, e.g. `/api/v1/keys/{keyId}`. */
  path: string;
  spec: OpenAPIV3.OperationObject;
  parameters: OpenAPIV3.ParameterObject[];
  /** The security alternatives in effect (the operation's, else the document's). */
  security: OpenAPIV3.SecurityRequirementObject[];
  /** Every alternative needs a credential: a call without one must be 401. */
  secured: boolean;
  /** Scheme names the operation accepts. */
  schemes: string[];
}

/** A request the contract itself documents: path parameters and required query parameters from their examples, the first body example. */
export interface ExampleRequest {
  /** Path with its query string. */
  url: string;
  body?: unknown;
  /** The body's media type when it is not JSON (uploadSqliteFile's bytes); send `body` as it is then. */
  contentType?: string;
}

/** Read-only view of openapi.yaml for the contract tests: operations, `$ref` resolution, responses, examples. */
export class Contract {
  readonly operations: Operation[];
  private readonly matchers: { operation: Operation; pattern: RegExp; params: number }[];

  constructor(readonly doc: OpenAPIV3.Document = parse(readFileSync(contractFile, 'utf8')) as OpenAPIV3.Document) {
    this.operations = [];
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      if (!item) continue;
      for (const method of methods) {
        const spec = item[method];
        if (!spec) continue;
        const byKey = new Map<string, OpenAPIV3.ParameterObject>();
        for (const p of [...(item.parameters ?? []), ...(spec.parameters ?? [])]) {
          const parameter = this.resolve(p);
          byKey.set(`${parameter.in}:${parameter.name}`, parameter);
        }
        const security = spec.security ?? doc.security ?? [];
        this.operations.push({
          operationId: spec.operationId ?? `${method} ${path}`,
          method: method.toUpperCase(),
          path,
          spec,
          parameters: [...byKey.values()],
          security,
          secured: security.length > 0 && security.every((alternative) => Object.keys(alternative).length > 0),
          schemes: [...new Set(security.flatMap((alternative) => Object.keys(alternative)))],
        });
      }
    }
    this.matchers = this.operations
      .map((operation) => ({
        operation,
        params: (operation.path.match(/\{[^}]+\}/g) ?? []).length,
        pattern: new RegExp(`^${operation.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** Follows local `$ref`s (`#/components/...`) until a real object is reached. */
  resolve<T>(value: T | Ref): T {
    let current: unknown = value;
    for (let hops = 0; isRef(current); hops += 1) {
      if (hops > 20 || !current.$ref.startsWith('#/')) throw new Error(`cannot resolve ${current.$ref}`);
      current = current.$ref
        .slice(2)
        .split('/')
        .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], this.doc);
      if (current === undefined) throw new Error(`dangling $ref ${(value as Ref).$ref}`);
    }
    return current as T;
  }

  operation(operationId: string): Operation {
    const found = this.operations.find((operation) => operation.operationId === operationId);
    if (!found) throw new Error(`no operation ${operationId} in openapi.yaml`);
    return found;
  }

  /** The operation a concrete request goes to (literal paths win over templated ones). */
  match(method: string, url: string): Operation | undefined {
    const path = url.split('?')[0];
    return this.matchers.find((m) => m.operation.method === method.toUpperCase() && m.pattern.test(path))?.operation;
  }

  /** The response that documents a status: the exact code, else `4XX`-style ranges, else `default`. */
  response(operation: Operation, status: number): { key: string; response: OpenAPIV3.ResponseObject } | undefined {
    const responses = operation.spec.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((candidate) => candidate in responses);
    return key ? { key, response: this.resolve(responses[key]) } : undefined;
  }

  /** The lowest declared 2xx status (what a mock answers by default). */
  successStatus(operation: Operation): number {
    const codes = Object.keys(operation.spec.responses ?? {})
      .filter((code) => /^2\d\d$/.test(code))
      .map(Number)
      .sort((a, b) => a - b);
    if (codes.length === 0) throw new Error(`${operation.operationId} declares no 2xx response`);
    return codes[0];
  }

  /** The named examples of one media type of a response, resolved. */
  namedExamples(response: OpenAPIV3.ResponseObject, mediaType = 'application/json'): [string, unknown][] {
    const examples = response.content?.[mediaType]?.examples ?? {};
    return Object.entries(examples).map(([name, example]) => [name, this.resolve(example).value]);
  }

  /** A valid request as the contract documents it. Throws (a contract gap) when a required part has no example. */
  exampleRequest(operation: Operation): ExampleRequest {
    let path = operation.path;
    const query = new URLSearchParams();
    for (const parameter of operation.parameters) {
      if (parameter.in === 'path') {
        const value = this.parameterExample(parameter);
        if (value === undefined) throw new Error(`${operation.operationId}: path parameter ${parameter.name} has no example`);
        path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
      } else if (parameter.in === 'query' && parameter.required) {
        query.set(parameter.name, String(this.parameterExample(parameter) ?? this.minimalValue(parameter)));
      }
    }
    const search = query.toString();
    const url = search ? `${path}?${search}` : path;
    if (!operation.spec.requestBody) return { url };
    const requestBody = this.resolve(operation.spec.requestBody);
    // A body of another type (uploadSqliteFile's bytes) has its example too, with its media type.
    const [mediaType, media] = Object.entries(requestBody.content).find(([type]) => type === 'application/json') ?? Object.entries(requestBody.content)[0] ?? [];
    const first = Object.values(media?.examples ?? {})[0];
    const body = first !== undefined ? this.resolve(first).value : media?.example;
    if (body === undefined && requestBody.required) throw new Error(`${operation.operationId}: the required request body has no example`);
    if (body === undefined) return { url };
    return mediaType === 'application/json' ? { url, body } : { url, body, contentType: mediaType };
  }

  private parameterExample(parameter: OpenAPIV3.ParameterObject): unknown {
    if (parameter.example !== undefined) return parameter.example;
    const first = Object.values(parameter.examples ?? {})[0];
    if (first !== undefined) return this.resolve(first).value;
    const schema = parameter.schema ? this.resolve(parameter.schema) : undefined;
    return schema?.example;
  }

  /** Smallest value the parameter's schema accepts, for required parameters that have no example. */
  private minimalValue(parameter: OpenAPIV3.ParameterObject): unknown {
    const schema = parameter.schema ? this.resolve(parameter.schema) : {};
    if (schema.default !== undefined) return schema.default;
    if (schema.enum?.length) return schema.enum[0];
    if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
    if (schema.type === 'boolean') return true;
    return 'example'.padEnd(schema.minLength ?? 1, 'x').slice(0, schema.maxLength ?? 7);
  }
}
