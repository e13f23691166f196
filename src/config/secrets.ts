import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GeneratedSecrets {
  jwtSecret: string;
  apiKeyPepper: string;
  credentialsKey: string;
}

/**
 * Secrets for the zero-set-up default: generated once and kept in DATA_DIR/secrets.json (mode 0600), so
 * tokens, key hashes and encrypted passwords stay valid across restarts.
 */
export function loadOrCreateSecrets(dataDir: string): GeneratedSecrets {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<GeneratedSecrets>;
    if (!parsed.jwtSecret || !parsed.apiKeyPepper || !parsed.credentialsKey) {
      throw new Error(`${file} is incomplete: restore it from a backup, or delete it only if no data must be kept.`);
    }
    return parsed as GeneratedSecrets;
  }
  mkdirSync(dataDir, { recursive: true });
  const secrets: GeneratedSecrets = {
    jwtSecret: randomBytes(48).toString('base64url'),
    apiKeyPepper: randomBytes(48).toString('base64url'),
    credentialsKey: randomBytes(32).toString('base64'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  return secrets;
}
