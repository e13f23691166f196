import type { components } from '../../../generated/openapi.js';
import { AppError, validationError } from '../../errors/app-error.js';
import { newId } from '../../lib/ids.js';
import { DuplicateEmailError, type UserRecord, type UserRepository } from '../../repositories/user-repository.js';
import type { SessionRepository } from '../../repositories/session-repository.js';
import type { AccountCache } from './account-cache.js';
import type { UserCaller } from '../callers.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from '../../crypto/passwords.js';
import type { TokenService } from './token-service.js';

type User = components['schemas']['User'];
type AuthSession = components['schemas']['AuthSession'];

export interface AccountsDeps {
  users: UserRepository;
  sessions: SessionRepository;
  tokens: TokenService;
  sessionMaxAgeSeconds: number;
  /** Sessions, users and database ids already read; told of every change, so that no process keeps a stale one. */
  cache: AccountCache;
  /** Ids of the user's database connections, for `User.connectedDatabases`. */
  connectedDatabaseIds(userId: string): Promise<string[]>;
}

const emailTaken = () => new AppError('EMAIL_TAKEN', 'An account with this email already exists.');
const badCredentials = () => new AppError('INVALID_CREDENTIALS', 'The email or password is wrong.');

function weakPassword(problem: string, field: string): AppError {
  return validationError([{ location: 'body', path: `/${field}`, message: problem }]);
}

/** Accounts and the JWT session lifecycle (spec: Accounts). */
export class AccountsService {
  constructor(private readonly deps: AccountsDeps) {}

  /** The stored role: only the operator changes it (setRole); no address, field or request grants it. */
  roleOf(user: Pick<UserRecord, 'role'>): 'user' | 'admin' {
    return user.role === 'admin' ? 'admin' : 'user';
  }

