/** The search result cache in Redis: shared entries, TTL, invalidation per connection, and a Redis that is down. */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisResultCache } from '../../src/services/search/result-cache-redis.js';
import { redisUrl } from '../support/stores.js';

const prefix = `quarry:test:${randomBytes(4).toString('hex')}:`;
const caches: RedisResultCache[] = [];
const open = (ttlMs = 60_000, url = redisUrl) => {
  const cache = new RedisResultCache(url, ttlMs, prefix);
  caches.push(cache);
  return cache;
};

afterAll(async () => {
  for (const cache of caches) await cache.close();
});

describe('RedisResultCache', () => {
  it('when one process stores a page, then another reads it, and a connection change drops it for both', async () => {
    const [a, b] = [open(), open()];
    await Promise.all([a.ready(), b.ready()]);
    await a.set('k1', 'page one', ['db_1', 'db_2']);
    await a.set('k2', 'page two', ['db_3']);
    expect(await b.get('k1')).toBe('page one');
    await b.forgetDatabase('db_2');
    expect(await a.get('k1')).toBeNull();
    expect(await a.get('k2')).toBe('page two');
  });

  it('when the TTL passes, then the entry is gone', async () => {
    const cache = open(50);
    await cache.ready();
    await cache.set('short', 'v', ['db_9']);
    expect(await cache.get('short')).toBe('v');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await cache.get('short')).toBeNull();
  });

  it('when Redis cannot be reached, then reads miss and writes do nothing, quickly and without throwing', async () => {
    const cache = open(60_000, 'redis://127.0.0.1:1');
    const started = Date.now();
    await cache.set('k', 'v', ['db_1']);
    expect(await cache.get('k')).toBeNull();
    await cache.forgetDatabase('db_1');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('searchDatabases with REDIS_URL', () => {
  it('when the same search repeats, then Redis answers it until the connection changes', async () => {
    const { startTestServer } = await import('../support/test-server.js');
    const { createKey, registerUser } = await import('../support/factories.js');
    const { onSqlite } = await import('../support/seed-databases.js');
    const { join } = await import('node:path');
    const t = await startTestServer({ REDIS_URL: redisUrl });
    try {
      const user = await registerUser(t.client);
      const key = await createKey(t.client, user, { environment: 'test' });
      const file = join(t.dataDir, 'sqlite', user.id);
      await onSqlite(file, 'cache.db', ['CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT)', "INSERT INTO notes VALUES (1, 'zebra crossing')"]);
      const id = (await t.client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'cache.db', environment: 'test' }, { token: user.token })).body.data.database.id;
      const search = () => t.client.post('/api/v1/search', { query: 'zebra', databases: [id] }, { token: key.secret });
      // The cache's Redis connection may still be opening: search until a page is stored.
      const deadline = Date.now() + 5000;
      let total = 1;
      while (Date.now() < deadline) {
        expect((await search()).body.data.total).toBe(1);
        await onSqlite(file, 'cache.db', [`INSERT INTO notes (note) VALUES ('zebra ${Date.now()}')`]);
        total = (await search()).body.data.total;
        if (total === 1) break;
        await t.client.put(`/api/v1/databases/${id}`, { name: `Notes ${Date.now()}` }, { token: user.token });
        await onSqlite(file, 'cache.db', ['DELETE FROM notes WHERE id > 1']);
      }
      expect(total).toBe(1); // answered from Redis although a second zebra exists
      await t.client.put(`/api/v1/databases/${id}`, { name: 'Notes, renamed' }, { token: user.token });
      expect((await search()).body.data.total).toBe(2);
      t.assertContract();
    } finally {
      await t.stop();
    }
  });
});
