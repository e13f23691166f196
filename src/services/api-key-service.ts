import type { components } from '../../generated/openapi.js';
import { AppError, notFound } from '../errors/app-error.js';
import { newId } from '../lib/ids.js';
import { InitialKeyExistsError, type ApiKeyRecord, type ApiKeyRepository } from '../repositories/api-key-repository.js';
import type { UserRepository } from '../repositories/user-repository.js';
import { hashSecret, keyPrefix, looksLikeApiKey, mintSecret, parseSecret, secretMatches } from './api-key-secrets.js';
import type { KeyCaller, UserCaller } from './callers.js';
import { KeyCache } from './key-cache.js';
import { isAbovePlan, planOfUser, type PlanService } from './plan-service.js';

type ApiKey = components['schemas']['ApiKey'];
type NewApiKeyView = components['schemas']['NewApiKey'];
type CreatedKey = components['schemas']['CreatedKey'];
type Permission = components['schemas']['Permission'];
type CreateKeyRequest = components['schemas']['CreateKeyRequest'];
type UpdateKeyRequest = components['schemas']['UpdateKeyRequest'];

const warning = 'Store this secret key now. It is shown only once and cannot be retrieved again.';

export interface ApiKeyDeps {
  keys: ApiKeyRepository;
  users: UserRepository;
  pepper: string;
  cache: KeyCache;
  /** A key's tier may be at most its account's plan. */
  plans: Pick<PlanService, 'assertTierAllowed'>;
  now?: () => Date;
}

/** `admin` implies every permission (spec: Permission scopes). */
export function hasPermission(key: Pick<ApiKeyRecord, 'permissions'>, needed: Permission): boolean {
  return key.permissions.includes(needed) || key.permissions.includes('admin');
}

export function toApiKey(key: ApiKeyRecord): ApiKey {
  return {
    id: key.id,
    name: key.name,
    keyPrefix: keyPrefix(key.environment, key.publicId),
    environment: key.environment,
    permissions: key.permissions,
    rateLimitTier: key.tier,
    isActive: !key.revokedAt,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsed: key.lastUsedAt?.toISOString() ?? null,
    usageCount: key.usageCount,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
    updatedAt: key.updatedAt.toISOString(),
  };
}

function toNewApiKey(key: ApiKeyRecord): NewApiKeyView {
  const { lastUsed: _l, usageCount: _u, revokedAt: _r, updatedAt: _up, ...view } = toApiKey(key);
  return view;
}

function invalidExpiry(message: string): AppError {
  return new AppError('VALIDATION_ERROR', `The request is invalid: body/expiresAt ${message}.`, {
    errors: [{ location: 'body', path: '/expiresAt', message }],
  });
}

/** Parses `expiresAt`: a day means the end of that day (UTC); the moment must lie in the future. */
export function parseExpiry(value: string | null | undefined, now: Date): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const at = new Date(day ? `${value}T23:59:59.999Z` : value);
  if (Number.isNaN(at.getTime()) || (day && at.toISOString().slice(0, 10) !== value)) {
    throw invalidExpiry('must be a date (YYYY-MM-DD) or an ISO 8601 date-time');
  }
  if (at.getTime() <= now.getTime()) throw invalidExpiry('must be in the future');
  return at;
}

/** API key lifecycle (spec: API key management, States) and key authentication. */
export class ApiKeyService {
  private readonly now: () => Date;

