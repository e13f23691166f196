import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from '../../errors/app-error.js';
import type { Config } from '../../config/config.js';

export interface TokenClaims {
  userId: string;
  sessionId: string;
  /** Refresh tokens only: the single-use token id. */
  jti?: string;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/** How many verified access tokens a process remembers (a few hundred bytes each). */
const VERIFIED_TOKENS_MAX = 10_000;

/** Signs and verifies Quarry's JWTs: HS256 only, issuer and audience pinned, expiry enforced. */
export class TokenService {
  /** The secret as an HMAC-SHA-256 CryptoKey, imported once (given raw bytes, jose imports them on every call). */
  private readonly key: Promise<CryptoKey>;

  /**
   * Access tokens whose signature and claims were verified, each kept until its own expiry (lru-cache: the least
   * recently used leaves first beyond `VERIFIED_TOKENS_MAX`). A client sends the same access token on every request
   * until it expires, and the token cannot change under its signature, so verifying it again proves nothing new: a CPU
   * profile of GET /auth/profile under load spent 14 % of the server's time in jose's WebCrypto HMAC verify. Only the
   * signature's proof is kept; the session and the user are still checked on every request (AccountsService), so a
   * logout or a disabled account ends the token at once, as before.
   */
  private readonly verifiedAccess = new LRUCache<string, TokenClaims>({
    max: VERIFIED_TOKENS_MAX,
    // Each entry's own ttl (its token's expiry), checked against the clock at every read, as jose checks `exp`.
    ttlResolution: 0,
    perf: { now: () => Date.now() },
  });

  constructor(private readonly jwt: Config['jwt']) {
    this.key = crypto.subtle.importKey('raw', new TextEncoder().encode(jwt.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  }

  newRefreshId(): string {
    return randomBytes(18).toString('base64url');
  }

  async issue(userId: string, sessionId: string, refreshJti: string, sessionExpiresAt: Date): Promise<TokenPair> {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const sessionEnd = Math.floor(sessionExpiresAt.getTime() / 1000);
    const accessExp = Math.min(nowSeconds + this.jwt.accessTtl, sessionEnd);
    const refreshExp = Math.min(nowSeconds + this.jwt.refreshTtl, sessionEnd);
    const key = await this.key;
    const sign = (typ: string, exp: number, jti?: string) => {
      const jwt = new SignJWT({ typ, sid: sessionId })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(userId)
        .setIssuer(this.jwt.issuer)
        .setAudience(this.jwt.audience)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(exp);
      if (jti) jwt.setJti(jti);
      return jwt.sign(key);
    };
    return {
      accessToken: await sign('access', accessExp),
      refreshToken: await sign('refresh', refreshExp, refreshJti),
      expiresIn: accessExp - nowSeconds,
    };
  }

  async verifyAccess(token: string): Promise<TokenClaims> {
    const known = this.verifiedAccess.get(token);
    if (known) return known;
    const { claims, exp } = await this.verify(token, 'access');
    // jose's own rule: a token is expired from the second its `exp` names; from then on the full check answers (expired).
    // lru-cache still answers at an entry's last millisecond (stale only past its ttl), hence the 1 ms less.
    // A ttl of 0 would mean no expiry to lru-cache: a token in its last millisecond is not kept at all.
    const ttl = exp * 1000 - Date.now() - 1;
    if (ttl > 0) this.verifiedAccess.set(token, claims, { ttl });
    return claims;
  }

  async verifyRefresh(token: string): Promise<TokenClaims> {
    return (await this.verify(token, 'refresh')).claims;
  }

  private async verify(token: string, expectedType: 'access' | 'refresh'): Promise<{ claims: TokenClaims; exp: number }> {
    try {
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'],
        issuer: this.jwt.issuer,
        audience: this.jwt.audience,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (payload.typ !== expectedType || typeof payload.sid !== 'string' || !payload.sub) {
        throw new AppError('INVALID_TOKEN', `This is not a valid ${expectedType} token.`);
      }
      // requiredClaims makes jose refuse a token without a numeric `exp`.
      return { claims: { userId: payload.sub, sessionId: payload.sid, jti: payload.jti }, exp: payload.exp! };
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (error instanceof joseErrors.JWTExpired) {
        throw new AppError('TOKEN_EXPIRED', expectedType === 'access'
          ? 'The access token has expired. Get a new one at POST /api/v1/auth/refresh.'
          : 'The refresh token has expired. Log in again.');
      }
      throw new AppError('INVALID_TOKEN', `This is not a valid ${expectedType} token.`);
    }
  }
}
