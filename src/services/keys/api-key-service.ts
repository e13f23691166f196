import type { components } from '../../../generated/openapi.js';
import { AppError, notFound, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import { InitialKeyExistsError, type ApiKeyRecord, type ApiKeyRepository, type NewApiKey } from '../../repositories/api-key-repository.js';
import type { DatabaseConnectionRepository } from '../../repositories/database-connection-repository.js';
import type { UserRecord, UserRepository } from '../../repositories/user-repository.js';
import { hashSecret, keyPrefix, looksLikeApiKey, mintSecret, parseSecret, sameSecret, secretMatches, type KeyKind } from './api-key-secrets.js';
import type { KeyCaller, UserCaller } from '../callers.js';
import { KeyCache } from './key-cache.js';
import { PUBLISHABLE_PERMISSIONS, publishableRestrictions } from './publishable-keys.js';
import { requestsPerIp } from '../../rules/key-scope.js';
import { isAbovePlan, planOfUser } from '../../rules/plans.js';
import type { PlanService } from '../accounts/plan-service.js';

type ApiKey = components['schemas']['ApiKey'];
type NewApiKeyView = components['schemas']['NewApiKey'];
type CreatedKey = components['schemas']['CreatedKey'];
type Permission = components['schemas']['Permission'];
type CreateKeyRequest = components['schemas']['CreateKeyRequest'];
type CreatePublishableKeyRequest = components['schemas']['CreatePublishableKeyRequest'];
type CreatedPublishableKey = components['schemas']['CreatedPublishableKey'];
type UpdateKeyRequest = components['schemas']['UpdateKeyRequest'];
type Regenerated = components['schemas']['RegeneratedKeyResponse']['data'];
type Tier = ApiKeyRecord['tier'];

const warning = 'Store this secret key now. It is shown only once and cannot be retrieved again.';
const publishableNotice = 'This publishable key is public by design: put it in your pages. It can only search its databases, from its allowed origins.';

export interface ApiKeyDeps {
  keys: ApiKeyRepository;
  users: UserRepository;
  /** Publishable keys name the caller's connections they may search. */
  connections: Pick<DatabaseConnectionRepository, 'findOwned'>;
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

/** A publishable key's value and restrictions, as listed; nothing for a secret key. */
function publishableView(key: ApiKeyRecord): Partial<ApiKey> {
  if (key.kind !== 'publishable') return {};
  return {
    publishableKey: key.publishableKey!,
    allowedOrigins: key.allowedOrigins ?? [],
    databases: key.databaseIds ?? [],
    tables: key.tableNames ?? [],
    requestsPerIpPerHour: requestsPerIp(key),
  };
}

/**
 * The tier a key acts at: its own, but never above its account's plan. A key made before the plan was lowered keeps
 * its stored tier (it returns to it if the plan is raised again) and is shown, and acts, at the plan's.
 */
export function effectiveTier(tier: Tier, plan: Tier): Tier {
  return isAbovePlan(tier, plan) ? plan : tier;
}

/** A key as the API shows it; its tier is the one it acts at under the account's current `plan`. */
export function toApiKey(key: ApiKeyRecord, plan: Tier): ApiKey {
  return {
    id: key.id,
    name: key.name,
    type: key.kind,
    keyPrefix: keyPrefix(key.environment, key.publicId, key.kind),
    environment: key.environment,
    permissions: key.permissions,
    rateLimitTier: effectiveTier(key.tier, plan),
    isActive: !key.revokedAt,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsed: key.lastUsedAt?.toISOString() ?? null,
    usageCount: key.usageCount,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
    updatedAt: key.updatedAt.toISOString(),
    ...publishableView(key),
  };
}

function toNewApiKey(key: ApiKeyRecord, plan: Tier): NewApiKeyView {
  const { lastUsed: _l, usageCount: _u, revokedAt: _r, updatedAt: _up, ...view } = toApiKey(key, plan);
  return view;
}

function invalidField(path: string, message: string): AppError {
  return validationError([{ location: 'body', path, message }]);
}

const invalidExpiry = (message: string) => invalidField('/expiresAt', message);

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
      return await this.mintSecretKey(caller, {
        name, environment: 'test', permissions: ['search', 'analytics'], tier: 'free', expiresAt: null,
      }, caller.user.id);
    } catch (error) {
      if (error instanceof InitialKeyExistsError) throw conflict();
      throw error;
    }
  }

  /** createApiKey: a tier above the account's plan is 403 TIER_ABOVE_PLAN. */
  async create(caller: UserCaller, input: CreateKeyRequest): Promise<CreatedKey> {
    return this.mintSecretKey(caller, {
      name: input.name.trim() || 'Unnamed key',
      environment: input.environment ?? 'test',
      permissions: input.permissions ?? ['search'],
      tier: await this.grantedTier(caller, input.rateLimitTier),
      expiresAt: input.expiresAt ?? null,
    });
  }

  /** createPublishableKey: a search-only key for web pages, restricted to databases, tables and origins. */
  async createPublishable(caller: UserCaller, input: CreatePublishableKeyRequest): Promise<CreatedPublishableKey> {
    const environment = input.environment ?? 'test';
    const restrictions = await publishableRestrictions(input, environment, (id) => this.deps.connections.findOwned(caller.user.id, id));
    const { key, value } = await this.mint('publishable', {
      userId: caller.user.id,
      name: input.name.trim() || 'Unnamed key',
      environment,
      permissions: PUBLISHABLE_PERMISSIONS,
      tier: await this.grantedTier(caller, input.rateLimitTier),
      customLimits: null,
      expiresAt: parseExpiry(input.expiresAt, this.now()) ?? null,
      ...restrictions,
    });
    return { apiKey: toNewApiKey(key, planOfUser(caller.user)), publishableKey: value };
  }

  /** listApiKeys */
  async list(caller: UserCaller): Promise<{ apiKeys: ApiKey[]; total: number }> {
    const keys = await this.deps.keys.listOwned(caller.user.id);
    const plan = planOfUser(caller.user);
    return { apiKeys: keys.map((key) => toApiKey(key, plan)), total: keys.length };
  }

  /** updateApiKey: a tier above the account's plan is 403 TIER_ABOVE_PLAN. */
  async update(caller: UserCaller, keyId: string, input: UpdateKeyRequest): Promise<{ apiKey: ApiKey }> {
    const key = await this.owned(caller, keyId);
    if (key.revokedAt) throw new AppError('CONFLICT', 'This key is revoked and can no longer be changed.', { keyId });
    const { allowedOrigins, databases, tables, requestsPerIpPerHour, ...common } = input;
    const restricting = [allowedOrigins, databases, tables, requestsPerIpPerHour].some((value) => value !== undefined);
    if (key.kind !== 'publishable' && restricting) {
      throw invalidField('/allowedOrigins', 'and databases, tables and requestsPerIpPerHour belong to publishable keys; this is a secret key');
    }
    if (key.kind === 'publishable' && common.permissions?.some((p) => !PUBLISHABLE_PERMISSIONS.includes(p))) {
      throw invalidField('/permissions', 'of a publishable key can only be [search]');
    }
    const restrictions = key.kind === 'publishable'
      ? await publishableRestrictions({ allowedOrigins, databases, tables, requestsPerIpPerHour }, key.environment, (id) => this.deps.connections.findOwned(caller.user.id, id))
      : {};
    const updated = await this.deps.keys.update(key.id, {
      ...(common.name !== undefined && { name: common.name.trim() || key.name }),
      ...(common.rateLimitTier !== undefined && { tier: await this.grantedTier(caller, common.rateLimitTier) }),
      ...(common.permissions !== undefined && { permissions: common.permissions }),
      ...(common.expiresAt !== undefined && { expiresAt: parseExpiry(common.expiresAt, this.now()) ?? null }),
      ...restrictions,
    });
    this.deps.cache.keyChanged(key.publicId);
    return { apiKey: toApiKey(updated!, planOfUser(caller.user)) };
  }

  /** revokeApiKey: permanent; revoking again answers with the original revocation time. */
  async revoke(caller: UserCaller, keyId: string): Promise<{ keyId: string; message: string; revokedAt: string }> {
    const key = await this.owned(caller, keyId);
    const revoked = key.revokedAt ? key : (await this.deps.keys.update(key.id, { revokedAt: this.now() }))!;
    this.deps.cache.keyChanged(key.publicId);
    return { keyId: key.id, message: 'API key revoked. It can no longer be used.', revokedAt: revoked.revokedAt!.toISOString() };
  }

  /**
   * regenerateApiKey: a new key (new id) with the same settings; the old one is revoked in the same transaction. The
   * new key is a new grant, so its tier is at most the account's plan now (a key kept above a lowered plan is not
   * carried over above it).
   */
  async regenerate(caller: UserCaller, keyId: string): Promise<Regenerated> {
    const key = await this.owned(caller, keyId);
    const plan = planOfUser(caller.user);
    if (key.revokedAt) throw new AppError('CONFLICT', 'This key is revoked; create a new key instead.', { keyId });
    const { secret, publicId } = mintSecret(key.environment, key.kind);
    const created = await this.deps.keys.replace(key.id, {
      ...this.newKey(key.kind, secret, publicId),
      userId: key.userId,
      name: key.name,
      environment: key.environment,
      permissions: key.permissions,
      tier: effectiveTier(key.tier, plan),
      customLimits: key.customLimits,
      expiresAt: key.expiresAt,
      allowedOrigins: key.allowedOrigins,
      databaseIds: key.databaseIds,
      tableNames: key.tableNames,
      requestsPerIpPerHour: key.requestsPerIpPerHour,
    }, this.now());
    this.deps.cache.keyChanged(key.publicId);
    const value = key.kind === 'publishable' ? { publishableKey: secret, warning: publishableNotice } : { secretKey: secret, warning };
    return { apiKey: toNewApiKey(created, plan), ...value, oldKeyId: key.id };
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
      throw new AppError('INVALID_API_KEY', 'This operation needs an API key (quarry_sk_... or quarry_pk_...), not a JWT or other token.');
    }
    const parsed = parseSecret(token);
    if (!parsed) {
      throw new AppError('MALFORMED_API_KEY', 'The API key is malformed: expected quarry_sk_<live|test>_ or quarry_pk_<live|test>_ followed by 52 letters and digits.');
    }
    const readAt = this.deps.cache.clock();
    const cached = this.deps.cache.get(parsed.publicId);
    const found = cached ? { ...cached, remembered: false } : await this.lookup(parsed.publicId);
    const key = found.key;
    // A cached key compares the secret that matched its hash when it was read; any other key is hashed (an HMAC).
    const matches = (key: ApiKeyRecord) => (cached?.secret ? sameSecret(token, cached.secret) : secretMatches(token, key.secretHash, this.deps.pepper));
    if (!key || key.environment !== parsed.environment || key.kind !== parsed.kind || !matches(key)) {
      throw new AppError('INVALID_API_KEY', 'The API key is not valid.');
    }
    // Built only for a refusal: most requests pass.
    const prefix = () => ({ keyPrefix: keyPrefix(key.environment, key.publicId, key.kind) });
    // The store's own refusal also ends what the outage memory held of the key.
    const refuse = (error: AppError) => {
      if (!cached && !found.remembered) this.deps.cache.lastKnown.invalidate(`key:${parsed.publicId}`);
      return error;
    };
    if (key.revokedAt) throw refuse(new AppError('KEY_REVOKED', 'This API key was revoked and can no longer be used.', prefix()));
    if (key.expiresAt && key.expiresAt.getTime() <= this.now().getTime()) {
      throw refuse(new AppError('KEY_EXPIRED', `This API key expired at ${key.expiresAt.toISOString()}.`, prefix()));
    }
    const user = found.user;
    if (!user || user.disabledAt) throw refuse(new AppError('ACCOUNT_DISABLED', "The key's account is disabled.", prefix()));
    if (cached || found.remembered) return { kind: 'key', key, user };
    // A key made before its account's plan was lowered (or before plans existed) acts at the plan's tier.
    const tier = effectiveTier(key.tier, planOfUser(user));
    const effective = tier === key.tier ? key : { ...key, tier };
    this.deps.cache.set(parsed.publicId, effective, user, readAt, Buffer.from(token, 'utf8'));
    this.deps.cache.lastKnown.remember(parsed.publicId, { key: effective, user }, KeyCache.owners(parsed.publicId, user.id), readAt);
    return { kind: 'key', key: effective, user };
  }

  /**
   * The key and its owner as the store has them; while the store is down, as it verified them in the last
   * STORE_OUTAGE_GRACE_MS (`remembered`), so a key in use keeps working through a short outage. Never a key the store
   * did not verify: an unseen key still fails with the store's outage (503 STORE_UNAVAILABLE).
   */
  private async lookup(publicId: string): Promise<{ key: ApiKeyRecord | null; user: UserRecord | null; remembered: boolean }> {
    try {
      const key = await this.deps.keys.findByPublicId(publicId);
      return { key, user: key ? await this.deps.users.findById(key.userId) : null, remembered: false };
    } catch (error) {
      const known = this.deps.cache.lastKnown;
      const remembered = known.isOutage(error) ? known.recall(publicId) : undefined;
      if (!remembered) throw error;
      return { ...remembered, remembered: true };
    }
  }

  private async mintSecretKey(
    caller: UserCaller,
    input: { name: string; environment: 'live' | 'test'; permissions: Permission[]; tier: Tier; expiresAt: string | null },
    initialForUser?: string,
  ): Promise<CreatedKey> {
    const { key, value } = await this.mint('secret', {
      userId: caller.user.id,
      name: input.name,
      environment: input.environment,
      permissions: [...new Set(input.permissions)],
      tier: input.tier,
      customLimits: null,
      expiresAt: parseExpiry(input.expiresAt, this.now()) ?? null,
      initialForUser: initialForUser ?? null,
    });
    return { apiKey: toNewApiKey(key, planOfUser(caller.user)), secretKey: value, warning };
  }

  /** Stores a new key of `kind`; `value` is the key itself, to be shown to the caller. */
  /**
   * The tier a key gets when `requested` (absent: free): at most the account's plan, else 403 TIER_ABOVE_PLAN.
   * Every key, secret or publishable, created or updated, gets its tier here.
   */
  private async grantedTier(caller: UserCaller, requested: Tier | undefined): Promise<Tier> {
    const tier = requested ?? 'free';
    await this.deps.plans.assertTierAllowed(caller.user.id, tier);
    return tier;
  }

  private async mint(kind: KeyKind, settings: Omit<NewApiKey, 'id' | 'publicId' | 'secretHash' | 'kind' | 'publishableKey'>): Promise<{ key: ApiKeyRecord; value: string }> {
    const { secret, publicId } = mintSecret(settings.environment, kind);
    return { key: await this.deps.keys.create({ ...settings, ...this.newKey(kind, secret, publicId) }), value: secret };
  }

  /** A new key's identity: a fresh id, its lookup id and hash, and (publishable only, public by design) its value. */
  private newKey(kind: KeyKind, secret: string, publicId: string): Pick<NewApiKey, 'id' | 'kind' | 'publicId' | 'secretHash' | 'publishableKey'> {
    return {
      id: newId('key'),
      kind,
      publicId,
      secretHash: hashSecret(secret, this.deps.pepper),
      publishableKey: kind === 'publishable' ? secret : null,
    };
  }
}
