import { describe, expect, it } from 'vitest';
import {
  aiRule, limitsForTier, OPERATION_LIMITS, operationRule, operationSubject, requestRule, TIERS,
} from '../../../src/rate-limit/index.js';

describe('limitsForTier', () => {
  it('when asked for each tier, then it returns the spec table', () => {
    expect(limitsForTier('free')).toEqual({
      requestsPerHour: 1000, burstLimit: 50, blockSeconds: 300, concurrentConnections: 3, aiRequestsPerHour: 100, databases: 3,
    });
    expect(limitsForTier('pro')).toEqual({
      requestsPerHour: 10_000, burstLimit: 200, blockSeconds: 300, concurrentConnections: 10, aiRequestsPerHour: 2000, databases: 25,
    });
    expect(limitsForTier('enterprise')).toEqual({
      requestsPerHour: 100_000, burstLimit: 500, blockSeconds: 60, concurrentConnections: 50, aiRequestsPerHour: 20_000,
      databases: null,
    });
  });

  it('when a key has custom limits, then they override the tier, the block is 30 s and connections are unlimited', () => {
    expect(limitsForTier('pro', { requestsPerHour: 50_000 })).toEqual({
      requestsPerHour: 50_000, burstLimit: 200, blockSeconds: 30, concurrentConnections: null, aiRequestsPerHour: 2000, databases: 25,
    });
    expect(limitsForTier('free', { concurrentConnections: 7, databases: null })).toMatchObject({
      concurrentConnections: 7, databases: null,
    });
  });

  it('when the returned limits are changed, then the table is not', () => {
    limitsForTier('free').requestsPerHour = 1;
    expect(TIERS.free.requestsPerHour).toBe(1000);
  });
});

describe('rules', () => {
  it('when a tier becomes a request rule, then it is a one-hour window with a 60-second burst window', () => {
    expect(requestRule(limitsForTier('free'))).toEqual({
      limit: 1000, windowSeconds: 3600, burstLimit: 50, burstWindowSeconds: 60, blockSeconds: 300,
    });
  });

  it('when a tier becomes an AI rule, then it is its AI hourly limit with no burst and no block', () => {
    expect(aiRule(limitsForTier('pro'))).toEqual({
      limit: 2000, windowSeconds: 3600, burstLimit: 2000, burstWindowSeconds: 3600, blockSeconds: 0,
    });
  });

  it('when per-operation rules are built, then they follow the spec table and scope', () => {
    expect(Object.fromEntries(Object.entries(OPERATION_LIMITS).map(([op, v]) => [op, v.perHour]))).toEqual({
      register: 5, login: 10, createApiKey: 20, regenerateApiKey: 5,
    });
    expect(operationRule('login')).toMatchObject({ limit: 10, burstLimit: 10, blockSeconds: 0 });
    expect(operationSubject('register', '1.2.3.4')).toBe('ip:1.2.3.4:register');
    expect(operationSubject('regenerateApiKey', 'k1')).toBe('key:k1:regenerateApiKey');
  });
});
