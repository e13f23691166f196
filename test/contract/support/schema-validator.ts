import Ajv from 'ajv';
import ajvFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import type { Contract, Operation } from './contract.js';

type Schema = Record<string, unknown>;
type ValidateFn = ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string; params?: unknown }[] | null };

const componentsId = 'quarry-contract-components';

/**
 * OpenAPI 3.0 schema -> JSON Schema (draft 7) for Ajv: `nullable: true` becomes a type array (or an `anyOf` with
 * null where there is no `type`, e.g. next to `allOf`), and `#/components/schemas/X` points into one shared
 * definitions document, so recursive schemas work without dereferencing.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'nullable' || key === 'example' || key === 'discriminator' || key === 'xml' || key === 'externalDocs') continue;
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = value.replace('#/components/schemas/', `${componentsId}#/definitions/`);
    } else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(Object.entries(value as Schema).map(([name, sub]) => [name, toJsonSchema(sub)]));
    } else if (['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf'].includes(key)) {
      out[key] = toJsonSchema(value);
    } else {
      out[key] = value;
    }
  }
  if (source.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

/** Header values arrive as text: read them as the type their schema declares before validating. */
function coerceHeader(value: string, schema: Schema): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if ((type === 'integer' || type === 'number') && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

const baseMediaType = (contentType: string | null) => (contentType ?? '').split(';')[0].trim().toLowerCase();
const isJsonMediaType = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/**
 * An independent checker of responses against openapi.yaml (Ajv + ajv-formats over the contract's own schemas),
 * used on the Prism mock's answers and on the server's direct answers where Prism cannot see them.
 */
export class SchemaValidator {
  private readonly ajv;
  private readonly compiled = new Map<unknown, ValidateFn>();

  constructor(private readonly contract: Contract) {
    this.ajv = new Ajv.default({ strict: false, allErrors: true });
    // ajv-formats is CommonJS: its function is the module itself or its `default`, depending on the loader.
    ((ajvFormats as unknown as { default?: (ajv: unknown) => void }).default ?? (ajvFormats as unknown as (ajv: unknown) => void))(this.ajv);
    const schemas = Object.entries(contract.doc.components?.schemas ?? {});
    this.ajv.addSchema({ $id: componentsId, definitions: Object.fromEntries(schemas.map(([name, schema]) => [name, toJsonSchema(schema)])) });
  }

  /** Problems of `value` against an OpenAPI schema, in words; empty when valid. */
  validate(schema: OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject, value: unknown): string[] {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as Schema) as ValidateFn;
      this.compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params ?? {})}`);
  }

  /**
   * Problems of a response body: its status must be documented, its media type declared for that status, and the
   * body valid against that media type's schema. `body` is parsed JSON for JSON media types, text otherwise.
   */
  bodyProblems(operation: Operation, status: number, contentType: string | null, body: unknown): string[] {
    const found = this.contract.response(operation, status);
    if (!found) return [`${operation.operationId}: status ${status} is not declared`];
    const content = found.response.content;
    if (!content) return body === null || body === '' ? [] : [`${operation.operationId} ${found.key}: declares no body but one was sent`];
    const mediaType = baseMediaType(contentType);
    const media = content[mediaType];
    if (!media) return [`${operation.operationId} ${found.key}: media type "${mediaType}" is not one of ${Object.keys(content).join(', ')}`];
    if (!media.schema) return [];
    const value = isJsonMediaType(mediaType) && typeof body === 'string' ? safeJson(body) : body;
    return this.validate(media.schema, value).map((problem) => `${operation.operationId} ${found.key} body${problem}`);
  }

  /** Problems of the response headers: each required declared header present, each present one valid. */
  headerProblems(operation: Operation, status: number, headers: Headers): string[] {
    const found = this.contract.response(operation, status);
    if (!found) return [`${operation.operationId}: status ${status} is not declared`];
    const problems: string[] = [];
    for (const [name, declared] of Object.entries(found.response.headers ?? {})) {
      const header = this.contract.resolve(declared);
      const value = headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${operation.operationId} ${found.key}: required header ${name} is missing`);
        continue;
      }
      if (!header.schema) continue;
      const schema = this.contract.resolve(header.schema) as Schema;
      for (const problem of this.validate(header.schema, coerceHeader(value, schema))) {
        problems.push(`${operation.operationId} ${found.key}: header ${name}=${JSON.stringify(value)} ${problem}`);
      }
    }
    return problems;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
