/**
 * The behaviour every RateLimitStore must show, written once and run against the memory store (unit) and the
 * Redis store (integration): passing both proves the Lua script and the TypeScript algorithm agree.
 * Time is an injected number of milliseconds; nothing sleeps.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  accountSubject, keySubject, limitsForTier, operationRule, perHourRule, requestRule,
  type RateLimitDecision, type RateLimitRule, type RateLimitStore,
} from '../../../src/rate-limit/index.js';

const T0 = Date.UTC(2030, 0, 1);
const SECOND = 1000;
const HOUR = 3600 * SECOND;

export function rule(overrides: Partial<RateLimitRule>): RateLimitRule {
  return { limit: 10, windowSeconds: 3600, burstLimit: 10, burstWindowSeconds: 60, blockSeconds: 0, ...overrides };
}

/** A subject no other test (or earlier run sharing the same Redis) has used. */
export function freshSubject(label = 'key'): string {
  return `${label}:${randomUUID()}`;
}

/** A fresh account's request subject and a factory of its keys' subjects, all under the account's hash tag. */
export function freshAccount(): { account: string; key: (keyId: string) => string } {
  const accountId = randomUUID();
  return { account: accountSubject(accountId), key: (keyId) => keySubject(accountId, keyId) };
}

async function consumeTimes(store: RateLimitStore, subject: string, r: RateLimitRule, n: number, at: (i: number) => number) {
  const decisions: RateLimitDecision[] = [];
  for (let i = 0; i < n; i++) decisions.push(await store.consume(subject, r, at(i)));
  return decisions;
}

