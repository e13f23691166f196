/**
 * Account plans: what an account may use is its plan, set by the operator (`npm run user -- plan`)
 * or an admin (updateUserPlan), never chosen by the account. Every limit that depends on who the customer is
 * (connected databases, databases per search, SQLite upload size, semantic rows, exports, key tiers) reads
 * `planOf`, never the tiers of the account's own keys.
 */
import type { components } from '../../../generated/openapi.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { TierName } from '../../rate-limit/index.js';
import { INDEX_ROWS_PER_TABLE } from '../../rules/plan-limits.js';
import { isAbovePlan, planOfUser } from '../../rules/plans.js';
import type { UserRecord, UserRepository } from '../../repositories/user-repository.js';

type User = components['schemas']['User'];

export interface PlanDeps {
  users: Pick<UserRepository, 'findById' | 'findByEmail' | 'update' | 'listPaidPlans'>;
  upgradeUrl: string;
  /** The account as the API shows it (AccountsService.toUser). */
  view(user: UserRecord): Promise<User>;
  /** Cached credentials of the user must see the new plan (their keys' effective tier follows it). */
  onUserChanged(userId: string): void;
}

export class PlanService {
  constructor(private readonly deps: PlanDeps) {}

  /** The account's plan; an unknown account has none beyond free. */
  async planOf(userId: string): Promise<TierName> {
    const user = await this.deps.users.findById(userId);
    return user ? planOfUser(user) : 'free';
  }

  /** Rows of one table the search index holds for the account. */
  async indexRowLimit(userId: string): Promise<number> {
    return INDEX_ROWS_PER_TABLE[await this.planOf(userId)];
  }

  /** A key of `tier` for this account: 403 TIER_ABOVE_PLAN when the tier is above the account's plan. */
  async assertTierAllowed(userId: string, tier: TierName): Promise<void> {
    const plan = await this.planOf(userId);
    if (!isAbovePlan(tier, plan)) return;
    throw new AppError('TIER_ABOVE_PLAN', `A key's tier may be at most your plan: your plan is ${plan}, the key asks for ${tier}.`, {
      plan, requestedTier: tier, upgradeUrl: this.deps.upgradeUrl,
    });
  }

  /** updateUserPlan (admin). */
  async updatePlan(userId: string, plan: TierName): Promise<{ user: User }> {
    return { user: await this.deps.view(await this.setPlan(userId, plan)) };
  }

  /** The plan change itself, for updateUserPlan and `npm run user -- plan <email> <tier>` (operator). */
  async setPlan(userId: string, plan: TierName): Promise<UserRecord> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw notFound('user', userId);
    const updated = await this.deps.users.update(user.id, { plan });
    this.deps.onUserChanged(user.id);
    return updated!;
  }

  async setPlanByEmail(email: string, plan: TierName): Promise<UserRecord> {
    const user = await this.deps.users.findByEmail(email.trim().toLowerCase());
    if (!user) throw new AppError('NOT_FOUND', `No account with the email ${email}.`, { resource: 'user' });
    return this.setPlan(user.id, plan);
  }

  /** Accounts whose plan is above free, for the operator's review (`npm run user -- plans`). */
  listPaid(): Promise<UserRecord[]> {
    return this.deps.users.listPaidPlans();
  }
}