  constructor(private readonly deps: ApiKeyDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** setupInitialKey: the user's first key, with the spec example's defaults. */
  async setupInitialKey(caller: UserCaller, name = 'Initial key'): Promise<CreatedKey> {
    const conflict = () =>
      new AppError('SETUP_ALREADY_COMPLETED', 'Setup was already completed. Create further keys with POST /api/v1/keys.');
    if ((await this.deps.keys.countOwned(caller.user.id)) > 0) throw conflict();
    try {
      return await this.mint(caller.user.id, {
        name, environment: 'test', permissions: ['search', 'analytics'], rateLimitTier: 'free', expiresAt: null,
      }, caller.user.id);
    } catch (error) {
      if (error instanceof InitialKeyExistsError) throw conflict();
      throw error;
    }
  }

  /** createApiKey: a tier above the account's plan is 403 TIER_ABOVE_PLAN. */
  async create(caller: UserCaller, input: CreateKeyRequest): Promise<CreatedKey> {
    await this.deps.plans.assertTierAllowed(caller.user.id, input.rateLimitTier ?? 'free');
    return this.mint(caller.user.id, {
      name: input.name.trim() || 'Unnamed key',
      environment: input.environment ?? 'test',
      permissions: input.permissions ?? ['search'],
      rateLimitTier: input.rateLimitTier ?? 'free',
      expiresAt: input.expiresAt ?? null,
    });
  }

  /** listApiKeys */
  async list(caller: UserCaller): Promise<{ apiKeys: ApiKey[]; total: number }> {
    const keys = await this.deps.keys.listOwned(caller.user.id);
    return { apiKeys: keys.map(toApiKey), total: keys.length };
  }

  /** updateApiKey: a tier above the account's plan is 403 TIER_ABOVE_PLAN. */
  async update(caller: UserCaller, keyId: string, input: UpdateKeyRequest): Promise<{ apiKey: ApiKey }> {
    const key = await this.owned(caller, keyId);
    if (key.revokedAt) throw new AppError('CONFLICT', 'This key is revoked and can no longer be changed.', { keyId });
    if (input.rateLimitTier !== undefined) await this.deps.plans.assertTierAllowed(caller.user.id, input.rateLimitTier);
    const updated = await this.deps.keys.update(key.id, {
      ...(input.name !== undefined && { name: input.name.trim() || key.name }),
      ...(input.rateLimitTier !== undefined && { tier: input.rateLimitTier }),
      ...(input.permissions !== undefined && { permissions: input.permissions }),
      ...(input.expiresAt !== undefined && { expiresAt: parseExpiry(input.expiresAt, this.now()) ?? null }),
    });
    this.deps.cache.keyChanged(key.publicId);
    return { apiKey: toApiKey(updated!) };
  }

  /** revokeApiKey: permanent; revoking again answers with the original revocation time. */
  async revoke(caller: UserCaller, keyId: string): Promise<{ keyId: string; message: string; revokedAt: string }> {
    const key = await this.owned(caller, keyId);
    const revoked = key.revokedAt ? key : (await this.deps.keys.update(key.id, { revokedAt: this.now() }))!;
    this.deps.cache.keyChanged(key.publicId);
    return { keyId: key.id, message: 'API key revoked. It can no longer be used.', revokedAt: revoked.revokedAt!.toISOString() };
  }

  /** regenerateApiKey: a new key (new id) with the same settings; the old one is revoked in the same transaction. */
  async regenerate(caller: UserCaller, keyId: string): Promise<CreatedKey & { oldKeyId: string }> {
    const key = await this.owned(caller, keyId);
    if (key.revokedAt) throw new AppError('CONFLICT', 'This key is revoked; create a new key instead.', { keyId });
    const { secret, publicId } = mintSecret(key.environment);
    const created = await this.deps.keys.replace(key.id, {
      id: newId('key'),
      userId: key.userId,
      name: key.name,
      publicId,
      secretHash: hashSecret(secret, this.deps.pepper),
      environment: key.environment,
      permissions: key.permissions,
      tier: key.tier,
      customLimits: key.customLimits,
      expiresAt: key.expiresAt,
    }, this.now());
    this.deps.cache.keyChanged(key.publicId);
    return { apiKey: toNewApiKey(created), secretKey: secret, warning, oldKeyId: key.id };
  }

  /** The owner's key or the same 404 as an unknown id, so other users' keys are invisible. */
  async owned(caller: UserCaller, keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.keys.findOwned(caller.user.id, keyId);
    if (!key) throw notFound('API key', keyId);
    return key;
  }

  /** Verifies an API key secret for the apiKey security scheme; each failure has its own code. */
  async authenticate(token: string): Promise<KeyCaller> {
    if (!looksLikeApiKey(token)) {
      throw new AppError('INVALID_API_KEY', 'This operation needs an API key (quarry_sk_...), not a JWT or other token.');
    }
    const parsed = parseSecret(token);
    if (!parsed) {
      throw new AppError('MALFORMED_API_KEY', 'The API key is malformed: expected quarry_sk_<live|test>_ followed by 52 letters and digits.');
    }
    const readAt = this.deps.cache.clock();
    const cached = this.deps.cache.get(parsed.publicId);
    const key = cached?.key ?? (await this.deps.keys.findByPublicId(parsed.publicId));
    const verified = cached !== null && KeyCache.isVerified(cached, token);
    if (!key || key.environment !== parsed.environment || !(verified || secretMatches(token, key.secretHash, this.deps.pepper))) {
      throw new AppError('INVALID_API_KEY', 'The API key is not valid.');
    }
    // Built only for a refusal: most requests pass.
    const prefix = () => ({ keyPrefix: keyPrefix(key.environment, key.publicId) });
    if (key.revokedAt) throw new AppError('KEY_REVOKED', 'This API key was revoked and can no longer be used.', prefix());
    if (key.expiresAt && key.expiresAt.getTime() <= this.now().getTime()) {
      throw new AppError('KEY_EXPIRED', `This API key expired at ${key.expiresAt.toISOString()}.`, prefix());
    }
    const user = cached?.user ?? (await this.deps.users.findById(key.userId));
    if (!user || user.disabledAt) throw new AppError('ACCOUNT_DISABLED', "The key's account is disabled.", prefix());
    if (cached) return { kind: 'key', key, user };
    // A key made before its account's plan was lowered (or before plans existed) acts at the plan's tier.
    const effective = isAbovePlan(key.tier, planOfUser(user)) ? { ...key, tier: planOfUser(user) } : key;
    this.deps.cache.set(parsed.publicId, effective, user, readAt, token);
    return { kind: 'key', key: effective, user };
  }

  private async mint(
    userId: string,
    input: { name: string; environment: 'live' | 'test'; permissions: Permission[]; rateLimitTier: ApiKeyRecord['tier']; expiresAt: string | null },
    initialForUser?: string,
  ): Promise<CreatedKey> {
    const { secret, publicId } = mintSecret(input.environment);
    const key = await this.deps.keys.create({
      id: newId('key'),
      userId,
      name: input.name,
      publicId,
      secretHash: hashSecret(secret, this.deps.pepper),
      environment: input.environment,
      permissions: [...new Set(input.permissions)],
      tier: input.rateLimitTier,
      customLimits: null,
      expiresAt: parseExpiry(input.expiresAt, this.now()) ?? null,
      initialForUser: initialForUser ?? null,
    });
    return { apiKey: toNewApiKey(key), secretKey: secret, warning };
  }
}
