/**
 * searchDatabases relaxes a natural query whose strict parts leave nothing: phrases become their words,
 * then required words become optional, then exclusions go, and the answer says what was relaxed. On the index path
 * and on the live path (`live: true`) alike.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IndexSpace } from '../../src/search-index/index-store.js';
import { indexedSqliteFixture, resultIds, type SearchFixture } from '../support/search-fixture.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
let fixture: SearchFixture;

const search = (body: Record<string, unknown>) => fixture.search(body);
const ids = resultIds;

beforeAll(async () => {
  t = await startTestServer();
  fixture = await indexedSqliteFixture(t, 'tools.db', 'Tools', [
    'CREATE TABLE tools (id INTEGER PRIMARY KEY, name TEXT NOT NULL, body TEXT)',
    `INSERT INTO tools VALUES
       (1, 'Vim', 'Modal editors for programmers, vim at heart'),
       (2, 'Emacs', 'Extensible editors, with a vim mode called evil'),
       (3, 'Word processors', 'Document editors that show the page as it will print, vim keys optional'),
       (4, 'Preview panes', 'Let you see the result while typing markdown'),
       (5, 'Garden hose', 'Thirty metres of flexible hose')`,
  ]);
}, 60_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
});

describe.each([
  ['the index', {}],
  ['the live path', { live: true }],
] as const)('searchDatabases relaxing a natural query, answered by %s', (_, path) => {
  it('when the strict reading finds rows, then nothing is relaxed', async () => {
    const res = await search({ query: 'editors "word processors"', ...path });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([3]);
    expect(res.body.data.relaxed).toEqual([]);
  });

  it('when no row holds a quoted phrase, then its words become optional, the other words answer, and the answer says so', async () => {
    const res = await search({ query: 'papers on document editors, including "see the print preview" editors', ...path });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort()).toEqual([1, 2, 3, 4]);
    expect(res.body.data.relaxed).toEqual([
      { kind: 'phrase', text: 'see the print preview' },
      { kind: 'required', text: 'see the print preview' },
    ]);
  });

  it('when every row with the words holds an excluded word, then the exclusion is dropped last and the answer says so', async () => {
    const res = await search({ query: 'editors -vim', ...path });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res).sort()).toEqual([1, 2, 3]);
    expect(res.body.data.relaxed).toEqual([{ kind: 'exclusion', text: 'vim' }]);
  });

  it('when a hyphenated word is not in any row as written, then it is a word, never an exclusion, and its parts answer', async () => {
    const res = await search({ query: 'what-you-see', ...path });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res)).toEqual([4]);
    // The index keeps no word positions: joined words are strict only where an engine reads them as a phrase.
    expect(res.body.data.relaxed).toEqual('live' in path ? [{ kind: 'phrase', text: 'what you see' }] : []);
  });
});

describe('the cost of relaxing', () => {
  it('when the strict reading finds rows, then the index is asked once; otherwise once more per step until one answers', async () => {
    // The ranking query of each reading (typo lookups ask without headings).
    const rankings = vi.spyOn(IndexSpace.prototype, 'searchText');
    const asked = async (query: string) => {
      rankings.mockClear();
      const res = await search({ query, typoTolerance: false });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return rankings.mock.calls.filter(([text]) => text.headings === true).map(([text]) => ({ words: text.words, require: text.require ?? [], exclude: text.exclude ?? [] }));
    };
    try {
      expect(await asked('editors "word processors"')).toHaveLength(1);
      expect(await asked('editors -vim')).toEqual([
        { words: 'editors', require: [], exclude: ['vim'] },
        { words: 'editors', require: [], exclude: [] },
      ]);
      expect(await asked('editors "see print" -hose')).toEqual([
        { words: 'editors see print', require: ['see', 'print'], exclude: ['hose'] },
        { words: 'editors see print', require: ['see', 'print'], exclude: ['hose'] },
        { words: 'editors see print', require: [], exclude: ['hose'] },
      ]);
    } finally {
      rankings.mockRestore();
    }
  });
});
