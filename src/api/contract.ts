import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';

/** Finds openapi.yaml from here upwards, so it is found from src/ (tsx, vitest) and from dist/src/ alike. */
export function contractPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'openapi.yaml');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('openapi.yaml not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
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
