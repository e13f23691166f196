/**
 * The search index's engine on this machine: on a 2-core machine LanceDB's text index build over 20,000
 * rows or more, and optimize() after an upsert, hang for good with its default thread count; Quarry sets
 * LANCE_CPU_THREADS (src/search-index/lance.ts). This builds and updates an index of 50,000 rows through Quarry's
 * own store code, within a bounded time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IndexStore, type IndexRow } from '../../src/search-index/index-store.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-index-50k-'));
const store = new IndexStore({ uri: dir, readConsistencySeconds: 0 });
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const WORDS = ['harbor', 'engine', 'forest', 'market', 'copper', 'signal', 'meadow', 'valley', 'bridge', 'lantern'];
const row = (i: number, extra = ''): IndexRow => ({
  rid: `r${i}`, src: 'itb_fifty', pk: `{"id":${i}}`, hash: `h${i}${extra}`, thash: `t${i}${extra}`,
  text: `row ${i} ${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} ${WORDS[(i * 3) % 10]} ${extra}`, head: '', fields: `{"id":${i}}`,
});

describe('the text index of 50,000 rows', () => {
  it('when 50,000 rows are indexed and 1,000 changed, then both folds finish and every row is searchable', async () => {
    expect(Number(process.env.LANCE_CPU_THREADS ?? 3)).toBeGreaterThanOrEqual(3);
    const space = await store.ensureSpace('space_fifty_test');
    for (let start = 0; start < 50_000; start += 5000) await space.append(Array.from({ length: 5000 }, (_, i) => row(start + i)));
    await space.optimize();
    expect(process.env.LANCE_CPU_THREADS).toBe('3');
    expect(await space.countRows('itb_fifty')).toBe(50_000);
    const harbor = await space.searchText({ words: 'harbor' }, { srcs: ['itb_fifty'] }, 20_000);
    expect(harbor).toHaveLength(5000); // every tenth row

    await space.upsert(Array.from({ length: 1000 }, (_, i) => row(i * 50, 'zeppelin')));
    await space.optimize();
    expect(await space.searchText({ words: 'zeppelin' }, { srcs: ['itb_fifty'] }, 5000)).toHaveLength(1000);
    expect(await space.countRows()).toBe(50_000);
  }, 240_000);
});
