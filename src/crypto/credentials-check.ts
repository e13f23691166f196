import { CredentialError, decryptSecret, encryptSecret } from './credentials.js';

const checkName = 'credentials_key_check';
const checkText = 'quarry credentials key check';

export interface SettingStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
}

/**
 * Proves at start that CREDENTIALS_KEY is the key that encrypted the stored database passwords: the first start
 * stores a check value encrypted with it; every later start must decrypt it, or the start stops with a clear
 * message instead of failing later, connection by connection.
 */
export async function verifyCredentialsKey(settings: SettingStore, key: Buffer): Promise<void> {
  const stored = await settings.get(checkName);
  if (stored === null) {
    await settings.set(checkName, encryptSecret(checkText, key, checkName));
    return;
  }
  try {
    if (decryptSecret(stored, key, checkName) === checkText) return;
  } catch (error) {
    if (!(error instanceof CredentialError)) throw error;
  }
  throw new Error(
    'CREDENTIALS_KEY does not match the key that encrypted the stored database passwords. Start with the original key ' +
      '(or restore DATA_DIR/secrets.json); a new key cannot decrypt existing connections.',
  );
}
