import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, fromIp, registerUser } from '../support/factories.js';
import { makeAdmin } from '../support/operator.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

describe('disabled accounts', () => {
  it("when an operator disables a user, then the user's JWTs, refresh tokens, keys and logins stop working; enabling restores login", async () => {
    const user = await registerUser(t.client);
    const key = await createKey(t.client, user);
    await t.server.services.accounts.setDisabled(user.email, true);
    expect((await t.client.get('/api/v1/auth/profile', { token: user.token })).status).toBe(401);
    const keyAnswer = await t.client.get('/api/v1/rate-limit/status', { token: key.secret });
    expect(keyAnswer.body.error.code).toBe('ACCOUNT_DISABLED');
    expect((await t.client.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken })).status).toBe(401);
    const login = await t.client.post('/api/v1/auth/login', { email: user.email, password: user.password }, fromIp());
    expect(login.body.error.code).toBe('ACCOUNT_DISABLED');
    await t.server.services.accounts.setDisabled(user.email, false);
    expect((await t.client.post('/api/v1/auth/login', { email: user.email, password: user.password }, fromIp())).status).toBe(200);
  });
});

describe('admin-only operations', () => {
  it('when a user calls an admin operation, then 403 ADMIN_REQUIRED; an admin made by the operator gets the migration status', async () => {
    const user = await registerUser(t.client);
    const denied = await t.client.get('/api/v1/management/migration-status', { token: user.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('ADMIN_REQUIRED');
    const admin = await registerUser(t.client);
    await makeAdmin(t, admin);
    const status = await t.client.get('/api/v1/management/migration-status', { token: admin.token });
    expect(status.status).toBe(200);
    expect(status.body.data).toMatchObject({ upToDate: true, pending: [] });
    expect(status.body.data.executed[0].name).toBe('0001-initial-schema');
    expect(status.body.data.current).toBe(status.body.data.executed.at(-1).name);
  });
});
