/**
 * Per-minute API-key usage in Quarry's own store, on both store dialects: the migration that folds the old
 * per-request rows into minute roll-ups, additive upserts from several writers, and the readers that key usage and
 * rate-limit analytics are built on.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sequelize } from 'sequelize';
import { releaseModels, setupModels } from '../../src/models/index.js';
import { requestUsageRepository, type UsageDelta } from '../../src/repositories/request-usage-repository.js';
import { storedTimestamp, toDate } from '../../src/repositories/sql-helpers.js';
import { createMigrator, type Migrator } from '../../src/store/migrator.js';
import { createSequelize } from '../../src/store/sequelize.js';
import { freshPostgresDatabase } from '../support/stores.js';

const at = (hour: number, minute: number, second = 0) => new Date(Date.UTC(2026, 10, 20, hour, minute, second));
const delta = (over: Partial<UsageDelta>): UsageDelta => ({
  keyId: 'key_a', userId: 'usr_a', endpoint: 'GET /api/v1/search/history', minuteMs: at(10, 0).getTime(),
  requests: 1, failed: 0, rateLimited: 0, counted: 1, totalMs: 10, ...over,
});

describe.each(['sqlite', 'postgres'] as const)('request usage on %s', (kind) => {
  let sequelize: Sequelize;
  let migrator: Migrator;
  let drop = async () => {};

  beforeAll(async () => {
    if (kind === 'postgres') {
      const database = await freshPostgresDatabase();
      drop = database.drop;
      sequelize = createSequelize({ storeKind: 'postgres', databaseUrl: database.url });
    } else {
      sequelize = createSequelize({ storeKind: 'sqlite', databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), 'quarry-usage-')), 'q.sqlite')}` });
    }
    migrator = createMigrator(sequelize);
    setupModels(sequelize);
  });

  afterAll(async () => {
    releaseModels(sequelize);
    await sequelize.close();
    await drop();
  });

  it('when a store with per-request rows is migrated, then each key, endpoint and minute becomes one row with the same counts, and the old table is gone', async () => {
    await migrator.up({ to: '0003-semantic-index' });
    const rows: Array<[string, string, number, number, boolean, boolean, Date]> = [
      // key, endpoint, status, ms, rate limited, counted, at
      ['key_a', 'GET /x', 200, 10, false, true, at(10, 0, 5)],
      ['key_a', 'GET /x', 500, 30, false, true, at(10, 0, 59)],
      ['key_a', 'GET /x', 429, 2, true, true, at(10, 0, 30)],
      ['key_a', 'GET /status', 200, 4, false, false, at(10, 0, 1)],
      ['key_a', 'GET /x', 200, 6, false, true, at(10, 1, 0)],
      ['key_b', 'GET /x', 200, 8, false, true, at(10, 0, 10)],
    ];
    for (const [key, endpoint, status, ms, limited, counted, when] of rows) {
      await sequelize.query(
        'INSERT INTO request_logs (key_id, user_id, endpoint, status, duration_ms, rate_limited, counted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        { replacements: [key, `usr_${key.slice(-1)}`, endpoint, status, ms, limited, counted, storedTimestamp(when)] },
      );
    }
    await migrator.up();
    const [folded] = await sequelize.query(
      'SELECT key_id, user_id, endpoint, minute_start, requests, failed, rate_limited, counted, total_ms FROM request_usage_minutely ORDER BY key_id, minute_start, endpoint',
    );
    expect((folded as Array<Record<string, unknown>>).map((r) => ({ ...r, minute_start: toDate(r.minute_start)!.toISOString(), total_ms: Number(r.total_ms) }))).toEqual([
      { key_id: 'key_a', user_id: 'usr_a', endpoint: 'GET /status', minute_start: at(10, 0).toISOString(), requests: 1, failed: 0, rate_limited: 0, counted: 0, total_ms: 4 },
      { key_id: 'key_a', user_id: 'usr_a', endpoint: 'GET /x', minute_start: at(10, 0).toISOString(), requests: 3, failed: 2, rate_limited: 1, counted: 2, total_ms: 42 },
      { key_id: 'key_a', user_id: 'usr_a', endpoint: 'GET /x', minute_start: at(10, 1).toISOString(), requests: 1, failed: 0, rate_limited: 0, counted: 1, total_ms: 6 },
      { key_id: 'key_b', user_id: 'usr_b', endpoint: 'GET /x', minute_start: at(10, 0).toISOString(), requests: 1, failed: 0, rate_limited: 0, counted: 1, total_ms: 8 },
    ]);
    await expect(sequelize.query('SELECT COUNT(*) FROM request_logs')).rejects.toThrow();
    // Continuing where the old rows left off: the minute 10:00 of key_a and GET /x gains two more requests.
    await requestUsageRepository.add([delta({ endpoint: 'GET /x', requests: 2, totalMs: 18, counted: 2 })]);
    expect(await requestUsageRepository.totals('key_a', at(9, 0))).toEqual({ total: 7, failed: 2, averageMs: (4 + 42 + 6 + 18) / 7 });
  });

  it('when two writers add to the same key, endpoint and minute at once, then the row holds the sum of both', async () => {
    const minuteMs = at(11, 0).getTime();
    const writers = Array.from({ length: 8 }, (_, i) =>
      requestUsageRepository.add([
        delta({ keyId: 'key_c', minuteMs, requests: 3, failed: 1, totalMs: 30, counted: 3 }),
        delta({ keyId: 'key_c', minuteMs, endpoint: `GET /e${i % 2}`, requests: 1, totalMs: 5 }),
      ]),
    );
    await Promise.all(writers);
    expect(await requestUsageRepository.totals('key_c', at(10, 59))).toEqual({ total: 32, failed: 8, averageMs: (8 * 30 + 8 * 5) / 32 });
    expect(await requestUsageRepository.byEndpoint('key_c', at(10, 59), 10)).toEqual([
      { endpoint: 'GET /api/v1/search/history', requests: 24, averageMs: 10 },
      { endpoint: 'GET /e0', requests: 4, averageMs: 5 },
      { endpoint: 'GET /e1', requests: 4, averageMs: 5 },
    ]);
  });

  it('when usage is read by hour, day or minute, then every minute row lands in its bucket with exact sums and averages', async () => {
    await requestUsageRepository.add([
      delta({ keyId: 'key_d', minuteMs: at(12, 5).getTime(), requests: 4, totalMs: 40, rateLimited: 1, counted: 3 }),
      delta({ keyId: 'key_d', minuteMs: at(12, 59).getTime(), requests: 1, totalMs: 70, counted: 1 }),
      delta({ keyId: 'key_d', minuteMs: at(13, 0).getTime(), requests: 2, totalMs: 2, counted: 0 }),
    ]);
    expect(await requestUsageRepository.byBucket('key_d', at(12, 0), 'hour')).toEqual([
      { bucket: '2026-11-20T12:00:00Z', requests: 5, averageMs: 22, rateLimited: 1, counted: 4 },
      { bucket: '2026-11-20T13:00:00Z', requests: 2, averageMs: 1, rateLimited: 0, counted: 0 },
    ]);
    expect(await requestUsageRepository.byBucket('key_d', at(12, 0), 'day')).toEqual([{ bucket: '2026-11-20', requests: 7, averageMs: 16, rateLimited: 1, counted: 4 }]);
    expect((await requestUsageRepository.byBucket('key_d', at(12, 0), 'minute')).map((b) => b.bucket)).toEqual([
      '2026-11-20T12:05:00Z', '2026-11-20T12:59:00Z', '2026-11-20T13:00:00Z',
    ]);
    // "Since 12:59:30" includes the whole minute 12:59, so no request after that moment is missed.
    expect((await requestUsageRepository.totals('key_d', at(12, 59, 30))).total).toBe(3);
    expect((await requestUsageRepository.totals('key_d', at(13, 1))).total).toBe(0);
  });

  it('when retention runs, then only minute rows before the cutoff go, in batches', async () => {
    await requestUsageRepository.add([
      delta({ keyId: 'key_e', minuteMs: at(1, 0).getTime() }),
      delta({ keyId: 'key_e', minuteMs: at(1, 1).getTime() }),
      delta({ keyId: 'key_e', minuteMs: at(23, 59).getTime() }),
    ]);
    const cutoff = at(2, 0);
    expect((await requestUsageRepository.totals('key_e', at(0, 0))).total).toBe(3);
    expect(await requestUsageRepository.deleteOlderThan(cutoff, 1)).toBe(1);
    expect(await requestUsageRepository.deleteOlderThan(cutoff, 5)).toBe(1);
    expect(await requestUsageRepository.deleteOlderThan(cutoff, 5)).toBe(0);
    expect((await requestUsageRepository.totals('key_e', at(0, 0))).total).toBe(1);
    expect((await requestUsageRepository.totals('key_e', cutoff)).total).toBe(1);
  });

  it('when the migration is undone, then request_logs is back (empty) and the roll-up table is gone', async () => {
    await migrator.down({ to: '0004-request-usage-rollups' });
    const [rows] = await sequelize.query('SELECT COUNT(*) AS n FROM request_logs');
    expect(Number((rows as Array<{ n: unknown }>)[0]!.n)).toBe(0);
    await expect(sequelize.query('SELECT COUNT(*) FROM request_usage_minutely')).rejects.toThrow();
    await migrator.up();
  });
});
