/**
 * Unbounded fan-out found by the outside attack, kept beside the OWASP tests: with 40 connections
 * to one database server, one search opened 59 sockets to it and exhausted it. A search reads at most the plan's
 * databases, and Quarry holds at most DB_MAX_CONNECTIONS_PER_HOST connections to one server whatever it searches.
 * The server here is the shared PostgreSQL behind a proxy that counts the sockets opened through it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, registerUser, type TestKey, type TestUser } from '../support/factories.js';
import { startHangingProxy, type HangingProxy } from '../support/fault-instances.js';
import { liftKeyLimits } from '../support/hostile.js';
import { grantPlan } from '../support/operator.js';
import { onPostgres, postgresConnection } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PER_HOST = 10;
const table = `fanout_${randomBytes(4).toString('hex')}`;
let t: TestServer;
let proxy: HangingProxy;
let owner: TestUser;
let key: TestKey;
const ids: string[] = [];

beforeAll(async () => {
  await onPostgres([
    `CREATE TABLE ${table} (id int PRIMARY KEY, title text NOT NULL)`,
    `INSERT INTO ${table} VALUES (1, 'granite countertop'), (2, 'marble tile')`,
    `CREATE INDEX ON ${table} USING GIN (to_tsvector('english', title))`,
  ]);
  proxy = await startHangingProxy(postgresConnection().port);
  t = await startTestServer({ DB_MAX_CONNECTIONS_PER_HOST: String(PER_HOST), SEARCH_TIMEOUT_MS: '10000', SEARCH_CACHE_TTL_MS: '0' });
  owner = await registerUser(t.client);
  await grantPlan(t, owner, 'enterprise');
  key = await createKey(t.client, owner, { rateLimitTier: 'enterprise' });
  await liftKeyLimits(key.id);
  for (let i = 0; i < 40; i += 1) {
    const res = await t.client.post('/api/v1/databases', postgresConnection({ name: `shard ${i}`, host: '127.0.0.1', port: proxy.port, tables: [table] }), { token: owner.token });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    ids.push(res.body.data.database.id);
  }
}, 120_000);
afterEach(() => t.assertContract());
afterAll(async () => {
  await t?.stop();
  await proxy?.close();
  await onPostgres([`DROP TABLE IF EXISTS ${table}`]).catch(() => undefined);
});

describe('API4 one search fanning out to one server', () => {
  it('when an enterprise account with 40 connections to one server searches all of them, then 25 are searched, all answer, and at most DB_MAX_CONNECTIONS_PER_HOST sockets are open to the server', async () => {
    proxy.resetPeak();
    const res = await t.client.post('/api/v1/search', { query: 'granite' }, { token: key.secret });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.databases).toHaveLength(25);
    expect(res.body.data.databases.map((d: { status: string }) => d.status)).toEqual(Array(25).fill('ok'));
    // Newest first: the 25 most recently connected.
    expect(res.body.data.databases.map((d: { databaseId: string }) => d.databaseId).sort()).toEqual(ids.slice(15).sort());
    console.info(`fan-out: one search over 25 of 40 connections to one server opened at most ${proxy.peak()} sockets to it (bound ${PER_HOST})`);
    expect(proxy.peak()).toBeLessThanOrEqual(PER_HOST);
    expect(t.server.services.pools.held().byHost[`127.0.0.1:${proxy.port}`]).toBeLessThanOrEqual(PER_HOST);
  }, 60_000);

  it('when several such searches run at once, then the server still never sees more than the bound', async () => {
    proxy.resetPeak();
    const answers = await Promise.all([0, 1, 2].map((i) => t.client.post('/api/v1/search', { query: 'granite', databases: ids.slice(i * 10, i * 10 + 10) }, { token: key.secret })));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(proxy.peak()).toBeLessThanOrEqual(PER_HOST);
  }, 60_000);

  it('when a search names more databases than the plan lets one search read, then 403 TOO_MANY_DATABASES; naming none reads as many as the plan allows', async () => {
    const res = await t.client.post('/api/v1/search', { query: 'granite', databases: ids.slice(0, 26) }, { token: key.secret });
    expect(res.status).toBe(400); // the contract itself allows at most 25 ids
    const pro = await registerUser(t.client);
    await grantPlan(t, pro, 'pro');
    const proKey = await createKey(t.client, pro, { rateLimitTier: 'pro' });
    const proIds: string[] = [];
    for (let i = 0; i < 11; i += 1) {
      proIds.push((await t.client.post('/api/v1/databases', postgresConnection({ name: `pro ${i}`, tables: [table] }), { token: pro.token })).body.data.database.id);
    }
    const over = await t.client.post('/api/v1/search', { query: 'granite', databases: proIds }, { token: proKey.secret });
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'TOO_MANY_DATABASES', details: { plan: 'pro', limit: 10, requested: 11 } });
    const unnamed = await t.client.post('/api/v1/search', { query: 'granite' }, { token: proKey.secret });
    expect(unnamed.body.data.databases).toHaveLength(10);
  }, 60_000);
});
