/**
 * Privilege escalation found by the outside attack (a role from an e-mail address, self-chosen tiers), kept beside the OWASP tests so it keeps
 * holding: an e-mail address never grants a role, changing the e-mail needs the password, and an account cannot give
 * itself a tier above its plan (nor the limits, exports and database counts that come with it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/config/config.js';
import { createKey, fromIp, registerUser, uniqueEmail } from '../support/factories.js';
import { grantPlan, makeAdmin } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const adminReads = ['/api/v1/analytics/admin/user-activity', '/api/v1/analytics/admin/system-overview', '/api/v1/management/migration-status'];

describe('API5 a role from an e-mail address', () => {
  it('when ADMIN_EMAILS is still set, then the server refuses to start and names the operator command', () => {
    let thrown: unknown;
    try {
      loadConfig({ DATA_DIR: t.dataDir, ADMIN_EMAILS: 'boss@corp.test' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toMatch(/ADMIN_EMAILS is no longer supported.*npm run user -- role <email> admin/s);
  });

  it("when a user takes the boss's address by registering or by changing their e-mail in any case, then the role stays user and admin reads are 403", async () => {
    const domain = `corp-${Date.now()}.test`;
    const registered = await registerUser(t.client, { email: `boss@${domain}` });
    const mallory = await registerUser(t.client);
    const changed = await t.client.put('/api/v1/auth/profile', { email: `BOSS2@${domain.toUpperCase()}`, currentPassword: mallory.password }, { token: mallory.token });
    expect(changed.status).toBe(200);
    for (const attacker of [registered, mallory]) {
      const profile = await t.client.get('/api/v1/auth/profile', { token: attacker.token });
      expect(profile.body.data.user.role).toBe('user');
      for (const path of adminReads) {
        const res = await t.client.get(path, { token: attacker.token });
        expect(res.status, path).toBe(403);
        expect(res.body.error.code).toBe('ADMIN_REQUIRED');
      }
    }
  });

  it('when the operator makes the real boss an admin, then admin reads work for them only, and the reverse takes it away', async () => {
    const boss = await registerUser(t.client);
    await makeAdmin(t, boss);
    const activity = await t.client.get('/api/v1/analytics/admin/user-activity', { token: boss.token });
    expect(activity.status).toBe(200);
    await t.server.services.accounts.setRole(boss.email, 'user');
    expect((await t.client.get('/api/v1/analytics/admin/user-activity', { token: boss.token })).status).toBe(403);
  });

  it('when a stolen access token changes the e-mail without the password, then 400; with a wrong one 401; the e-mail stays', async () => {
    const victim = await registerUser(t.client);
    const attackerEmail = uniqueEmail('attacker');
    const bare = await t.client.put('/api/v1/auth/profile', { email: attackerEmail }, { token: victim.token });
    expect(bare.status).toBe(400);
    expect(bare.body.error.details.errors).toEqual([{ location: 'body', path: '/currentPassword', message: 'is required to change the email' }]);
    const guessed = await t.client.put('/api/v1/auth/profile', { email: attackerEmail, currentPassword: 'guess-horse-42' }, { token: victim.token });
    expect(guessed.status).toBe(401);
    expect(guessed.body.error.code).toBe('INVALID_CREDENTIALS');
    expect((await t.client.get('/api/v1/auth/profile', { token: victim.token })).body.data.user.email).toBe(victim.email);
    expect((await t.client.post('/api/v1/auth/login', { email: attackerEmail, password: victim.password }, fromIp())).status).toBe(401);
  });
});

describe('API5 self-chosen tiers', () => {
  it('when a free account creates or updates a key to enterprise, then 403 TIER_ABOVE_PLAN and no key is above free', async () => {
    const user = await registerUser(t.client);
    const created = await t.client.post('/api/v1/keys', { name: 'escalate', rateLimitTier: 'enterprise' }, { token: user.token });
    expect(created.status).toBe(403);
    expect(created.body.error).toMatchObject({ code: 'TIER_ABOVE_PLAN', details: { plan: 'free', requestedTier: 'enterprise' } });
    const key = await createKey(t.client, user);
    const updated = await t.client.put(`/api/v1/keys/${key.id}`, { rateLimitTier: 'pro' }, { token: user.token });
    expect(updated.status).toBe(403);
    expect(updated.body.error.code).toBe('TIER_ABOVE_PLAN');
    const keys = (await t.client.get('/api/v1/keys', { token: user.token })).body.data.apiKeys;
    expect(keys.map((k: { rateLimitTier: string }) => k.rateLimitTier)).toEqual(['free']);
    const limits = await t.client.get('/api/v1/rate-limit/status', { token: key.secret });
    expect(limits.headers.get('x-ratelimit-tier')).toBe('free');
  });

  it('when a free account asks for the enterprise export, then 403 FEATURE_NOT_IN_TIER: the plan decides, not a key', async () => {
    const user = await registerUser(t.client);
    await createKey(t.client, user);
    const res = await t.client.get('/api/v1/analytics/export?format=csv', { token: user.token });
    expect(res.status).toBe(403);
    expect(res.body.error.details.tier).toBe('free');
  });

  it('when the plan is enterprise, then enterprise keys and the export work; after a downgrade the old key acts at the plan', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'enterprise');
    const key = await createKey(t.client, user, { rateLimitTier: 'enterprise' });
    expect((await t.client.get('/api/v1/rate-limit/status', { token: key.secret })).headers.get('x-ratelimit-tier')).toBe('enterprise');
    expect((await t.client.get('/api/v1/analytics/export?format=csv', { token: user.token })).status).toBe(200);
    await grantPlan(t, user, 'free');
    const after = await t.client.get('/api/v1/rate-limit/status', { token: key.secret });
    expect(after.headers.get('x-ratelimit-tier')).toBe('free');
    expect(after.headers.get('x-ratelimit-limit')).toBe('1000');
    expect((await t.client.get('/api/v1/analytics/export?format=csv', { token: user.token })).status).toBe(403);
  });

  it('when the plan is lowered, then a key above it is listed at the plan, and regenerating it makes a key of the plan that stays there after an upgrade', async () => {
    const user = await registerUser(t.client);
    await grantPlan(t, user, 'enterprise');
    const key = await createKey(t.client, user, { rateLimitTier: 'enterprise' });
    await grantPlan(t, user, 'free');
    const tierOf = async (id: string) => (await t.client.get('/api/v1/keys', { token: user.token })).body.data.apiKeys.find((k: { id: string }) => k.id === id)?.rateLimitTier;
    expect(await tierOf(key.id)).toBe('free');

    const regenerated = await t.client.post(`/api/v1/keys/${key.id}/regenerate`, undefined, { token: user.token });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.data.apiKey.rateLimitTier).toBe('free');
    const newId = regenerated.body.data.apiKey.id;
    expect(await tierOf(newId)).toBe('free');

    // The regenerated key was granted at the plan of its day: raising the plan again does not raise it.
    await grantPlan(t, user, 'enterprise');
    expect(await tierOf(newId)).toBe('free');
    const status = await t.client.get('/api/v1/rate-limit/status', { token: regenerated.body.data.secretKey });
    expect(status.headers.get('x-ratelimit-tier')).toBe('free');
  });

  it('when a free account connects a fourth database with enterprise keys in hand, then 403 TIER_LIMIT_EXCEEDED', async () => {
    const user = await registerUser(t.client);
    const connect = (i: number) => t.client.post('/api/v1/databases', { name: `notes ${i}`, engine: 'postgres', host: '127.0.0.1', port: 5432, database: 'test', username: 'postgres', password: '', environment: 'test' }, { token: user.token });
    for (let i = 0; i < 3; i += 1) expect((await connect(i)).status).toBe(201);
    const fourth = await connect(3);
    expect(fourth.status).toBe(403);
    expect(fourth.body.error).toMatchObject({ code: 'TIER_LIMIT_EXCEEDED', details: { tier: 'free', limit: 3 } });
  });

  it('when an admin sets a plan through updateUserPlan, then it applies; a user calling it is 403 and an unknown id 404', async () => {
    const admin = await registerUser(t.client);
    await makeAdmin(t, admin);
    const customer = await registerUser(t.client);
    const set = await t.client.put(`/api/v1/management/users/${customer.id}/plan`, { plan: 'pro' }, { token: admin.token });
    expect(set.status).toBe(200);
    expect(set.body.data.user).toMatchObject({ id: customer.id, plan: 'pro', role: 'user' });
    expect((await t.client.post('/api/v1/keys', { name: 'pro key', rateLimitTier: 'pro' }, { token: customer.token })).status).toBe(201);
    const self = await t.client.put(`/api/v1/management/users/${customer.id}/plan`, { plan: 'enterprise' }, { token: customer.token });
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('ADMIN_REQUIRED');
    expect((await t.client.put('/api/v1/management/users/usr_nobody/plan', { plan: 'pro' }, { token: admin.token })).status).toBe(404);
    expect((await t.client.put(`/api/v1/management/users/${customer.id}/plan`, { plan: 'platinum' }, { token: admin.token })).status).toBe(400);
  });
});
