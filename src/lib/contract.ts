import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';
import { findUp } from './find-up.js';

/** openapi.yaml, found from src/ (tsx, vitest) and from dist/src/ alike. */
export function contractPath(): string {
  return findUp('openapi.yaml');
}

let cached: OpenAPIV3.Document | null = null;

/** The contract, parsed once per process. Callers must not mutate it. */
export function loadContract(): OpenAPIV3.Document {
  cached ??= parse(readFileSync(contractPath(), 'utf8')) as OpenAPIV3.Document;
  return cached;
}

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The HTTP methods the contract's operations use, upper case (what CORS preflights may ask for). */
export function contractMethods(document: OpenAPIV3.Document = loadContract()): string[] {
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of httpMethods) if (item?.[method]) used.add(method.toUpperCase());
  }
  return [...used];
}
