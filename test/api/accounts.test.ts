import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromIp, registerUser, uniqueEmail } from '../support/factories.js';
import { makeAdmin } from '../support/operator.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

describe('registerUser', () => {
  it('when the input is valid, then it creates a user with role user and a working session', async () => {
    const email = uniqueEmail();
    const res = await t.client.post('/api/v1/auth/register', { email: email.toUpperCase(), password: 'correct-horse-42', name: ' Ada ' }, fromIp());
    expect(res.status).toBe(201);
    expect(res.body.data.user).toMatchObject({ email, name: 'Ada', role: 'user', connectedDatabases: [] });
    expect(res.body.data.token).toBe(res.body.data.tokens.accessToken);
    expect(res.body.data.tokens.expiresIn).toBe(3600);
    // The tokens are random base64url: one may spell "hash" by chance (a fresh-clone run met it). Everything else
    // in the answer, every field name included, must not mention a password or its hash.
    const { token: _token, tokens, ...rest } = res.body.data;
    expect(Object.keys(tokens).join(' ')).not.toMatch(/password|hash/i);
    expect(JSON.stringify({ ...res.body, data: rest })).not.toMatch(/password|hash/i);
    const profile = await t.client.get('/api/v1/auth/profile', { token: res.body.data.token });
    expect(profile.status).toBe(200);
    expect(profile.body.data.user.id).toBe(res.body.data.user.id);
  });

  it('when the email is taken (in any case), then 409 EMAIL_TAKEN', async () => {
    const user = await registerUser(t.client);
    const res = await t.client.post('/api/v1/auth/register', { email: user.email.toUpperCase(), password: 'another-pass-9', name: 'B' }, fromIp());
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('EMAIL_TAKEN');
  });

  it.each([
    [{ email: 'not-an-email', password: 'correct-horse-42', name: 'A' }, '/email'],
    [{ email: 'x@example.com', password: 'short1!', name: 'A' }, '/password'],
    [{ email: 'x@example.com', password: 'onlyletterslong', name: 'A' }, '/password'],
    [{ email: 'x@example.com', password: 'correct-horse-42', name: '' }, '/name'],
    [{ email: 'x@example.com', password: 'correct-horse-42', name: 'A', role: 'admin' }, '/role'],
  ])('when the body is %j, then 400 VALIDATION_ERROR names %s', async (body, path) => {
    const res = await t.client.post('/api/v1/auth/register', body, fromIp());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('when the operator makes a user an admin and back, then the role follows; a new account is always user on the free plan', async () => {
    const boss = await registerUser(t.client, { email: uniqueEmail('boss') });
    const before = await t.client.get('/api/v1/auth/profile', { token: boss.token });
    expect(before.body.data.user).toMatchObject({ role: 'user', plan: 'free' });
    await makeAdmin(t, boss);
    expect((await t.client.get('/api/v1/auth/profile', { token: boss.token })).body.data.user.role).toBe('admin');
    expect((await t.client.get('/api/v1/management/migration-status', { token: boss.token })).status).toBe(200);
    await t.server.services.accounts.setRole(boss.email, 'user');
    expect((await t.client.get('/api/v1/auth/profile', { token: boss.token })).body.data.user.role).toBe('user');
    expect((await t.client.get('/api/v1/management/migration-status', { token: boss.token })).status).toBe(403);
  });

  it('when one IP registers a sixth time within the hour, then 429 with the limit headers', async () => {
    const ip = fromIp();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i += 1) {
      last = await t.client.post('/api/v1/auth/register', { email: uniqueEmail(), password: 'correct-horse-42', name: 'R' }, ip);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect(last!.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(last!.headers.get('x-ratelimit-limit')).toBe('5');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('when registrations are refused as invalid (a typo, a weak password), then they cost no try; a taken address still does', async () => {
    const ip = fromIp();
    const register = (body: Record<string, unknown>) => t.client.post('/api/v1/auth/register', { name: 'R', password: 'correct-horse-42', ...body }, ip);
    const invalid = [
      await register({ email: 'ada@example' }),
      await register({ email: uniqueEmail(), password: 'short' }),
      await register({ email: uniqueEmail(), password: 'onlyletterslong' }),
      await register({ email: uniqueEmail(), name: '   ' }),
      await register({ email: uniqueEmail(), nmae: 'typo' }),
      await register({ email: uniqueEmail(), password: 'short' }),
    ];
    expect(invalid.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400]);
    const taken = await register({ email: (await registerUser(t.client)).email });
    expect(taken.status).toBe(409);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await register({ email: uniqueEmail() })).status);
    // Five tries an hour: the 409 took one, the six invalid ones none.
    expect(statuses).toEqual([201, 201, 201, 201, 429]);
  });
});

describe('loginUser', () => {
  it('when the password is right, then a new session; when wrong or unknown, the same 401', async () => {
    const user = await registerUser(t.client);
    const ok = await t.client.post('/api/v1/auth/login', { email: user.email, password: user.password }, fromIp());
    expect(ok.status).toBe(200);
    expect(ok.body.data.tokens.refreshToken).toEqual(expect.any(String));
    const wrong = await t.client.post('/api/v1/auth/login', { email: user.email, password: 'wrong-password-1' }, fromIp());
    const unknown = await t.client.post('/api/v1/auth/login', { email: uniqueEmail(), password: 'wrong-password-1' }, fromIp());
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body.error).toEqual(unknown.body.error);
    expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
  });
});

describe('JWT sessions', () => {
  it('when logged out, then the access and refresh tokens of that session stop working, others do not', async () => {
    const user = await registerUser(t.client);
    const other = await t.client.post('/api/v1/auth/login', { email: user.email, password: user.password }, fromIp());
    expect((await t.client.post('/api/v1/auth/logout', undefined, { token: user.token })).status).toBe(200);
    const after = await t.client.get('/api/v1/auth/profile', { token: user.token });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('SESSION_ENDED');
    expect((await t.client.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken })).body.error.code).toBe('SESSION_ENDED');
    expect((await t.client.get('/api/v1/auth/profile', { token: other.body.data.token })).status).toBe(200);
  });

  it('when a refresh token is used, then new tokens; when reused, then the session ends', async () => {
    const user = await registerUser(t.client);
    const first = await t.client.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken });
    expect(first.status).toBe(200);
    expect(first.body.data.tokens.refreshToken).not.toBe(user.refreshToken);
    const replay = await t.client.post('/api/v1/auth/refresh', { refreshToken: user.refreshToken });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe('SESSION_ENDED');
    expect((await t.client.get('/api/v1/auth/profile', { token: first.body.data.token })).status).toBe(401);
  });

  it('when an access token is used as a refresh token (or the reverse), then 401 INVALID_TOKEN', async () => {
    const user = await registerUser(t.client);
    expect((await t.client.post('/api/v1/auth/refresh', { refreshToken: user.token })).body.error.code).toBe('INVALID_TOKEN');
    expect((await t.client.get('/api/v1/auth/profile', { token: user.refreshToken })).body.error.code).toBe('INVALID_TOKEN');
  });

  it('when the token is missing, tampered or signed with another secret, then 401', async () => {
    const user = await registerUser(t.client);
    expect((await t.client.get('/api/v1/auth/profile')).body.error.code).toBe('AUTH_REQUIRED');
    const tampered = user.token.slice(0, -4) + (user.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect((await t.client.get('/api/v1/auth/profile', { token: tampered })).body.error.code).toBe('INVALID_TOKEN');
    // The same claims, unsigned (`alg: none`): refused like any token Quarry did not sign.
    const [, payload] = user.token.split('.');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    const unsigned = await t.client.get('/api/v1/auth/profile', { token: none });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.code).toBe('INVALID_TOKEN');
  });

  it('when the password changes, then every old session ends and the response carries a fresh one', async () => {
    const user = await registerUser(t.client);
    const wrong = await t.client.post('/api/v1/auth/change-password', { currentPassword: 'nope-nope-1', newPassword: 'battery-staple-77' }, { token: user.token });
    expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
    const changed = await t.client.post('/api/v1/auth/change-password', { currentPassword: user.password, newPassword: 'battery-staple-77' }, { token: user.token });
    expect(changed.status).toBe(200);
    expect((await t.client.get('/api/v1/auth/profile', { token: user.token })).status).toBe(401);
    expect((await t.client.get('/api/v1/auth/profile', { token: changed.body.data.token })).status).toBe(200);
    expect((await t.client.post('/api/v1/auth/login', { email: user.email, password: 'battery-staple-77' }, fromIp())).status).toBe(200);
  });
});

