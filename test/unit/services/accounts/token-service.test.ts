import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenService } from '../../../../src/services/accounts/token-service.js';

const jwt = { secret: 'a-test-secret-of-enough-length-0123456789', issuer: 'quarry', audience: 'quarry-api', accessTtl: 60, refreshTtl: 600, sessionMaxAge: 3600 };
const sessionEnd = () => new Date(Date.now() + 3_600_000);

/** How many HMAC verifications WebCrypto (which jose verifies HS256 with) runs while `run` runs. */
async function verificationsDuring(run: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(crypto.subtle, 'verify');
  try {
    await run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('TokenService: verified access tokens', () => {
  it('when an access token was verified, then the same token is answered again without verifying its signature', async () => {
    const tokens = new TokenService(jwt);
    const { accessToken } = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    expect(await verificationsDuring(() => tokens.verifyAccess(accessToken))).toBe(1);
    let again: unknown;
    expect(await verificationsDuring(async () => { again = await tokens.verifyAccess(accessToken); })).toBe(0);
    expect(again).toEqual({ userId: 'usr_1', sessionId: 'ses_1', jti: undefined });
  });

  it('when a remembered token reaches its expiry, then it is refused as expired, not answered from memory', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-29T10:00:00Z'), toFake: ['Date'] });
    const tokens = new TokenService(jwt);
    const { accessToken } = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    await tokens.verifyAccess(accessToken);
    vi.setSystemTime(new Date('2026-11-29T10:00:59.999Z'));
    await expect(tokens.verifyAccess(accessToken)).resolves.toMatchObject({ userId: 'usr_1' });
    vi.setSystemTime(new Date('2026-11-29T10:01:00Z'));
    await expect(tokens.verifyAccess(accessToken)).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
  });

  it('when a remembered token is altered by one character, then the altered one is verified and refused', async () => {
    const tokens = new TokenService(jwt);
    const { accessToken } = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    await tokens.verifyAccess(accessToken);
    const [header, claims, signature] = accessToken.split('.') as [string, string, string];
    // Alter the signature's first character: its last one carries 2 padding bits that base64url decoding drops, so
    // changing it alone leaves the same signature bytes 1 time in 16.
    const first = signature.startsWith('A') ? 'B' : 'A';
    await expect(tokens.verifyAccess(`${header}.${claims}.${first}${signature.slice(1)}`)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const otherClaims = Buffer.from(JSON.stringify({ typ: 'access', sid: 'ses_2', sub: 'usr_2', iss: 'quarry', aud: 'quarry-api', iat: 1, exp: 9_999_999_999 })).toString('base64url');
    await expect(tokens.verifyAccess(`${header}.${otherClaims}.${signature}`)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('when tokens of the other type are used, then each check still refuses them, remembered or not', async () => {
    const tokens = new TokenService(jwt);
    const { accessToken, refreshToken } = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    await tokens.verifyAccess(accessToken);
    await expect(tokens.verifyRefresh(accessToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(tokens.verifyAccess(refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(tokens.verifyAccess(refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(tokens.verifyRefresh(refreshToken)).resolves.toEqual({ userId: 'usr_1', sessionId: 'ses_1', jti: 'jti_1' });
  });

  it('when a token is signed with another secret, then it is refused even after a genuine one was remembered', async () => {
    const tokens = new TokenService(jwt);
    const forger = new TokenService({ ...jwt, secret: 'another-secret-of-enough-length-9876543210' });
    const genuine = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    await tokens.verifyAccess(genuine.accessToken);
    const forged = await forger.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    await expect(tokens.verifyAccess(forged.accessToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});

describe('TokenService: a token verified in its last millisecond', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('when verified one millisecond before its expiry, then it is not kept, and refused from its expiry on', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-29T10:00:00Z'), toFake: ['Date'] });
    const tokens = new TokenService(jwt);
    const { accessToken } = await tokens.issue('usr_1', 'ses_1', 'jti_1', sessionEnd());
    vi.setSystemTime(new Date('2026-11-29T10:00:59.999Z'));
    await expect(tokens.verifyAccess(accessToken)).resolves.toMatchObject({ userId: 'usr_1' });
    vi.setSystemTime(new Date('2026-11-29T10:01:00Z'));
    await expect(tokens.verifyAccess(accessToken)).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
    vi.setSystemTime(new Date('2026-11-29T11:00:00Z'));
    await expect(tokens.verifyAccess(accessToken)).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
  });
});
