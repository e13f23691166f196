import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeFollowers } from '../../../src/search-index/changes/change-followers.js';
import { nextPollAt } from '../../../src/search-index/changes/poller.js';

/** Workers whose claims are counted, on a regular tick far slower than the wakes under test. */
class CountingFollowers extends ChangeFollowers<never> {
  claims = 0;

  constructor() {
    super({ tables: { touchPolls: async () => undefined }, logger: { warn: () => undefined }, staleMs: 60_000, tickMs: 60_000 }, 'test followers');
  }

  protected heldIds(): string[] {
    return [];
  }

  protected async claimDue(): Promise<void> {
    this.claims += 1;
  }

  wake(at: number): void {
    this.wakeAt(at);
  }

  stop(): Promise<void> {
    return this.halt();
  }
}

afterEach(() => {
  vi.useRealTimers();
});

/** Started workers on a fake clock at 1,000,000 ms. */
function startedFollowers(): CountingFollowers {
  vi.useFakeTimers({ now: 1_000_000 });
  const followers = new CountingFollowers();
  followers.start();
  return followers;
}

describe('nextPollAt', () => {
  it('when a poll ends within its interval, then the next is due one interval after it started', () => {
    expect(nextPollAt(10_000, 10_300, 1000)).toBe(11_000);
    expect(nextPollAt(10_000, 10_000, 5000)).toBe(15_000);
  });

  it('when a poll took longer than its interval, then the next is due as it ends, never before', () => {
    expect(nextPollAt(10_000, 11_700, 1000)).toBe(11_700);
    expect(nextPollAt(10_000, 11_000, 1000)).toBe(11_000);
  });
});

describe('ChangeFollowers.wakeAt', () => {
  it('when a wake is asked for, then what is due is claimed at that time, not at the next regular tick', async () => {
    const followers = startedFollowers();
    followers.wake(1_000_700);
    await vi.advanceTimersByTimeAsync(699);
    expect(followers.claims).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(followers.claims).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(followers.claims).toBe(1);
    await followers.stop();
  });

  it('when a wake is already past, then the claim runs at once', async () => {
    const followers = startedFollowers();
    followers.wake(999_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(followers.claims).toBe(1);
    await followers.stop();
  });

  it('when the workers halt, then no wake asked for before runs, nor one asked for after', async () => {
    const followers = startedFollowers();
    followers.wake(1_000_500);
    await followers.stop();
    followers.wake(1_000_600);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(followers.claims).toBe(0);
  });
});
