import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The first `relative` path found from this file's folder upwards: the repository's own files (openapi.yaml, the
 * playground's assets) are found from src/ (tsx, vitest) and from dist/src/ (npm start) alike.
 */
export function findUp(relative: string): string {
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`${relative} not found above ${here}`);
  }
}
