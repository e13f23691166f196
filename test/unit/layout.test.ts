/**
 * The source layout shows the architecture (docs/architecture.md): services sit in one folder per openapi tag, and
 * only the composition root makes them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadContract } from '../../src/lib/contract.js';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

/** RateLimit -> rate-limit */
const kebab = (tag: string) => tag.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();

describe('the source layout', () => {
  it('when src/services is listed, then each folder is named after an openapi tag', () => {
    const tags = (loadContract().tags ?? []).map((tag) => kebab(tag.name));
    const folders = readdirSync(join(src, 'services'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) expect(tags, folder).toContain(folder);
  });

  it('when src/services is listed, then no file sits outside a tag folder but the caller types every service shares', () => {
    const loose = readdirSync(join(src, 'services'), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(loose).toEqual(['callers.ts']);
  });

  it('when the source is read, then only the composition root makes services', () => {
    // Quarry's own services, recorders and exporters: the classes src/services declares (a library's
    // `LogicalReplicationService` is not one of them).
    const declared = sourceFiles(join(src, 'services')).flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/\bexport class ([A-Z]\w*(?:Service|Recorder|Exporter))\b/g)].map((m) => m[1]!));
    expect(declared.length).toBeGreaterThan(5);
    const made = new RegExp(`\\bnew (${declared.join('|')})\\b`);
    const makers = sourceFiles(src).filter((file) => made.test(readFileSync(join(root, file), 'utf8')));
    expect(makers).toEqual(['src/composition.ts']);
  });
});
