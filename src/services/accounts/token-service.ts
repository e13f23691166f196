import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
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

/** Signs and verifies Quarry's JWTs: HS256 only, issuer and audience pinned, expiry enforced. */
export class TokenService {
  /** The secret as an HMAC-SHA-256 CryptoKey, imported once (given raw bytes, jose imports them on every call). */
  private readonly key: Promise<CryptoKey>;

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

  verifyAccess(token: string): Promise<TokenClaims> {
    return this.verify(token, 'access');
  }

  verifyRefresh(token: string): Promise<TokenClaims> {
    return this.verify(token, 'refresh');
  }

  private async verify(token: string, expectedType: 'access' | 'refresh'): Promise<TokenClaims> {
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
      return { userId: payload.sub, sessionId: payload.sid, jti: payload.jti };
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
