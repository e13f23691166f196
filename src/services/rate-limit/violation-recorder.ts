import type { RateLimitDecision } from '../../rate-limit/index.js';
import type { ViolationRepository } from '../../repositories/violation-repository.js';
import type { ViolationSink } from './limits-service.js';

const reasons = {
  hourly: (limit: number) => `hourly limit of ${limit} requests exceeded`,
  burst: (limit: number) => `burst limit of ${limit} requests per 60 seconds exceeded`,
};

/**
 * Remembers blocks for rate-limit analytics. Writes happen in the background and never fail a request:
 * a lost violation row costs an analytics figure, not an answer.
 */
export class ViolationRecorder implements ViolationSink {
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repository: ViolationRepository,
    private readonly onError: (error: unknown) => void,
    /** Told when a key's violations in the store changed (a rate-limit status read before is stale). */
    private readonly onWritten: (keyId: string) => void = () => {},
  ) {}

  record(keyId: string, decision: RateLimitDecision, at: Date, burstLimit: number): void {
    const write = async () => {
      if (decision.reason === 'hourly' || decision.reason === 'burst') {
        const limit = decision.reason === 'hourly' ? decision.limit : burstLimit;
        await this.repository.start({
          keyId,
          reason: reasons[decision.reason](limit),
          startedAt: at,
          blockedUntil: decision.blockedUntil ?? new Date(at.getTime() + (decision.retryAfterSeconds ?? 0) * 1000),
          affectedRequests: 1,
        });
      } else {
        await this.repository.addAffected(keyId, at);
      }
      this.onWritten(keyId);
    };
    // Chained so a block's first row exists before the requests it refused are counted against it.
    this.pending = this.pending.then(write).catch(this.onError);
  }

  async drain(): Promise<void> {
    await this.pending;
  }
}
