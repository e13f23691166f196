/** Moved to scripts/lib/accounts.ts (shared by tests and benchmarks); tests import it from here. */
export * from '../../scripts/lib/accounts.js';
