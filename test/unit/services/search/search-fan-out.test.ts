/** selectConnections: which connections one search reads, bounded by the account's plan. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/app-error.js';
import { selectConnections } from '../../../../src/services/search/search-fan-out.js';
import { caller, record } from './fakes.js';

const everyone = Array.from({ length: 5 }, (_, i) => record(`db_${i + 1}`));
const deps = {
  connections: { listOwned: async () => everyone },
  databases: { owned: async (_userId: string, id: string) => (id === 'db_test' ? record(id, { environment: 'test' }) : record(id)) },
  upgradeUrl: 'https://example.test/upgrade',
};

describe('selectConnections', () => {
  it('when no database is named, then the newest the plan allows are read, and the answer says whether that is all', async () => {
    const free = await selectConnections(deps, caller({ plan: 'free' }), []);
    expect(free.records.map((r) => r.id)).toEqual(['db_1', 'db_2', 'db_3']);
    expect(free.all).toBe(false);
    expect((await selectConnections(deps, caller({ plan: 'pro' }), [])).all).toBe(true);
  });

  it('when more databases are named than the plan allows, then 403 TOO_MANY_DATABASES', async () => {
    await expect(selectConnections(deps, caller({ plan: 'free' }), ['a', 'b', 'c', 'd'])).rejects.toMatchObject({ code: 'TOO_MANY_DATABASES' });
  });

  it("when a database of the other environment is named, then KEY_ENVIRONMENT_MISMATCH", async () => {
    await expect(selectConnections(deps, caller(), ['db_test'])).rejects.toBeInstanceOf(AppError);
    await expect(selectConnections(deps, caller(), ['db_test'])).rejects.toMatchObject({ code: 'KEY_ENVIRONMENT_MISMATCH' });
  });

  it("when a publishable key's own list names a connection deleted since, then it is left out rather than failing", async () => {
    const selected = await selectConnections(deps, caller(), ['db_2', 'db_gone'], true);
    expect(selected.records.map((r) => r.id)).toEqual(['db_2']);
  });
});
