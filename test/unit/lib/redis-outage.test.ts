import { describe, expect, it } from 'vitest';
import { RedisOutageLog } from '../../../src/lib/redis-outage.js';

describe('RedisOutageLog', () => {
  it('when several Redis users lose Redis, fail again and again, and regain it one by one, then one line when the first loses it and one when the last regains it', () => {
    const lines: string[] = [];
    const log = new RedisOutageLog({ warn: (_context: unknown, message?: string) => void lines.push(message ?? '') } as never);
    for (let i = 0; i < 50; i += 1) {
      log.lost('rate limits', new Error('connect ECONNREFUSED'));
      log.lost('invalidations', new Error('Connection is closed.'));
      log.lost('search cache', new Error('connect ECONNREFUSED'));
    }
    log.regained('search cache');
    log.regained('invalidations');
    expect(log.unreachable).toEqual(['rate limits']);
    log.regained('rate limits');
    log.regained('rate limits');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^redis unreachable/);
    expect(lines[1]).toMatch(/^redis reachable again/);
  });

  it('when a user that never lost Redis reports it back (a first connect), then nothing is logged', () => {
    const lines: string[] = [];
    const log = new RedisOutageLog({ warn: () => void lines.push('x') } as never);
    log.regained('search cache');
    expect(lines).toEqual([]);
  });
});
