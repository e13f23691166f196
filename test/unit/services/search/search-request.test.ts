/** readQuery, readPage and pageCacheKey: what a request asks, bounded and fingerprinted before any engine runs. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/app-error.js';
import { encodeCursor } from '../../../../src/search-core/cursor.js';
import { MAX_WINDOW, pageCacheKey, readPage, readQuery } from '../../../../src/services/search/search-request.js';
import { caller } from './fakes.js';

const secret = Buffer.alloc(32, 7);
const page = (request: Parameters<typeof readQuery>[0]) => readPage(caller(), request, readQuery(request), secret);

describe('readQuery', () => {
  it('when a query has no word, or only excluded words, then it is refused naming /query', () => {
    for (const query of ['  ', '-only -excluded']) {
      const error = (() => { try { readQuery({ query }); } catch (e) { return e; } })();
      expect(error).toBeInstanceOf(AppError);
      expect(JSON.stringify((error as AppError).details)).toContain('/query');
    }
  });

  it('when nothing is set, then the mode is natural, the page 20 rows and hybrid leans a quarter on meaning', () => {
    const asked = readQuery({ query: 'red shoes' });
    expect([asked.mode, asked.limit, asked.semanticRatio, asked.query.mode]).toEqual(['natural', 20, 0.25, 'natural']);
    expect(readQuery({ query: 'a AND b', searchMode: 'boolean' }).query.mode).toBe('boolean');
  });
});

describe('readPage', () => {
  it('when offset and limit pass the window, then 400 names /offset', () => {
    expect(() => page({ query: 'word', offset: MAX_WINDOW - 10, limit: 20 })).toThrow(AppError);
    expect(page({ query: 'word', offset: 40, limit: 20 })).toMatchObject({ offset: 40, top: 60 });
  });

  it('when a cursor of this very search is sent, then its offset is read; another search\'s cursor is refused', () => {
    const first = page({ query: 'word' });
    expect(page({ query: 'word', cursor: encodeCursor(secret, first.fingerprint, 40) }).offset).toBe(40);
    const other = page({ query: 'other words' });
    expect(() => page({ query: 'word', cursor: encodeCursor(secret, other.fingerprint, 40) })).toThrow(AppError);
  });

  it('when anything that decides the ranking changes, then the fingerprint changes; the page asked does not change it', () => {
    const base = page({ query: 'word' }).fingerprint;
    expect(page({ query: 'word', offset: 20 }).fingerprint).toBe(base);
    for (const changed of [{ query: 'word', live: true }, { query: 'word', tables: ['t'] }, { query: 'word', typoTolerance: false }, { query: 'word', exactTotal: true }]) {
      expect(page(changed).fingerprint).not.toBe(base);
    }
  });
});

describe('pageCacheKey', () => {
  const databases = [{ record: { id: 'db_1', updatedAt: new Date(1) }, syncedAt: [5] }];
  it('when the mode reads meaning, then nothing is cached (each search counts an AI request)', () => {
    const p = page({ query: 'word' });
    expect(pageCacheKey(p, 20, 'semantic', databases)).toBeNull();
    expect(pageCacheKey(p, 20, 'hybrid', databases)).toBeNull();
  });

  it('when a connection changes or a table is synced again, then the key changes', () => {
    const p = page({ query: 'word' });
    const key = pageCacheKey(p, 20, 'natural', databases);
    expect(pageCacheKey(p, 20, 'natural', [{ record: { id: 'db_1', updatedAt: new Date(2) }, syncedAt: [5] }])).not.toBe(key);
    expect(pageCacheKey(p, 20, 'natural', [{ record: { id: 'db_1', updatedAt: new Date(1) }, syncedAt: [6] }])).not.toBe(key);
    expect(pageCacheKey(p, 20, 'natural', databases)).toBe(key);
  });
});
