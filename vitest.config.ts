import { defineConfig } from 'vitest/config';

// One project per test kind (STYLE.md §8). The api suite runs twice: on the embedded SQLite store and on PostgreSQL.
// `extends: true` makes each project inherit the root options (the timeouts below), which projects otherwise do not.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'api-sqlite', include: ['test/api/**/*.test.ts'], env: { QUARRY_TEST_STORE: 'sqlite' } } },
      { extends: true, test: { name: 'api-postgres', include: ['test/api/**/*.test.ts'], env: { QUARRY_TEST_STORE: 'postgres' } } },
      { extends: true, test: { name: 'contract', include: ['test/contract/**/*.test.ts'], testTimeout: 120_000 } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 60_000 } },
    ],
  },
});
