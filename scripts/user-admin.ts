/**
 * Operator commands on accounts, run against the configured store (same environment as the server):
 *   npm run user -- disable <email>          end the user's sessions; their JWTs and API keys answer 401 ACCOUNT_DISABLED
 *   npm run user -- enable <email>           allow the user to log in again
 *   npm run user -- role <email> admin|user  make the account an admin, or a plain user again (the only way to either)
 *   npm run user -- plan <email> free|pro|enterprise   set the account's plan
 *   npm run user -- plans                    list the accounts on a plan above free
 */
import { ConfigError, loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/lib/logger.js';
import { isTierName } from '../src/rate-limit/index.js';
import type { UserRecord } from '../src/repositories/user-repository.js';
import { runOperatorCommand } from '../src/operator.js';
import type { OperatorServices } from '../src/composition.js';

const [command, email, value] = process.argv.slice(2);
const usage = 'usage: npm run user -- disable|enable <email> | role <email> admin|user | plan <email> free|pro|enterprise | plans';

const commands: Record<string, { valid: boolean; run(services: OperatorServices): Promise<string> }> = {
  disable: { valid: Boolean(email), run: async (s) => describe(await s.accounts.setDisabled(email!, true)) },
  enable: { valid: Boolean(email), run: async (s) => describe(await s.accounts.setDisabled(email!, false)) },
  role: { valid: Boolean(email) && (value === 'admin' || value === 'user'), run: async (s) => describe(await s.accounts.setRole(email!, value as 'admin' | 'user')) },
  plan: { valid: Boolean(email) && isTierName(value), run: async (s) => describe(await s.plans.setPlanByEmail(email!, value as 'free')) },
  plans: { valid: true, run: async (s) => (await s.plans.listPaid()).map(describe).join('\n') || 'every account is on the free plan' },
};

function describe(user: UserRecord): string {
  const state = user.disabledAt ? `disabled at ${user.disabledAt.toISOString()}` : 'enabled';
  return `${user.email}: ${state}, role ${user.role}, plan ${user.plan}`;
}

const chosen = commands[command ?? ''];
if (!chosen?.valid) {
  console.error(usage);
  process.exit(2);
}
try {
  // Opens the store, changes one account (or reads the list), closes: no server is started.
  const config = loadConfig(process.env);
  console.log(await runOperatorCommand(config, createLogger('warn'), chosen.run));
  // Running servers cache accounts briefly; only a shared Redis tells them of the change at once.
  if (command !== 'plans' && !config.redisUrl) console.log('Running servers see this within 5 seconds (at once when they share REDIS_URL).');
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : `failed: ${(error as Error).message}`);
  process.exit(1);
}
