/** getSearchSuggestions: the caller's own past queries, words of their own data, and spelling fixes; never another account's. */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { seedSqlite } from '../support/search-corpus.js';
import { grantPlan } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const file = `suggest-${randomBytes(4).toString('hex')}.db`;
let t: TestServer;

interface Caller {
  user: TestUser;
  key: TestKey;
}

async function caller(): Promise<Caller> {
  const user = await registerUser(t.client);
  await grantPlan(t, user, 'pro');
  await seedSqlite(join(t.dataDir, 'sqlite', user.id), file, 'products');
  const key = await createKey(t.client, user, { rateLimitTier: 'pro', environment: 'test' });
  const res = await t.client.post('/api/v1/databases', { name: 'Catalog', engine: 'sqlite', database: file, environment: 'test' }, { token: user.token });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return { user, key };
}

const searchAs = (who: Caller, query: string) => t.client.post('/api/v1/search', { query }, { token: who.key.secret });
const suggest = (who: Caller, q: string, limit?: number) =>
  t.client.get(`/api/v1/search/suggestions?q=${encodeURIComponent(q)}${limit ? `&limit=${limit}` : ''}`, { token: who.key.secret });

let ada: Caller;

beforeAll(async () => {
  t = await startTestServer();
  ada = await caller();
  for (const query of ['headphones wireless', 'headphones wireless', 'headphones', 'Headset']) await searchAs(ada, query);
  // Three users search "keyboard mechanical"; only two search "keyboard tactile".
  const others = await Promise.all([caller(), caller(), caller()]);
  for (const who of others) expect((await searchAs(who, 'keyboard mechanical')).status).toBe(200);
  for (const who of others.slice(0, 2)) await searchAs(who, 'keyboard tactile');
  await t.server.services.searchRecorder.flush();
}, 120_000);
afterEach(() => t.assertContract());
afterAll(() => t.stop(), 60_000);

describe('getSearchSuggestions', () => {
  it('when the caller typed the start of past queries, then their own come first, most searched, then latest, first', async () => {
    const res = await suggest(ada, 'head');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      query: 'head',
      suggestions: [
        { text: 'headphones wireless', source: 'history', count: 2 },
        { text: 'Headset', source: 'history', count: 1 },
        { text: 'headphones', source: 'history', count: 1 },
      ],
      didYouMean: [],
    });
  });

  it('when other accounts searched a query, then none of it is suggested, however many they are', async () => {
    const res = await suggest(ada, 'keyboard m');
    expect(res.status).toBe(200);
    expect(res.body.data.suggestions.map((s: { text: string }) => s.text)).not.toContain('keyboard mechanical');
    expect(res.body.data.suggestions.every((s: { source: string }) => s.source !== 'popular')).toBe(true);
    const tactile = await suggest(ada, 'keyboard t');
    expect(tactile.body.data.suggestions.filter((s: { source: string }) => s.source === 'history')).toEqual([]);
  });

  it('when the word being typed starts words of the caller\'s own data, then it is completed from them, most frequent first', async () => {
    const res = await suggest(ada, 'Mechanical key');
    expect(res.body.data.suggestions).toEqual([{ text: 'Mechanical keyboard', source: 'vocabulary', count: expect.any(Number) }]);
    const batt = await suggest(ada, 'batt', 1);
    expect(batt.body.data.suggestions).toEqual([{ text: 'battery', source: 'vocabulary', count: expect.any(Number) }]);
  });

  it("when another user types the start of the caller's private queries, then only words of their own data come back", async () => {
    const stranger = await caller();
    const res = await suggest(stranger, 'head');
    expect(res.body.data.suggestions).toEqual([{ text: 'headphones', source: 'vocabulary', count: expect.any(Number) }]);
  });

  it('when a word is misspelled, then "did you mean" offers the spelling found in the connected data', async () => {
    const res = await suggest(ada, 'wireles hedphones');
    expect(res.body.data.didYouMean[0]).toBe('wireless headphones');
    const known = await suggest(ada, 'wireless headphones');
    expect(known.body.data.didYouMean).toEqual([]);
    const swapped = await suggest(ada, 'baterry');
    expect(swapped.body.data.didYouMean).toContain('battery');
  });

  it('when a limit is given, then no more suggestions than that come back', async () => {
    const res = await suggest(ada, 'h', 1);
    expect(res.body.data.suggestions).toHaveLength(1);
  });

  it('when LIKE wildcards are typed, then they only match themselves', async () => {
    const res = await suggest(ada, '%');
    expect(res.body.data.suggestions).toEqual([]);
    const underscore = await suggest(ada, 'h_ad');
    expect(underscore.body.data.suggestions.filter((s: { source: string }) => s.source === 'history')).toEqual([]);
  });
});
