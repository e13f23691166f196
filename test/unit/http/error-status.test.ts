import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors/app-error.js';
import { errorHeaders, statusOf, statusOfCode } from '../../../src/http/error-status.js';
import { loadContract } from '../../../src/lib/contract.js';

describe('error catalogue', () => {
  it('when compared with openapi.yaml, then every code of the ErrorCode enum has a status and vice versa', () => {
    const schema = loadContract().components!.schemas!.ErrorCode as { enum: string[] };
    expect(Object.keys(statusOfCode).sort()).toEqual([...schema.enum].sort());
  });

  it("when compared with the API description's table, then each code is listed under its status", () => {
    const description = loadContract().info.description!;
    for (const [code, status] of Object.entries(statusOfCode)) {
      const row = description.split('\n').find((line) => line.startsWith(`| ${status} |`));
      expect(row, `row for ${status}`).toBeDefined();
      expect(row, `${code} listed under ${status}`).toContain(`\`${code}\``);
    }
  });
});

describe('statusOf', () => {
  it('when a database cannot be reached while the caller saves it, then 422; during a search, then 502', () => {
    expect(statusOf(new AppError('DATABASE_UNREACHABLE', 'x', {}, { rejectsSubmission: true }))).toBe(422);
    expect(statusOf(new AppError('DATABASE_UNREACHABLE', 'x'))).toBe(502);
  });

  it('when a policy refuses what the caller submitted, then its own status (400), not 422', () => {
    expect(statusOf(new AppError('HOST_NOT_ALLOWED', 'x', {}, { rejectsSubmission: true }))).toBe(400);
  });
});

describe('errorHeaders', () => {
  it('when a limit refused, then Retry-After, X-RateLimit-Retry-After and the window', () => {
    const rateLimit = { limit: 50, remaining: 0, resetAt: new Date('2026-11-22T10:00:00.000Z'), tier: 'free', windowSeconds: 3600 };
    expect(errorHeaders(new AppError('RATE_LIMIT_EXCEEDED', 'x', {}, { retryAfterSeconds: 30, rateLimit }))).toEqual({
      'Retry-After': '30',
      'X-RateLimit-Retry-After': '30',
      'X-RateLimit-Limit': '50',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '2026-11-22T10:00:00.000Z',
      'X-RateLimit-Tier': 'free',
      'X-RateLimit-Window': '3600',
    });
  });

  it('when an error has no such facts, then no extra headers', () => {
    expect(errorHeaders(new AppError('NOT_FOUND', 'x'))).toEqual({});
  });
});