describe('updateProfile', () => {
  it('when name and email change, then the profile shows them; role cannot be sent', async () => {
    const user = await registerUser(t.client);
    const email = uniqueEmail('renamed');
    const res = await t.client.put('/api/v1/auth/profile', { name: 'New Name', email, currentPassword: user.password }, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ name: 'New Name', email, role: 'user' });
    const escalate = await t.client.put('/api/v1/auth/profile', { role: 'admin' }, { token: user.token });
    expect(escalate.status).toBe(400);
    expect(escalate.body.error.details.errors[0]).toMatchObject({ path: '/role', message: 'is not a known field' });
  });

  it("when the new email is another user's, then 409", async () => {
    const a = await registerUser(t.client);
    const b = await registerUser(t.client);
    expect((await t.client.put('/api/v1/auth/profile', { email: b.email, currentPassword: a.password }, { token: a.token })).status).toBe(409);
  });

  it('when the email changes without the current password or with a wrong one, then 400 or 401 and the email stays', async () => {
    const user = await registerUser(t.client);
    const email = uniqueEmail('taken-over');
    const missing = await t.client.put('/api/v1/auth/profile', { email }, { token: user.token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.errors[0]).toMatchObject({ path: '/currentPassword' });
    const wrong = await t.client.put('/api/v1/auth/profile', { email, currentPassword: 'wrong-horse-42' }, { token: user.token });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
    expect((await t.client.get('/api/v1/auth/profile', { token: user.token })).body.data.user.email).toBe(user.email);
    const renamedOnly = await t.client.put('/api/v1/auth/profile', { name: 'Only the name', email: user.email }, { token: user.token });
    expect(renamedOnly.status).toBe(200);
  });
});

