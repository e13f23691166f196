/**
 * What the operator does to accounts (`npm run user -- role|plan ...`), for tests: in-process through the running
 * test server's services, or as the real command against a spawned server's store.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TierName } from '../../src/rate-limit/index.js';
import type { TestUser } from './factories.js';
import type { TestServer } from './test-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Sets the account's plan as the operator would. */
export async function grantPlan(t: TestServer, user: Pick<TestUser, 'email'>, plan: TierName): Promise<void> {
  await t.server.services.plans.setPlanByEmail(user.email, plan);
}

/** Makes the account an admin as the operator would (`npm run user -- role <email> admin`). */
export async function makeAdmin(t: TestServer, user: Pick<TestUser, 'email'>): Promise<void> {
  await t.server.services.accounts.setRole(user.email, 'admin');
}

/**
 * Runs `npm run user -- <args>` (scripts/user-admin.ts) against the store a spawned server uses: `env` is that
 * server's store settings (DATA_DIR or DATABASE_URL, and the secrets it was given). Resolves with its output.
 */
export async function operatorCommand(env: Record<string, string>, args: string[]): Promise<string> {
  return (await operatorRun(env, args)).stdout;
}

/** `operatorCommand` with both of its outputs; `nodeArgs` go to node before the script (a probe to `--import`). */
export async function operatorRun(env: Record<string, string>, args: string[], nodeArgs: string[] = []): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', ...nodeArgs, 'scripts/user-admin.ts', ...args], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
  });
}