export function describeStoreContract(name: string, getStore: () => RateLimitStore): void {
  describe(`${name}: the rate-limit store contract`, () => {
    const free = requestRule(limitsForTier('free'));

    describe('hourly window', () => {
      it('when a free key sends 1,000 requests spread over the hour, then all are admitted and the 1,001st is refused', async () => {
        const store = getStore();
        const subject = freshSubject();
        const decisions = await consumeTimes(store, subject, free, 1000, (i) => T0 + i * 2 * SECOND);
        expect(decisions.every((d) => d.allowed)).toBe(true);
        expect(decisions.map((d) => d.remaining).slice(0, 3)).toEqual([999, 998, 997]);
        expect(decisions.at(-1)).toMatchObject({ remaining: 0, used: 1000, limit: 1000 });

        const now = T0 + 2000 * SECOND;
        const refused = await store.consume(subject, free, now);
        expect(refused).toMatchObject({ allowed: false, reason: 'hourly', remaining: 0, used: 1000 });
        expect(refused.blockedUntil).toEqual(new Date(now + 300 * SECOND));
        // The block ends after 300 s, but the window stays full until the first request leaves it at T0 + 3600 s.
        expect(refused.retryAfterSeconds).toBe(1600);
      });

      it('when the window is full, then a request exactly 3600 s after the oldest is admitted and one 1 ms earlier is not', async () => {
        const store = getStore();
        const subject = freshSubject();
        const r = rule({ limit: 3, burstLimit: 3 });
        await consumeTimes(store, subject, r, 3, (i) => T0 + i * 10 * SECOND);

        const early = await store.consume(subject, r, T0 + HOUR - 1);
        expect(early).toMatchObject({ allowed: false, reason: 'hourly', retryAfterSeconds: 1, blockedUntil: null });
        const onTime = await store.consume(subject, r, T0 + HOUR);
        expect(onTime).toMatchObject({ allowed: true, remaining: 0, used: 3 });
        // The oldest counted request is now the one at T0 + 10 s.
        expect(onTime.resetAt).toEqual(new Date(T0 + 10 * SECOND + HOUR));
      });

      it('when no request is counted, then resetAt is now + 1 h and windowStart is now - 1 h', async () => {
        const store = getStore();
        const d = await store.peek(freshSubject(), free, T0);
        expect(d).toMatchObject({ allowed: true, limit: 1000, remaining: 1000, used: 0, reason: null, retryAfterSeconds: null });
        expect(d.resetAt).toEqual(new Date(T0 + HOUR));
        expect(d.windowStart).toEqual(new Date(T0 - HOUR));
      });

      it('when requests are admitted, then resetAt is when the oldest leaves the window', async () => {
        const store = getStore();
        const subject = freshSubject();
        await store.consume(subject, free, T0);
        const d = await store.consume(subject, free, T0 + 90 * SECOND);
        expect(d.resetAt).toEqual(new Date(T0 + HOUR));
      });
    });

    describe('burst window and block', () => {
      it('when a free key sends 51 requests in one second, then 50 are admitted and the 51st blocks it for 300 s', async () => {
        const store = getStore();
        const subject = freshSubject();
        const admitted = await consumeTimes(store, subject, free, 50, (i) => T0 + i * 10);
        expect(admitted.every((d) => d.allowed)).toBe(true);

        const refused = await store.consume(subject, free, T0 + SECOND);
        expect(refused).toMatchObject({ allowed: false, reason: 'burst', remaining: 0, retryAfterSeconds: 300 });
        expect(refused.blockedUntil).toEqual(new Date(T0 + SECOND + 300 * SECOND));
      });

      it('when a key is blocked, then it is refused until exactly the block duration has passed, with a true Retry-After', async () => {
        const store = getStore();
        const subject = freshSubject();
        await consumeTimes(store, subject, free, 51, () => T0);
        const end = T0 + 300 * SECOND;

        expect(await store.consume(subject, free, T0 + SECOND)).toMatchObject({ reason: 'blocked', retryAfterSeconds: 299 });
        expect(await store.consume(subject, free, T0 + 150.5 * SECOND)).toMatchObject({ retryAfterSeconds: 150 });
        const last = await store.consume(subject, free, end - 1);
        expect(last).toMatchObject({ allowed: false, reason: 'blocked', retryAfterSeconds: 1 });
        expect(last.blockedUntil).toEqual(new Date(end));
        expect(await store.consume(subject, free, end)).toMatchObject({ allowed: true, blockedUntil: null, reason: null });
      });

      it('when requests keep arriving during a block, then the block is not extended and they are not counted', async () => {
        const store = getStore();
        const subject = freshSubject();
        await consumeTimes(store, subject, free, 51, () => T0);
        for (let s = 10; s < 300; s += 10) {
          const d = await store.consume(subject, free, T0 + s * SECOND);
          expect(d.blockedUntil).toEqual(new Date(T0 + 300 * SECOND));
        }
        const after = await store.consume(subject, free, T0 + 300 * SECOND);
        expect(after).toMatchObject({ allowed: true, used: 51, remaining: 949 });
      });

      it('when an enterprise key or a key with custom limits crosses its burst, then it is blocked for 60 s or 30 s', async () => {
        const store = getStore();
        const enterprise = requestRule(limitsForTier('enterprise'));
        const custom = requestRule(limitsForTier('pro', { burstLimit: 5 }));
        const a = freshSubject();
        const b = freshSubject();
        await consumeTimes(store, a, enterprise, 500, () => T0);
        await consumeTimes(store, b, custom, 5, () => T0);
        expect(await store.consume(a, enterprise, T0)).toMatchObject({ reason: 'burst', retryAfterSeconds: 60 });
        const customRefusal = await store.consume(b, custom, T0);
        expect(customRefusal.blockedUntil).toEqual(new Date(T0 + 30 * SECOND));
        // The burst window (60 s) still holds the five requests when the 30 s block ends, so Retry-After says 60.
        expect(customRefusal).toMatchObject({ reason: 'burst', retryAfterSeconds: 60 });
        expect(await store.consume(b, custom, T0 + 30 * SECOND - 1)).toMatchObject({ allowed: false, reason: 'blocked' });
        expect(await store.consume(b, custom, T0 + 30 * SECOND)).toMatchObject({ allowed: false, reason: 'burst' });
      });
    });

    describe('per-operation limits (blockSeconds 0)', () => {
      it('when register is called a 6th time within the hour, then it is refused until the oldest call leaves the window, with no block', async () => {
        const store = getStore();
        const subject = freshSubject('ip:203.0.113.7:register');
        const register = operationRule('register');
        const ok = await consumeTimes(store, subject, register, 5, (i) => T0 + i * 60 * SECOND);
        expect(ok.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);

        const refused = await store.consume(subject, register, T0 + 600 * SECOND);
        expect(refused).toMatchObject({ allowed: false, reason: 'hourly', blockedUntil: null, retryAfterSeconds: 3000 });
        expect(await store.consume(subject, register, T0 + HOUR)).toMatchObject({ allowed: true });
        expect(await store.consume(subject, register, T0 + HOUR + 1)).toMatchObject({ allowed: false, retryAfterSeconds: 60 });
      });

      it('when a request is refunded, then its try is given back, once, and the other tries of that millisecond stay', async () => {
        const store = getStore();
        const subject = freshSubject('ip:203.0.113.8:register');
        const register = operationRule('register');
        await consumeTimes(store, subject, register, 2, () => T0);
        await consumeTimes(store, subject, register, 3, (i) => T0 + (i + 1) * SECOND);
        expect(await store.consume(subject, register, T0 + 10 * SECOND)).toMatchObject({ allowed: false });
        await store.refund(subject, T0);
        expect((await store.peek(subject, register, T0 + 10 * SECOND)).used).toBe(4);
        await store.refund(subject, T0 + 5 * SECOND); // nothing was admitted then
        expect((await store.peek(subject, register, T0 + 10 * SECOND)).used).toBe(4);
        expect(await store.consume(subject, register, T0 + 10 * SECOND)).toMatchObject({ allowed: true, remaining: 0 });
      });

      it('when an AI subject is full, then the key request subject is unaffected', async () => {
        const store = getStore();
        const keyId = randomUUID();
        const ai = perHourRule(2);
        await consumeTimes(store, `ai:${keyId}`, ai, 2, () => T0);
        expect(await store.consume(`ai:${keyId}`, ai, T0)).toMatchObject({ allowed: false });
        expect(await store.consume(`key:${keyId}`, free, T0)).toMatchObject({ allowed: true, used: 1 });
      });
    });

    describe('peek', () => {
      it('when the status is peeked, then nothing is consumed', async () => {
        const store = getStore();
        const subject = freshSubject();
        for (let i = 0; i < 5; i++) await store.peek(subject, free, T0);
        expect(await store.consume(subject, free, T0)).toMatchObject({ used: 1, remaining: 999 });
        expect(await store.peek(subject, free, T0)).toMatchObject({ allowed: true, used: 1, remaining: 999 });
      });

      it('when peeked with a full burst window, then it reports the refusal but starts no block', async () => {
        const store = getStore();
        const subject = freshSubject();
        await consumeTimes(store, subject, free, 50, () => T0);
        const peeked = await store.peek(subject, free, T0);
        expect(peeked).toMatchObject({ allowed: false, reason: 'burst', retryAfterSeconds: 300 });
        expect(await store.consume(subject, free, T0 + 60 * SECOND)).toMatchObject({ allowed: true, used: 51 });
      });

      it('when peeked during a block, then it reports the block without extending it', async () => {
        const store = getStore();
        const subject = freshSubject();
        await consumeTimes(store, subject, free, 51, () => T0);
        const peeked = await store.peek(subject, free, T0 + 100 * SECOND);
        expect(peeked).toMatchObject({ allowed: false, reason: 'blocked', retryAfterSeconds: 200, remaining: 0, used: 50 });
      });
    });

    describe('concurrent calls', () => {
      it('when 120 requests for a limit of 50 arrive at once, then exactly 50 are admitted', async () => {
        const store = getStore();
        const subject = freshSubject();
        const r = rule({ limit: 50, burstLimit: 50, blockSeconds: 300 });
        const decisions = await Promise.all(Array.from({ length: 120 }, () => store.consume(subject, r, T0)));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
      });
    });

    describe('several limits at once (consumeAll)', () => {
      it('when a key and its account both have room, then the request is admitted and counted in both', async () => {
        const store = getStore();
        const { account, key } = freshAccount();
        const keyRule = rule({ limit: 5, burstLimit: 5 });
        const accountRule = perHourRule(3);
        const first = await store.consumeAll([{ subject: key('a'), rule: keyRule }, { subject: account, rule: accountRule }], T0);
        expect(first.allowed).toBe(true);
        expect(first.refusedBy).toBeNull();
        expect(first.decisions.map((d) => [d.used, d.remaining])).toEqual([[1, 4], [1, 2]]);
        expect((await store.peek(key('a'), keyRule, T0)).used).toBe(1);
        expect((await store.peek(account, accountRule, T0)).used).toBe(1);
      });

      it('when two keys of an account together reach the account limit, then the next request of either is refused and counted nowhere', async () => {
        const store = getStore();
        const { account, key } = freshAccount();
        const keyRule = rule({ limit: 5, burstLimit: 5 });
        const accountRule = perHourRule(3);
        const both = (keyId: string, at: number) =>
          store.consumeAll([{ subject: key(keyId), rule: keyRule }, { subject: account, rule: accountRule }], at);
        expect((await both('a', T0)).allowed).toBe(true);
        expect((await both('b', T0 + SECOND)).allowed).toBe(true);
        expect((await both('a', T0 + 2 * SECOND)).allowed).toBe(true);

        const refused = await both('b', T0 + 3 * SECOND);
        expect(refused).toMatchObject({ allowed: false, refusedBy: 1 });
        expect(refused.decisions[1]).toMatchObject({ allowed: false, reason: 'hourly', remaining: 0, used: 3, retryAfterSeconds: 3597 });
        // The key itself had room: its verdict is "admissible", reported at its current count, and nothing was recorded.
        expect(refused.decisions[0]).toMatchObject({ allowed: true, used: 1, remaining: 4 });
        expect((await store.peek(key('b'), keyRule, T0 + 3 * SECOND)).used).toBe(1);
        expect((await store.peek(account, accountRule, T0 + 3 * SECOND)).used).toBe(3);

        // The account's oldest request leaves the window an hour after it was admitted; then either key may go on.
        expect((await both('b', T0 + HOUR)).allowed).toBe(true);
      });

      it('when the key refuses and starts a block, then the account does not count the request', async () => {
        const store = getStore();
        const { account, key } = freshAccount();
        const keyRule = rule({ limit: 1, burstLimit: 1, blockSeconds: 300 });
        const accountRule = perHourRule(10);
        const checks = [{ subject: key('a'), rule: keyRule }, { subject: account, rule: accountRule }];
        expect((await store.consumeAll(checks, T0)).allowed).toBe(true);
        const refused = await store.consumeAll(checks, T0 + SECOND);
        expect(refused).toMatchObject({ allowed: false, refusedBy: 0 });
        expect(refused.decisions[0]).toMatchObject({ reason: 'hourly', blockedUntil: new Date(T0 + SECOND + 300 * SECOND) });
        expect((await store.peek(account, accountRule, T0 + SECOND)).used).toBe(1);
        // The block holds on its own, whatever the account has left.
        expect(await store.consumeAll(checks, T0 + 100 * SECOND)).toMatchObject({ allowed: false, refusedBy: 0 });
        expect(refused.decisions[0]!.retryAfterSeconds).toBe(3599);
      });

      it('when 120 requests over two keys for an account limit of 50 arrive at once, then exactly 50 are admitted', async () => {
        const store = getStore();
        const { account, key } = freshAccount();
        const keyRule = rule({ limit: 100, burstLimit: 100 });
        const accountRule = perHourRule(50);
        const decisions = await Promise.all(Array.from({ length: 120 }, (_, i) =>
          store.consumeAll([{ subject: key(i % 2 === 0 ? 'a' : 'b'), rule: keyRule }, { subject: account, rule: accountRule }], T0 + (i % 5)),
        ));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
        const keyUse = (await store.peek(key('a'), keyRule, T0 + 10)).used + (await store.peek(key('b'), keyRule, T0 + 10)).used;
        expect(keyUse).toBe(50);
      });
    });

    describe('concurrency slots', () => {
      it('when all slots are held, then the next acquire fails until one is released', async () => {
        const store = getStore();
        const subject = freshSubject('conn');
        expect(await store.acquireConcurrency(subject, 2, 'a', T0, 30 * SECOND)).toBe(true);
        expect(await store.acquireConcurrency(subject, 2, 'b', T0, 30 * SECOND)).toBe(true);
        expect(await store.acquireConcurrency(subject, 2, 'c', T0, 30 * SECOND)).toBe(false);
        await store.releaseConcurrency(subject, 'a');
        expect(await store.acquireConcurrency(subject, 2, 'c', T0, 30 * SECOND)).toBe(true);
      });

      it('when a held lease is acquired again, then it is renewed rather than taking a second slot', async () => {
        const store = getStore();
        const subject = freshSubject('conn');
        expect(await store.acquireConcurrency(subject, 1, 'a', T0, 30 * SECOND)).toBe(true);
        expect(await store.acquireConcurrency(subject, 1, 'a', T0 + 20 * SECOND, 30 * SECOND)).toBe(true);
        expect(await store.acquireConcurrency(subject, 1, 'b', T0 + 40 * SECOND, 30 * SECOND)).toBe(false);
        expect(await store.acquireConcurrency(subject, 1, 'b', T0 + 50 * SECOND, 30 * SECOND)).toBe(true);
      });

      it('when a holder never releases (a crashed process), then its lease expires after its TTL', async () => {
        const store = getStore();
        const subject = freshSubject('conn');
        expect(await store.acquireConcurrency(subject, 1, 'crashed', T0, 30 * SECOND)).toBe(true);
        expect(await store.acquireConcurrency(subject, 1, 'next', T0 + 30 * SECOND - 1, 30 * SECOND)).toBe(false);
        expect(await store.acquireConcurrency(subject, 1, 'next', T0 + 30 * SECOND, 30 * SECOND)).toBe(true);
      });

      it('when a lease that is not held is released, then nothing changes', async () => {
        const store = getStore();
        const subject = freshSubject('conn');
        await store.releaseConcurrency(subject, 'ghost');
        expect(await store.acquireConcurrency(subject, 1, 'a', T0, 30 * SECOND)).toBe(true);
      });
    });
  });
}
