import { defineConfig } from 'vitest/config';

// One project per test kind (STYLE.md §8). The api suite runs twice: on the embedded SQLite store and on PostgreSQL.
// `extends: true` makes each project inherit the root options (the timeouts below), which projects otherwise do not.
/** The search core: the engine-neutral query pieces and the search service over in-memory engines (no database). */
const CORE_UNIT_TESTS = ['test/unit/search-core/**/*.test.ts', 'test/unit/services/search/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      // The search core's unit tests share one module graph per worker (no per-file isolation: none of them mocks a
      // module or keeps global state), so loading the core once, not once per file, keeps them within seconds.
      { extends: true, test: { name: 'unit-core', include: CORE_UNIT_TESTS, isolate: false } },
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: CORE_UNIT_TESTS } },
      { extends: true, test: { name: 'api-sqlite', include: ['test/api/**/*.test.ts'], env: { QUARRY_TEST_STORE: 'sqlite' } } },
      { extends: true, test: { name: 'api-postgres', include: ['test/api/**/*.test.ts'], env: { QUARRY_TEST_STORE: 'postgres' } } },
      { extends: true, test: { name: 'contract', include: ['test/contract/**/*.test.ts'], testTimeout: 120_000 } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 60_000 } },
    ],
  },
});
