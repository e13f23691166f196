/** Moved to scripts/lib (shared by tests and benchmarks); tests import it from here. */
export * from '../../scripts/lib/seed-databases.js';
