import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredSqliteFile } from '../../../../src/repositories/sqlite-file-repository.js';
import { SqliteFileCopies } from '../../../../src/services/databases/sqlite-file-copies.js';

const USER = 'usr_copies';
let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A store holding versions of one file, in chunks of 3 bytes. */
function fakeStore() {
  let current: StoredSqliteFile | null = null;
  const chunks = new Map<string, Buffer>();
  const state = { finds: 0, down: false };
  return {
    state,
    put(version: string, bytes: Buffer) {
      for (let seq = 0; seq * 3 < bytes.length; seq++) chunks.set(`${version}/${seq}`, bytes.subarray(seq * 3, seq * 3 + 3));
      current = { userId: USER, name: 'shop.db', version, sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), chunks: Math.ceil(bytes.length / 3), uploadedAt: new Date() };
    },
    remove() {
      current = null;
    },
    files: {
      async find() {
        state.finds++;
        if (state.down) throw new Error('connect ECONNREFUSED');
        return current;
      },
      async chunk(version: string, seq: number) {
        return chunks.get(`${version}/${seq}`) ?? null;
      },
    },
  };
}

function copies(store: ReturnType<typeof fakeStore>, clock: { now: number }) {
  return new SqliteFileCopies({ root, files: store.files, freshMs: 5_000, log: () => undefined, now: () => clock.now });
}

describe('SqliteFileCopies', () => {
  it('when the store holds a file this process has no copy of, then it is fetched; a newer version replaces it; a removed one goes', async () => {
    root = mkdtempSync(join(tmpdir(), 'quarry-copies-'));
    const store = fakeStore();
    const clock = { now: 0 };
    const local = copies(store, clock);
    const path = join(root, USER, 'shop.db');
    store.put('sqf_1', Buffer.from('first version'));
    await local.refresh(USER, 'shop.db');
    expect(readFileSync(path, 'utf8')).toBe('first version');

    // Found current a moment ago: the store is not asked again until freshMs has passed or the bus says otherwise.
    store.put('sqf_2', Buffer.from('second, longer version'));
    const finds = store.state.finds;
    await local.refresh(USER, 'shop.db');
    expect(store.state.finds).toBe(finds);
    expect(readFileSync(path, 'utf8')).toBe('first version');
    local.forget(USER, 'shop.db');
    await local.refresh(USER, 'shop.db');
    expect(readFileSync(path, 'utf8')).toBe('second, longer version');
    await local.refresh(USER, 'shop.db', { latest: true });
    expect(store.state.finds).toBe(finds + 2);

    store.remove();
    clock.now += 5_000;
    await local.refresh(USER, 'shop.db');
    expect(existsSync(path)).toBe(false);
  });

  it('when the store is down, then the copy there is used as it is; a file the store never held is left alone', async () => {
    root = mkdtempSync(join(tmpdir(), 'quarry-copies-'));
    const store = fakeStore();
    const clock = { now: 0 };
    const local = copies(store, clock);
    store.put('sqf_1', Buffer.from('kept copy'));
    await local.refresh(USER, 'shop.db');
    store.state.down = true;
    clock.now += 10_000;
    await expect(local.refresh(USER, 'shop.db')).resolves.toBeUndefined();
    expect(readFileSync(join(root, USER, 'shop.db'), 'utf8')).toBe('kept copy');

    store.state.down = false;
    store.remove();
    writeFileSync(join(root, USER, 'other.db'), 'put here by hand');
    await local.refresh(USER, 'other.db');
    expect(readFileSync(join(root, USER, 'other.db'), 'utf8')).toBe('put here by hand');
  });

  it('when the copy on disk was renamed over by another process sharing the folder, then its note no longer matches and the version is fetched again', async () => {
    root = mkdtempSync(join(tmpdir(), 'quarry-copies-'));
    const store = fakeStore();
    const clock = { now: 0 };
    const local = copies(store, clock);
    store.put('sqf_1', Buffer.from('the stored bytes'));
    await local.refresh(USER, 'shop.db');
    const path = join(root, USER, 'shop.db');
    writeFileSync(`${path}.other`, 'an older copy');
    const { renameSync } = await import('node:fs');
    renameSync(`${path}.other`, path);
    local.forget(USER, 'shop.db');
    await local.refresh(USER, 'shop.db');
    expect(readFileSync(path, 'utf8')).toBe('the stored bytes');
  });
});
