/**
 * The operator's commands on accounts (`npm run user -- role|plan|plans`), run as the
 * operator runs them, against the store of a running server: the only way an account becomes an admin or gets a
 * plan above free, besides an admin's updateUserPlan. (Taking a role away is the same command, tested in-process in
 * test/api/security-privilege.test.ts.) The server and the commands share Redis (REDIS_URL), as a deployment of
 * several processes does: the command's change reaches the server's caches at once. Without Redis, the server sees it
 * when its account cache entries expire (5 s).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { registerUser } from '../support/factories.js';
import { operatorCommand, operatorRun } from '../support/operator.js';
import { redisUrl } from '../support/stores.js';

let server: ServerProcess | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-operator-')), REDIS_URL: redisUrl };
  server = await spawnServer({ ...env, TRUST_PROXY: 'true' });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe('npm run user', () => {
  it('when the operator makes an account an admin and gives it a plan, then the account has both at once', async () => {
    const client = new ApiClient(server!.url);
    const user = await registerUser(client);
    expect((await client.get('/api/v1/analytics/admin/user-activity', { token: user.token })).status).toBe(403);

    expect(await operatorCommand(env, ['role', user.email, 'admin'])).toContain(`${user.email}: enabled, role admin, plan free`);
    expect((await client.get('/api/v1/analytics/admin/user-activity', { token: user.token })).status).toBe(200);

    expect(await operatorCommand(env, ['plan', user.email.toUpperCase(), 'pro'])).toContain('plan pro');
    expect((await client.post('/api/v1/keys', { name: 'pro key', rateLimitTier: 'pro' }, { token: user.token })).status).toBe(201);
    expect(await operatorCommand(env, ['plans'])).toContain(`${user.email}: enabled, role admin, plan pro`);
  }, 120_000);

  it('when a command runs, then it only opens the store, changes the row and closes: it never listens on a port and logs no store misuse', async () => {
    const client = new ApiClient(server!.url);
    const user = await registerUser(client);
    // Reports every server the command would start listening (an HTTP server, as the whole service stack has).
    const probe = 'data:text/javascript,' + encodeURIComponent(
      "import net from 'node:net'; const listen = net.Server.prototype.listen; "
      + "net.Server.prototype.listen = function (...args) { process.stderr.write('PROBE: listening\\n'); return listen.apply(this, args); };",
    );
    const { stdout, stderr } = await operatorRun(env, ['plan', user.email, 'enterprise'], ['--import', probe]);
    expect(stdout).toContain(`${user.email}: enabled, role user, plan enterprise`);
    expect(stderr).not.toContain('PROBE: listening');
    expect(stdout + stderr).not.toMatch(/SQLITE_MISUSE|"level":[56]0/);
    expect((await client.post('/api/v1/keys', { name: 'enterprise key', rateLimitTier: 'enterprise' }, { token: user.token })).status).toBe(201);
  }, 120_000);

  it('when the store lacks this version\'s schema, then the command changes nothing and says to start the server first', async () => {
    await expect(operatorRun({ DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-operator-empty-')) }, ['plans'])).rejects.toMatchObject({
      code: 1, stderr: expect.stringContaining('no Quarry schema yet'),
    });
  }, 120_000);

  it('when a command names no account or an unknown role, then it fails and says why', async () => {
    await expect(operatorCommand(env, ['plan', 'nobody@example.com', 'pro'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('No account with the email nobody@example.com') });
    await expect(operatorCommand(env, ['role', 'nobody@example.com', 'root'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('usage: npm run user') });
  }, 120_000);
});
