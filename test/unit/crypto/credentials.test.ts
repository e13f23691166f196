import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CredentialError, decryptSecret, encryptSecret, generateKey, parseKey } from '../../../src/crypto/credentials.js';

const key = randomBytes(32);

function flip(blob: string, part: number): string {
  const parts = blob.split(':');
  const bytes = Buffer.from(parts[part] as string, 'base64url');
  bytes[0] = (bytes[0] as number) ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join(':');
}

describe('encryptSecret / decryptSecret', () => {
  it('when a secret is encrypted and decrypted with the same key, then it round-trips, unicode and empty included', () => {
    for (const secret of ['s3cret-reader', '', 'pässwörd 🔑 with : colons', 'x'.repeat(1024)]) {
      expect(decryptSecret(encryptSecret(secret, key), key)).toBe(secret);
    }
  });

  it('when the output is inspected, then it is v1:<iv>:<tag>:<ciphertext> in base64url and hides the secret', () => {
    const blob = encryptSecret('s3cret-reader', key);
    expect(blob).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(blob).not.toContain('s3cret');
  });

  it('when the same secret is encrypted twice, then the IVs and ciphertexts differ', () => {
    const a = encryptSecret('same', key);
    const b = encryptSecret('same', key);
    expect(a.split(':')[1]).not.toBe(b.split(':')[1]);
    expect(a).not.toBe(b);
  });

  it('when decrypted with another key, then a clear CredentialError is thrown', () => {
    const blob = encryptSecret('s3cret', key);
    expect(() => decryptSecret(blob, randomBytes(32))).toThrow(CredentialError);
    expect(() => decryptSecret(blob, randomBytes(32))).toThrow(/key is not the one it was stored with/);
  });

  it.each([[1], [2], [3]])('when part %i of the blob is altered, then decryption fails', (part) => {
    const blob = encryptSecret('s3cret', key);
    expect(() => decryptSecret(flip(blob, part), key)).toThrow(CredentialError);
  });

  it('when a context was bound, then the blob decrypts only with the same context', () => {
    const blob = encryptSecret('s3cret', key, 'db_1');
    expect(decryptSecret(blob, key, 'db_1')).toBe('s3cret');
    expect(() => decryptSecret(blob, key, 'db_2')).toThrow(expect.objectContaining({ code: 'CREDENTIAL_DECRYPT_FAILED' }));
  });

  it('when the blob is not of this format, then CREDENTIAL_FORMAT_INVALID is thrown', () => {
    for (const blob of ['plaintext', 'v2:a:b:c', 'v1:short:tag:data', 'v1:a:b']) {
      expect(() => decryptSecret(blob, key)).toThrow(expect.objectContaining({ code: 'CREDENTIAL_FORMAT_INVALID' }));
    }
  });

  it('when the key is not 32 bytes, then encryption refuses it', () => {
    expect(() => encryptSecret('x', randomBytes(16))).toThrow(expect.objectContaining({ code: 'CREDENTIAL_KEY_INVALID' }));
  });
});

describe('parseKey', () => {
  it('when given 32 bytes in base64 or base64url, then the key is returned', () => {
    const bytes = randomBytes(32);
    expect(parseKey(bytes.toString('base64')).equals(bytes)).toBe(true);
    expect(parseKey(bytes.toString('base64url')).equals(bytes)).toBe(true);
    expect(parseKey(`  ${bytes.toString('base64')}\n`).equals(bytes)).toBe(true);
    expect(parseKey(generateKey())).toHaveLength(32);
  });

  it('when the text decodes to another length, then the error says how many bytes and how to make a key', () => {
    expect(() => parseKey(randomBytes(16).toString('base64'))).toThrow(/16 bytes.*exactly 32/);
  });

  it('when the text is empty or not base64, then a clear error is thrown without echoing it', () => {
    expect(() => parseKey('')).toThrow(/empty/);
    const notBase64 = 'this is not base64 at all!!';
    expect(() => parseKey(notBase64)).toThrow(/not base64/);
    try {
      parseKey(notBase64);
    } catch (err) {
      expect((err as Error).message).not.toContain(notBase64);
    }
  });
});