  async toUser(user: UserRecord): Promise<User> {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: this.roleOf(user),
      plan: user.plan ?? 'free',
      connectedDatabases: await this.connectedDatabases(user.id),
      createdAt: user.createdAt.toISOString(),
      lastActive: user.lastActiveAt.toISOString(),
    };
  }

  /** registerUser */
  async register(input: { email: string; password: string; name: string }): Promise<AuthSession> {
    const email = input.email.trim().toLowerCase();
    const problem = passwordProblem(input.password, email);
    if (problem) throw weakPassword(problem, 'password');
    const name = input.name.trim();
    if (name.length === 0) throw validationError([{ location: 'body', path: '/name', message: 'must not be blank' }]);
    if (await this.deps.users.findByEmail(email)) throw emailTaken();
    const passwordHash = await hashPassword(input.password);
    let user: UserRecord;
    try {
      user = await this.deps.users.create({ id: newId('usr'), email, name, passwordHash, role: 'user', lastActiveAt: new Date() });
    } catch (error) {
      if (error instanceof DuplicateEmailError) throw emailTaken();
      throw error;
    }
    return this.startSession(user);
  }

  /** loginUser: a wrong email and a wrong password take the same time and give the same answer. */
  async login(input: { email: string; password: string }): Promise<AuthSession> {
    const user = await this.deps.users.findByEmail(input.email.trim().toLowerCase());
    const valid = await verifyPassword(input.password, user?.passwordHash ?? (await decoyHash));
    if (!user || !valid) throw badCredentials();
    if (user.disabledAt) throw new AppError('ACCOUNT_DISABLED', 'This account is disabled.');
    await this.deps.users.touch(user.id, new Date());
    this.deps.cache.userChanged(user.id);
    return this.startSession(user);
  }

  /** refreshSession: single-use refresh tokens, bounded by the session's absolute expiry. */
  async refresh(refreshToken: string): Promise<AuthSession> {
    const claims = await this.deps.tokens.verifyRefresh(refreshToken);
    const session = await this.deps.sessions.findById(claims.sessionId);
    if (!session || session.userId !== claims.userId) throw new AppError('INVALID_TOKEN', 'This is not a valid refresh token.');
    if (session.endedAt) throw new AppError('SESSION_ENDED', 'This session has ended. Log in again.');
    if (session.expiresAt.getTime() <= Date.now()) throw new AppError('SESSION_ENDED', 'This session reached its maximum age. Log in again.');
    const user = await this.activeUser(claims.userId);
    const nextJti = this.deps.tokens.newRefreshId();
    if (!claims.jti || !(await this.deps.sessions.rotateRefresh(session.id, claims.jti, nextJti))) {
      // A refresh token used twice means it leaked: end the session so neither holder keeps it.
      await this.deps.sessions.end(session.id, new Date());
      this.deps.cache.sessionEnded(session.id);
      throw new AppError('SESSION_ENDED', 'This refresh token was already used; the session has been ended. Log in again.');
    }
    const tokens = await this.deps.tokens.issue(user.id, session.id, nextJti, session.expiresAt);
    return { user: await this.toUser(user), token: tokens.accessToken, tokens };
  }

  /**
   * Verifies an access JWT and its session for the bearerJwt security scheme. The session and its user come from
   * the cache while neither has changed; the token's signature and expiry are checked on every request.
   */
  async authenticate(accessToken: string): Promise<UserCaller> {
    const claims = await this.deps.tokens.verifyAccess(accessToken);
    const { cache } = this.deps;
    const readAt = cache.clock();
    const cached = cache.session(claims.sessionId);
    const session = cached?.session ?? (await this.deps.sessions.findById(claims.sessionId));
    if (!session || session.userId !== claims.userId) throw new AppError('INVALID_TOKEN', 'This is not a valid access token.');
    if (session.endedAt) throw new AppError('SESSION_ENDED', 'This session has ended. Log in again.');
    const user = cached?.user ?? (await this.activeUser(claims.userId));
    if (user.disabledAt) throw new AppError('ACCOUNT_DISABLED', 'This account is disabled.');
    if (!cached) cache.keepSession(session.id, session, user, readAt);
    return { kind: 'user', user, role: this.roleOf(user), sessionId: session.id };
  }

  /** logoutUser */
  async logout(caller: UserCaller): Promise<{ message: string }> {
    await this.deps.sessions.end(caller.sessionId, new Date());
    this.deps.cache.sessionEnded(caller.sessionId);
    return { message: "Logged out. This session's tokens no longer work." };
  }

  /** getProfile */
  async profile(caller: UserCaller): Promise<{ user: User }> {
    return { user: await this.toUser(caller.user) };
  }

  /**
   * updateProfile: only name and email; the contract rejects every other field, role included. A new email needs
   * the current password: a stolen access token alone must not be able to take the account over by its email.
   */
  async updateProfile(caller: UserCaller, changes: { name?: string; email?: string; currentPassword?: string }): Promise<{ user: User }> {
    const update: { name?: string; email?: string } = {};
    if (changes.name !== undefined) update.name = changes.name.trim();
    if (update.name === '') throw validationError([{ location: 'body', path: '/name', message: 'must not be blank' }]);
    if (changes.email !== undefined && changes.email.trim().toLowerCase() !== caller.user.email) {
      update.email = changes.email.trim().toLowerCase();
      if (changes.currentPassword === undefined) {
        throw validationError([{ location: 'body', path: '/currentPassword', message: 'is required to change the email' }]);
      }
      if (!(await verifyPassword(changes.currentPassword, caller.user.passwordHash))) {
        throw new AppError('INVALID_CREDENTIALS', 'The current password is wrong.');
      }
      const existing = await this.deps.users.findByEmail(update.email);
      if (existing && existing.id !== caller.user.id) throw emailTaken();
    }
    try {
      const user = await this.deps.users.update(caller.user.id, update);
      this.deps.cache.userChanged(caller.user.id);
      return { user: await this.toUser(user!) };
    } catch (error) {
      if (error instanceof DuplicateEmailError) throw emailTaken();
      throw error;
    }
  }

  /** changePassword: ends every session of the user and starts a fresh one for the caller. */
  async changePassword(caller: UserCaller, input: { currentPassword: string; newPassword: string }): Promise<AuthSession> {
    if (!(await verifyPassword(input.currentPassword, caller.user.passwordHash))) {
      throw new AppError('INVALID_CREDENTIALS', 'The current password is wrong.');
    }
    const problem = passwordProblem(input.newPassword, caller.user.email);
    if (problem) throw weakPassword(problem, 'newPassword');
    if (input.newPassword === input.currentPassword) throw weakPassword('must differ from the current password', 'newPassword');
    const user = await this.deps.users.update(caller.user.id, { passwordHash: await hashPassword(input.newPassword) });
    await this.deps.sessions.endAllForUser(caller.user.id, new Date());
    this.deps.cache.userChanged(caller.user.id);
    return this.startSession(user!);
  }

  /**
   * Disables or re-enables an account (operator command `npm run user -- disable <email>`). A disabled user's
   * sessions end at once and their JWTs and API keys answer 401 ACCOUNT_DISABLED.
   */
  async setDisabled(email: string, disabled: boolean): Promise<UserRecord> {
    const user = await this.deps.users.findByEmail(email.trim().toLowerCase());
    if (!user) throw new AppError('NOT_FOUND', `No account with the email ${email}.`, { resource: 'user' });
    const updated = await this.deps.users.update(user.id, { disabledAt: disabled ? new Date() : null });
    if (disabled) await this.deps.sessions.endAllForUser(user.id, new Date());
    this.deps.cache.userChanged(user.id);
    return updated!;
  }

  /**
   * Makes an account an admin or a user again (operator command `npm run user -- role <email> admin|user`). The
   * only way a role changes: the API has no operation for it.
   */
  async setRole(email: string, role: 'user' | 'admin'): Promise<UserRecord> {
    const user = await this.deps.users.findByEmail(email.trim().toLowerCase());
    if (!user) throw new AppError('NOT_FOUND', `No account with the email ${email}.`, { resource: 'user' });
    const updated = await this.deps.users.update(user.id, { role });
    this.deps.cache.userChanged(user.id);
    return updated!;
  }

  /** The user's connection ids, from the cache until a connection of theirs is added or removed. */
  private async connectedDatabases(userId: string): Promise<string[]> {
    const { cache } = this.deps;
    const cached = cache.connectedDatabases(userId);
    if (cached) return cached;
    const readAt = cache.clock();
    const ids = await this.deps.connectedDatabaseIds(userId);
    cache.keepConnectedDatabases(userId, ids, readAt);
    return ids;
  }

  private async activeUser(userId: string): Promise<UserRecord> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw new AppError('INVALID_TOKEN', 'This token belongs to no account.');
    if (user.disabledAt) throw new AppError('ACCOUNT_DISABLED', 'This account is disabled.');
    return user;
  }

  private async startSession(user: UserRecord): Promise<AuthSession> {
    const sessionId = newId('ses');
    const refreshJti = this.deps.tokens.newRefreshId();
    const expiresAt = new Date(Date.now() + this.deps.sessionMaxAgeSeconds * 1000);
    await this.deps.sessions.create({ id: sessionId, userId: user.id, refreshJti, expiresAt });
    const tokens = await this.deps.tokens.issue(user.id, sessionId, refreshJti, expiresAt);
    return { user: await this.toUser(user), token: tokens.accessToken, tokens };
  }
}