describe('sessions and profiles kept in memory (AccountCache)', () => {
  const profile = async (token: string) => (await t.client.get('/api/v1/auth/profile', { token })).body.data.user;

  it('when the profile was read and the name then changes, then the next read shows the new name', async () => {
    const user = await registerUser(t.client, { name: 'Before' });
    expect((await profile(user.token)).name).toBe('Before');
    await t.client.put('/api/v1/auth/profile', { name: 'After' }, { token: user.token });
    expect((await profile(user.token)).name).toBe('After');
  });

  it('when the profile was read and a database is then connected and removed, then the profile follows each change', async () => {
    const user = await registerUser(t.client);
    await onSqlite(join(t.dataDir, 'sqlite', user.id), 'profile-cache.db', ['CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)']);
    expect((await profile(user.token)).connectedDatabases).toEqual([]);
    const created = await t.client.post('/api/v1/databases', { name: 'Notes', engine: 'sqlite', database: 'profile-cache.db' }, { token: user.token });
    expect(created.status).toBe(201);
    const id = created.body.data.database.id;
    expect((await profile(user.token)).connectedDatabases).toEqual([id]);
    await t.client.delete(`/api/v1/databases/${id}`, { token: user.token });
    expect((await profile(user.token)).connectedDatabases).toEqual([]);
  });

  it('when a session was used and then logs out, then its very next request is refused', async () => {
    const user = await registerUser(t.client);
    expect((await t.client.get('/api/v1/auth/profile', { token: user.token })).status).toBe(200);
    await t.client.post('/api/v1/auth/logout', undefined, { token: user.token });
    expect((await t.client.get('/api/v1/auth/profile', { token: user.token })).body.error.code).toBe('SESSION_ENDED');
  });
});
