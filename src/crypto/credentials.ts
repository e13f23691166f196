/**
 * Database passwords at rest (createDatabase: "The password is stored encrypted (AES-256-GCM)"). Authenticated
 * encryption: a wrong key or a changed byte fails loudly instead of yielding garbage. Output is versioned,
 * `v1:<iv>:<tag>:<ciphertext>` in base64url, so the scheme can change without guessing what a stored value is.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type CredentialErrorCode = 'CREDENTIAL_KEY_INVALID' | 'CREDENTIAL_DECRYPT_FAILED' | 'CREDENTIAL_FORMAT_INVALID';

export class CredentialError extends Error {
  override readonly name = 'CredentialError';

  constructor(
    readonly code: CredentialErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The 32-byte key from its base64 (or base64url) text, e.g. a configuration value.
 * Throws CREDENTIAL_KEY_INVALID naming what is wrong, never echoing the value.
 */
export function parseKey(encoded: string): Buffer {
  const text = encoded.trim();
  if (!text) throw new CredentialError('CREDENTIAL_KEY_INVALID', 'The encryption key is empty; expected 32 bytes in base64.');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new CredentialError('CREDENTIAL_KEY_INVALID', 'The encryption key is not base64; expected 32 bytes in base64.');
  }
  const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new CredentialError(
      'CREDENTIAL_KEY_INVALID',
      `The encryption key decodes to ${key.length} bytes; AES-256-GCM needs exactly ${KEY_BYTES} ` +
        '(make one with `openssl rand -base64 32`).',
    );
  }
  return key;
}

/** A fresh random key, base64 encoded (for a generated default configuration). */
export function generateKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new CredentialError('CREDENTIAL_KEY_INVALID', `The encryption key must be ${KEY_BYTES} bytes.`);
  }
}

/**
 * Encrypts `plain` with a random 12-byte IV. `context` (e.g. the connection id) is bound as associated data: the
 * blob then decrypts only with the same context, so a stored password cannot be copied onto another record.
 */
export function encryptSecret(plain: string, key: Buffer, context = ''): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(`${VERSION}:${context}`, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join(':');
}

/** Decrypts a blob of encryptSecret. Throws CREDENTIAL_DECRYPT_FAILED for a wrong key, context or tampered blob. */
export function decryptSecret(blob: string, key: Buffer, context = ''): string {
  assertKey(key);
  const parts = blob.split(':');
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw new CredentialError('CREDENTIAL_FORMAT_INVALID', `Not an encrypted secret of version ${VERSION}.`);
  }
  const [, ivText = '', tagText = '', dataText = ''] = parts;
  const b64url = /^[A-Za-z0-9_-]*$/;
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (![ivText, tagText, dataText].every((p) => b64url.test(p)) || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new CredentialError('CREDENTIAL_FORMAT_INVALID', 'The encrypted secret is malformed.');
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(`${VERSION}:${context}`, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new CredentialError(
      'CREDENTIAL_DECRYPT_FAILED',
      'The secret could not be decrypted: the encryption key is not the one it was stored with, or the data was altered.',
    );
  }
}
