/**
 * Operator commands on accounts, run against the configured store (same environment as the server):
 *   npm run user -- disable <email>   end the user's sessions; their JWTs and API keys answer 401 ACCOUNT_DISABLED
 *   npm run user -- enable <email>    allow the user to log in again
 * Admin rights come from ADMIN_EMAILS, not from this command.
 */
import { ConfigError, loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/lib/logger.js';
import { startServer } from '../src/server.js';

const [command, email] = process.argv.slice(2);
if (!['disable', 'enable'].includes(command ?? '') || !email) {
  console.error('usage: npm run user -- disable|enable <email>');
  process.exit(2);
}
try {
  // Port 0 on loopback: the command briefly runs the real service stack (migrations, services), then stops it.
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' });
  const server = await startServer(config, createLogger('warn'));
  try {
    const user = await server.services.accounts.setDisabled(email, command === 'disable');
    console.log(`${user.email}: ${user.disabledAt ? `disabled at ${user.disabledAt.toISOString()}` : 'enabled'}`);
  } finally {
    await server.stop();
  }
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : `failed: ${(error as Error).message}`);
  process.exit(1);
}
