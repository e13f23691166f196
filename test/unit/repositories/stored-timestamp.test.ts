import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { storedTimestamp } from '../../../src/repositories/sql-helpers.js';

// Sequelize's own formatting of a DATE value, which storedTimestamp stands in for.
const dataTypes = createRequire(import.meta.url)('sequelize/lib/data-types') as Record<string, { DATE: { prototype: { stringify(d: Date, o: object): string } } }>;

describe('storedTimestamp', () => {
  it('when given a date, then the very text Sequelize writes for it on SQLite and PostgreSQL', () => {
    for (const ms of [0, 999, 1_763_800_000_000, 1_763_800_000_042, 1_763_803_599_999, 4_102_444_800_000]) {
      const date = new Date(ms);
      for (const dialect of ['sqlite', 'postgres']) {
        expect(storedTimestamp(date)).toBe(dataTypes[dialect]!.DATE.prototype.stringify(date, { timezone: '+00:00' }));
      }
    }
  });
});
